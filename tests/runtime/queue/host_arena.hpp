// host_arena.hpp: host memory posing as GPU memory for queue tests, and a doorbell that records.
//
// The arena hands out queue_memory regions with a made-up VA (high dword non-zero, so address
// splits are exercised) and translates VAs back, which is all a fake engine needs.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "runtime/queue/doorbell.hpp"
#include "runtime/queue/queue_memory.hpp"

namespace tg::test {

class host_arena {
 public:
  static constexpr std::uint64_t default_base = 0x0000'0012'3400'0000;

  explicit host_arena(std::size_t bytes, memory::gpu_va base = memory::gpu_va{default_base})
      : bytes_(bytes), base_(base), data_(static_cast<std::byte*>(std::aligned_alloc(4096, bytes))) {
    if (!data_) throw std::bad_alloc();
    std::fill_n(data_.get(), bytes, std::byte{0xCD});  // not zero: code must not rely on zeroed memory
  }

  // The next `bytes` bytes, `align`-aligned in both views.
  queue::queue_memory carve(std::size_t bytes, std::size_t align = 256) {
    used_ = (used_ + align - 1) / align * align;
    if (used_ + bytes > bytes_) throw std::bad_alloc();
    queue::queue_memory m{{data_.get() + used_, bytes}, base_ + used_};
    used_ += bytes;
    return m;
  }

  // Host address of [va, va + bytes), or nullptr when not inside the arena.
  std::byte* at(memory::gpu_va va, std::size_t bytes) const {
    if (va.value < base_.value || va.value - base_.value + bytes > bytes_) return nullptr;
    return data_.get() + (va.value - base_.value);
  }

 private:
  struct free_deleter {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::size_t bytes_;
  memory::gpu_va base_;
  std::unique_ptr<std::byte, free_deleter> data_;
  std::size_t used_ = 0;
};

struct recording_doorbell : queue::doorbell {
  std::atomic<std::uint64_t> last{0};
  std::atomic<std::uint64_t> writes{0};
  void write64(std::uint64_t value) override {
    last.store(value, std::memory_order_release);
    writes.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace tg::test
