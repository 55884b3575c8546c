// vram.cpp: bounds-checked VRAM access over the memfd mapping (see vram.hpp).
#include "drivers/emu/vram.hpp"

#include <atomic>
#include <cstring>

#include <tg/core/error.hpp>

namespace tg::emu {

namespace {

template <class T>
std::atomic_ref<T> word_at(std::byte* p) {
  return std::atomic_ref<T>(*reinterpret_cast<T*>(p));
}

}  // namespace

vram::vram(std::uint64_t size_bytes) : mem_("tg-emu-vram", size_bytes) {
  if (size_bytes % 4096 != 0) throw usage_error(str("emu: VRAM of ", size_bytes, " bytes is not a multiple of 4 KiB"));
}

void vram::check(gpu_pa first, std::uint64_t bytes, std::uint64_t align, const char* what) const {
  if (!contains(first, bytes))
    throw usage_error(str("emu vram: ", what, " of ", bytes, " bytes at ", first, " leaves VRAM [0, ",
                          hex{size_bytes()}, ")"));
  if (first.value % align != 0)
    throw usage_error(str("emu vram: ", what, " at ", first, " is not ", align, "-byte aligned"));
}

std::byte* vram::at(gpu_pa first, std::uint64_t bytes) {
  check(first, bytes, 1, "access");
  return data() + first.value;
}

void vram::read(gpu_pa first, std::span<std::byte> out) {
  check(first, out.size(), 1, "read");
  std::memcpy(out.data(), data() + first.value, out.size());
}

void vram::write(gpu_pa first, std::span<const std::byte> in) {
  check(first, in.size(), 1, "write");
  std::memcpy(data() + first.value, in.data(), in.size());
}

std::uint32_t vram::load32(gpu_pa at) {
  check(at, 4, 4, "32-bit load");
  return word_at<std::uint32_t>(data() + at.value).load(std::memory_order_acquire);
}

void vram::store32(gpu_pa at, std::uint32_t value) {
  check(at, 4, 4, "32-bit store");
  word_at<std::uint32_t>(data() + at.value).store(value, std::memory_order_release);
}

std::uint64_t vram::load64(gpu_pa at) {
  check(at, 8, 8, "64-bit load");
  return word_at<std::uint64_t>(data() + at.value).load(std::memory_order_acquire);
}

void vram::store64(gpu_pa at, std::uint64_t value) {
  check(at, 8, 8, "64-bit store");
  word_at<std::uint64_t>(data() + at.value).store(value, std::memory_order_release);
}

void vram::read_words(gpu_pa first, std::span<std::uint64_t> words) {
  check(first, 8 * words.size(), 8, "word read");
  for (std::size_t i = 0; i < words.size(); ++i)
    words[i] = word_at<std::uint64_t>(data() + first.value + 8 * i).load(std::memory_order_acquire);
}

void vram::write_words(gpu_pa first, std::span<const std::uint64_t> words) {
  check(first, 8 * words.size(), 8, "word write");
  for (std::size_t i = 0; i < words.size(); ++i)
    word_at<std::uint64_t>(data() + first.value + 8 * i).store(words[i], std::memory_order_release);
}

}  // namespace tg::emu
