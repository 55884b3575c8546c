// emu_bridge.hpp: an emulated ASM2464 USB-to-PCIe bridge with the custom firmware, in front of an
// emulated GPU: a transport::usb::usb_backend that the USB transport uses instead of libusb, and
// the GPU's system_bus for the bridge's SRAM windows (tinygrad/runtime/support/usb.py; tinygrad's mock GPU (test/mockgpu/amd)).
//
// What it models beyond the reference's mock (tinygrad's mock GPU (test/mockgpu/amd)): the bridge's bandwidths and the
// caller's timeouts (bridge_config.hpp), link training, config routing through the bridge
// ports' bus numbers, the armed SRAM read released by a GPU write to cq_buf + 12, and the
// wedge of seed 002 (an over-limit 0xF0 stream, or abandon_mid_stream()) that only a USB reset
// clears. What happens inside is in bridge_firmware.hpp (requests), pcie_fabric.hpp (TLPs) and
// sram_windows.hpp (memory both sides reach).
//
//   tg::emu::gpu g({.vram_bytes = 64 << 20});
//   tg::emu::usb::emu_bridge bridge(g);                   // attaches itself as g's system bus
//   std::unique_ptr<tg::transport::usb::usb_handle> h = bridge.open(bridge.list().front());
//   std::byte ltssm[1];
//   h->control(0x40, 0xF3, 1, 0, {}, 10000ms);            // PCIe power on
//   h->control(0xC0, 0xE4, 0xB450, 0, ltssm, 1000ms);     // ltssm[0] == std::byte{0x78}
//   bridge.stats().modelled_time;                          // what it would have taken
//
// Thread-safety: handles may be used from several threads (each call is serialised under the
// bridge's host lock); the GPU's worker calls read()/write() under the gpu's lock, and those take
// only sram_windows' own lock, never the host lock, so host calls may call into the gpu while
// holding the host lock. An armed SRAM read waits for its release holding neither. The gpu must
// outlive the bridge, and the bridge its handles and their transfers.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "drivers/emu/gpu.hpp"
#include "drivers/emu/system_bus.hpp"
#include "drivers/emu/usb/bridge_config.hpp"
#include "drivers/emu/usb/bridge_firmware.hpp"
#include "drivers/emu/usb/sram_windows.hpp"
#include "runtime/transport/usb/usb_backend.hpp"

namespace tg::emu::usb {

using transport::usb::async_transfer;
using transport::usb::usb_device_info;
using transport::usb::usb_handle;

class emu_bridge final : public transport::usb::usb_backend, public emu::system_bus {
 public:
  explicit emu_bridge(gpu& g, const bridge_config& config = {});
  ~emu_bridge() override;  // detaches from the gpu
  emu_bridge(const emu_bridge&) = delete;
  emu_bridge& operator=(const emu_bridge&) = delete;

  // ---- usb_backend: the one bridge, at usb:<bus>-<address>; open() of anything else is a
  // device_error naming both.
  std::vector<usb_device_info> list() override;
  std::unique_ptr<usb_handle> open(const usb_device_info& device) override;

  // ---- system_bus: the GPU's accesses to the SRAM windows (device_error outside them).
  void read(std::uint64_t bus_address, std::span<std::byte> out) override;
  void write(std::uint64_t bus_address, std::span<const std::byte> in) override;

  // ---- for tests and benchmarks
  // Leaves the bridge as a crashed process would: a 0xF0 streaming write armed whose bulk OUT
  // never came; every request times out until a handle's reset_device().
  void abandon_mid_stream();
  bool wedged() const;
  bridge_stats stats() const;
  const bridge_limits& limits() const { return config_.limits; }  // the modelled bandwidths
  const bridge_config& config() const { return config_; }

 private:
  class handle;
  class pending_sram_read;

  transfer_result control(const setup_packet& setup, std::span<std::byte> data, milliseconds timeout);
  std::unique_ptr<async_transfer> submit_bulk(std::uint8_t endpoint, std::span<std::byte> data,
                                              milliseconds timeout);
  transfer_result finish_sram_read(const sram_read_claim& claim, std::span<std::byte> data, milliseconds timeout,
                                   std::chrono::steady_clock::time_point start);

  gpu& gpu_;
  bridge_config config_;
  sram_windows windows_;
  mutable std::mutex host_mutex_;  // serialises host requests; never taken by read()/write()
  bridge_firmware firmware_;       // guarded by host_mutex_
  bool kernel_driver_attached_;    // guarded by host_mutex_
};

}  // namespace tg::emu::usb
