// emu_register_bar.hpp: the emulated GPU's register BARs as a transport::bar_window: BAR2
// (doorbells) routed to gpu::write_doorbell64 / read_doorbell64 and BAR5 (MMIO) routed to
// gpu::mmio_read32 / mmio_write32, so every access reaches the GPU's model at once (a doorbell
// wakes its worker; a register write runs its side effect). No CPU mapping: mapping() is nullptr.
//
//   tg::emu::emu_register_bar mmio(g, tg::emu::emu_register_bar::kind::mmio, 2 << 20, "emu pci:0000:c3:00.0 BAR5");
//   std::uint32_t memsize = mmio.read32(0xDE3 * 4);
//
// Thread-safe as the gpu is. The gpu must outlive the window.
#pragma once
#include <string>

#include "drivers/emu/gpu.hpp"
#include "runtime/transport/transport.hpp"

namespace tg::emu {

class emu_register_bar final : public transport::bar_window {
 public:
  enum class kind { doorbell, mmio };
  emu_register_bar(gpu& g, kind k, std::uint64_t size, std::string what)
      : gpu_(g), kind_(k), size_(size), what_(std::move(what)) {}

  std::uint64_t size() const override { return size_; }
  std::uint32_t read32(std::uint64_t offset) override;
  void write32(std::uint64_t offset, std::uint32_t value) override;
  void write64(std::uint64_t offset, std::uint64_t value) override;
  void read(std::uint64_t offset, std::span<std::byte> out) override;
  void write(std::uint64_t offset, std::span<const std::byte> in) override;

 private:
  gpu& gpu_;
  kind kind_;
  std::uint64_t size_;
  std::string what_;
};

}  // namespace tg::emu
