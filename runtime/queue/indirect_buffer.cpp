// indirect_buffer.cpp: IB upload, patching and the reuse protocol (see indirect_buffer.hpp).
#include "runtime/queue/indirect_buffer.hpp"

#include <utility>

#include "runtime/queue/pm4.hpp"
#include "runtime/queue/queue_compute.hpp"

namespace tg::queue {

indirect_buffer::indirect_buffer(std::string name, queue_memory memory, std::span<const std::uint32_t> commands)
    : name_(std::move(name)), memory_(std::move(memory)), command_dwords_(std::uint32_t(commands.size())) {
  if (commands.empty() || commands.size() > pm4::max_ib_dwords)
    throw usage_error(str("ib ", name_, ": ", commands.size(), " dwords of commands; an IB holds 1..",
                          pm4::max_ib_dwords));
  if (commands.size_bytes() > memory_.size_bytes())
    throw usage_error(str("ib ", name_, ": ", commands.size_bytes(), " bytes of commands do not fit its ",
                          memory_.size_bytes(), "-byte memory"));
  if (!memory_.va.is_aligned(4) || reinterpret_cast<std::uintptr_t>(memory_.host_view.data()) % 4 != 0)
    throw usage_error(str("ib ", name_, ": memory at va ", memory_.va, " is not 4-byte aligned"));
  write_dwords(memory_, 0, commands);
}

bool indirect_buffer::is_idle() const { return last_queue_ == nullptr || last_queue_->is_complete(last_); }

void indirect_buffer::wait_idle(std::chrono::milliseconds timeout) {
  if (last_queue_ != nullptr) last_queue_->wait(last_, timeout);
}

void indirect_buffer::require_patchable(std::size_t dword, std::size_t count) const {
  if (dword > size_dwords() || count > size_dwords() - dword)
    throw usage_error(str("ib ", name_, ": patch of dwords [", dword, ", ", dword + count, ") is outside its ",
                          size_dwords(), " dwords"));
  if (!is_idle())
    throw usage_error(str("ib ", name_, ": patch of dword ", dword, " while queue ", last_queue_->name(),
                          " may still read it (submission ", last_.value, " not complete); call wait_idle() first"));
}

void indirect_buffer::patch(std::size_t dword, std::uint32_t value) {
  require_patchable(dword, 1);
  write_dwords(memory_, 4 * dword, std::span(&value, 1));
}

void indirect_buffer::patch64(std::size_t dword, std::uint64_t value) {
  require_patchable(dword, 2);
  const std::uint32_t words[] = {std::uint32_t(value), std::uint32_t(value >> 32)};
  write_dwords(memory_, 4 * dword, words);
}

void indirect_buffer::patch_words(std::size_t dword, std::span<const std::uint32_t> words) {
  require_patchable(dword, words.size());
  write_dwords(memory_, 4 * dword, words);
}

std::uint32_t indirect_buffer::read(std::size_t dword) const {
  if (dword >= size_dwords())
    throw usage_error(str("ib ", name_, ": read of dword ", dword, " is outside its ", size_dwords(), " dwords"));
  return read_dword(memory_, 4 * dword);
}

void indirect_buffer::mark_submitted(queue_compute& queue, submission s) {
  last_queue_ = &queue;
  last_ = s;
}

}  // namespace tg::queue
