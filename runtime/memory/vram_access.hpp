// vram_access.hpp: how the memory code reads and writes 64-bit words of VRAM (page tables live there).
//
// The driver implements this over a BAR window (PCI), the USB bridge, or the emulator's memory;
// tests use host_vram. Addresses are VRAM offsets (gpu_pa). Words are little-endian, as the GPU
// reads them.
#pragma once
#include <cstdint>
#include <span>

#include "runtime/memory/address.hpp"

namespace tg::memory {

class vram_access {
 public:
  virtual ~vram_access() = default;

  virtual std::uint64_t read64(gpu_pa at) = 0;
  virtual void write64(gpu_pa at, std::uint64_t word) = 0;

  // Consecutive words. The page-table code always writes a run of entries (or a whole new table)
  // with one call, so a transport where each access is a round trip (USB: a control plus a bulk
  // transfer, tinygrad/runtime/support/usb.py: CustomASM24Controller.pcie_mem_write) can override
  // these with one burst.
  virtual void write_words(gpu_pa first, std::span<const std::uint64_t> words) {
    for (std::size_t i = 0; i < words.size(); ++i) write64(first + 8 * i, words[i]);
  }
  virtual void read_words(gpu_pa first, std::span<std::uint64_t> words) {
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = read64(first + 8 * i);
  }
};

}  // namespace tg::memory
