// queue_memory.hpp: memory the CPU writes and a GPU engine reads: rings, IBs, signals, pointers.
//
// The same bytes seen twice: `host_view` is the CPU's mapping (host RAM in tests, a BAR window on
// PCI, the emulator's VRAM array) and `va` is where the engine sees them (VMID 0). Rings, indirect
// buffers and signals are all built on this, so tests run them on host memory with a software
// consumer and the driver runs them on real mappings without change.
//
//   std::vector<std::byte> bytes(4096);
//   tg::queue::queue_memory ring{bytes, tg::memory::gpu_va{0x1'0000'0000}};
//   tg::queue::queue_memory rptr = ring.slice(128, 8);
//
// Without a CPU mapping (USB: every VRAM access is a bridge message, tinygrad/runtime/support/usb.py:
// USBMMIOInterface) the host view is a shadow in host RAM and `mirror` carries it to and from the
// device: the accessors below push after writing the shadow and pull before reading it. A null
// mirror is the direct mapping and costs nothing.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include <tg/core/error.hpp>

#include "runtime/queue/cmd_buffer.hpp"

namespace tg::queue {

// Carries bytes of a host shadow to the device copy and back. `host_bytes` always lies inside the
// shadow the mirror was made for, so an implementation finds the device location from the pointer
// (host_bytes.data() - shadow start). Called from the submitting thread only.
class memory_mirror {
 public:
  virtual ~memory_mirror() = default;
  virtual void push(std::span<const std::byte> host_bytes) = 0;  // shadow -> device
  virtual void pull(std::span<std::byte> host_bytes) = 0;         // device -> shadow
};

struct queue_memory {
  std::span<std::byte> host_view;
  gpu_va va;
  memory_mirror* mirror = nullptr;  // not owned; null: host_view is the device memory itself

  std::size_t size_bytes() const { return host_view.size(); }

  // `bytes` bytes from `offset`, in both views.
  queue_memory slice(std::size_t offset, std::size_t bytes) const {
    if (offset > host_view.size() || bytes > host_view.size() - offset)
      throw usage_error(str("queue memory: slice [", offset, ", ", offset + bytes, ") is outside the ",
                            host_view.size(), " bytes at va ", va));
    return {host_view.subspan(offset, bytes), va + offset, mirror};
  }
};

// A 64-bit word the engine and the host share (pointers, signal values) is accessed atomically, so
// neither side ever sees half of an update. Its host address must be 8-byte aligned; check once
// with require_word64 where the word is set up.
inline void require_word64(const queue_memory& m, std::size_t offset, const char* what) {
  if (offset > m.size_bytes() || m.size_bytes() - offset < 8)
    throw usage_error(str(what, ": needs 8 bytes at offset ", offset, " of a ", m.size_bytes(), "-byte memory"));
  auto host = reinterpret_cast<std::uintptr_t>(m.host_view.data() + offset);
  if (host % std::atomic_ref<std::uint64_t>::required_alignment != 0 || !(m.va + offset).is_aligned(8))
    throw usage_error(str(what, ": the 64-bit word at va ", m.va + offset, " (host ", hex{host},
                          ") is not 8-byte aligned in both views"));
}

inline std::atomic_ref<std::uint64_t> word64(const queue_memory& m, std::size_t offset) {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(m.host_view.data() + offset));
}

// Acquire: whatever the engine wrote before this word (e.g. before a signal) is visible after.
inline std::uint64_t load64(const queue_memory& m, std::size_t offset) {
  if (m.mirror) m.mirror->pull(m.host_view.subspan(offset, 8));
  return word64(m, offset).load(std::memory_order_acquire);
}

// Release: whatever the host wrote before is visible to a reader that sees this word.
inline void store64(const queue_memory& m, std::size_t offset, std::uint64_t value) {
  word64(m, offset).store(value, std::memory_order_release);
  if (m.mirror) m.mirror->push(m.host_view.subspan(offset, 8));
}

// Plain (non-atomic) dword copies: ring and IB contents. Ordering against the engine comes from
// the fence and release store that publish them (ring.hpp) or from the signal that says the engine
// is done with them (indirect_buffer.hpp).
inline void write_dwords(const queue_memory& m, std::size_t offset, std::span<const std::uint32_t> words) {
  if (words.empty()) return;  // an empty span may have a null data(), which memcpy must not get
  std::memcpy(m.host_view.data() + offset, words.data(), words.size_bytes());
  if (m.mirror) m.mirror->push(m.host_view.subspan(offset, words.size_bytes()));
}

inline void zero_bytes(const queue_memory& m, std::size_t offset, std::size_t bytes) {
  if (bytes == 0) return;
  std::memset(m.host_view.data() + offset, 0, bytes);
  if (m.mirror) m.mirror->push(m.host_view.subspan(offset, bytes));
}

inline std::uint32_t read_dword(const queue_memory& m, std::size_t offset) {
  std::uint32_t word;
  if (m.mirror) m.mirror->pull(m.host_view.subspan(offset, 4));
  std::memcpy(&word, m.host_view.data() + offset, 4);
  return word;
}

}  // namespace tg::queue
