// vram.hpp: the emulated GPU's VRAM (BAR0): host memory in a memfd, and a memory::vram_access over it.
//
// Addresses are VRAM offsets (gpu_pa), 0 = start of the framebuffer. fd() is the memfd, so a
// transport can map the same pages as the BAR a driver mmaps; data() is the emulator's own view.
// Aligned 32- and 64-bit loads and stores are single-copy atomic (acquire / release), like the
// dword writes of PCIe: a host thread may poll a signal that the engines write from their worker
// thread. Bulk reads and writes are plain copies; ordering them is the queue protocol's job (a
// doorbell after the ring writes, a signal after the data), as on hardware.
//
//   tg::emu::vram v(64 << 20);
//   v.store64({0x1000}, 42);
//   tg::memory::page_table pt(gen, va_base, va_size, pool, v, tlb);  // page tables live in it
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "drivers/emu/memfd_mapping.hpp"
#include "runtime/memory/vram_access.hpp"

namespace tg::emu {

using memory::gpu_pa;

class vram final : public memory::vram_access {
 public:
  explicit vram(std::uint64_t size_bytes);  // a multiple of 4 KiB

  std::uint64_t size_bytes() const { return mem_.size_bytes(); }
  int fd() const { return mem_.fd(); }
  std::byte* data() { return mem_.data(); }

  bool contains(gpu_pa first, std::uint64_t bytes) const {
    return first.value <= size_bytes() && bytes <= size_bytes() - first.value;
  }
  // The host pointer to [first, first + bytes); usage_error when that leaves VRAM.
  std::byte* at(gpu_pa first, std::uint64_t bytes);

  void read(gpu_pa first, std::span<std::byte> out);
  void write(gpu_pa first, std::span<const std::byte> in);

  std::uint32_t load32(gpu_pa at);  // 4-byte aligned
  void store32(gpu_pa at, std::uint32_t value);
  std::uint64_t load64(gpu_pa at);  // 8-byte aligned
  void store64(gpu_pa at, std::uint64_t value);

  // memory::vram_access: one atomic access per word, so the MMU may walk tables while the
  // driver writes them (the result is then stale or new, never torn).
  std::uint64_t read64(gpu_pa at) override { return load64(at); }
  void write64(gpu_pa at, std::uint64_t word) override { store64(at, word); }
  void read_words(gpu_pa first, std::span<std::uint64_t> words) override;
  void write_words(gpu_pa first, std::span<const std::uint64_t> words) override;

 private:
  void check(gpu_pa first, std::uint64_t bytes, std::uint64_t align, const char* what) const;

  memfd_mapping mem_;
};

}  // namespace tg::emu
