// bridge_config.hpp: what the emulated ASM2464 bridge is told (identity, modelled limits) and
// what it counts (stats), kept apart from the bridge so tests and benchmarks can name them.
//
// The limits are the real bridge's, on by default (tinygrad/runtime/support/usb.py; tinygrad/runtime/support/am/amdev.pyppendix C):
//   - 0xF0 streaming PCIe writes move ~3.6 MB/s (seed 002's measurement);
//   - the 0xF2 SRAM path moves ~300 MB/s (the 294-323 MB/s copy-in of tinygrad/runtime/support/usb.py);
//   - a transfer whose modelled duration exceeds the caller's timeout times out, having moved
//     what the model moves in that time;
//   - one 0xF0 streaming write larger than wedge_stream_bytes wedges the firmware.
// Time is virtual by default (accounted, never slept, so tests are fast) or real (slept, so a
// copy benchmark sees the modelled throughput on the wall clock).
//
//   tg::emu::usb::bridge_config cfg;
//   cfg.limits.time = tg::emu::usb::time_mode::real;
//   tg::emu::usb::emu_bridge bridge(gpu, cfg);
//   double fraction = measured_bytes_per_s / bridge.limits().sram_bytes_per_s;
//
// Plain values; no thread-safety of their own.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "drivers/emu/pci/pci_config_space.hpp"

namespace tg::emu::usb {

enum class time_mode {
  virtual_time,  // durations are added to stats().modelled_time; nothing sleeps
  real,          // the bridge also sleeps them, paced against the wall clock
};

struct bridge_limits {
  bool enabled = true;  // false: every transfer is instant, nothing times out or wedges
  time_mode time = time_mode::virtual_time;
  double stream_write_bytes_per_s = 3.6e6;  // 0xF0 mode 1 + bulk OUT (seed 002, tinygrad/runtime/support/usb.py)
  // 0xF0 mode 2 + bulk IN: not measured anywhere (tinygrad/runtime/support/usb.py); a read TLP waits for its
  // completion, so assume no faster than the write path.
  double stream_read_bytes_per_s = 3.6e6;
  double sram_bytes_per_s = 300e6;  // 0xF2 + bulk OUT / IN (tinygrad/runtime/support/usb.py: 294-323 MB/s copy-in)
  // Each USB request (control or bulk) costs this much on top of its bytes: a USB 3 bus
  // round trip. An assumption, not a measurement; 0 turns it off.
  std::chrono::nanoseconds request_latency{std::chrono::microseconds(20)};
  // 0xF0 PCIe link training after 0xF3(1) (no number in the facts; well under its 10 s timeout).
  std::chrono::nanoseconds link_training{std::chrono::milliseconds(20)};
  // The largest single 0xF0 streaming write the firmware survives. Facts 7.12/9.3: 4 MiB wedges
  // the bridge, and the cause is unknown (a 20-bit dword counter would overflow at exactly
  // 4 MiB); 1 MiB streams (the SDMA ring) are believed fine. We take the safe end, 1 MiB:
  // a driver that stays at or under it here stays clear of the real limit.
  std::uint64_t wedge_stream_bytes = 1ull << 20;
};

struct bridge_config {
  std::uint8_t bus = 1, address = 2;  // usb:<bus>-<address>
  std::uint16_t vendor_id = 0xADD1, product_id = 0x0001;  // custom firmware (tinygrad/runtime/support/usb.py)
  std::string product = "custom ASM2464 (tg emulator)";   // iProduct 2; must start "custom"
  bool kernel_driver_attached = false;  // what kernel_driver_active(0) reports until detached
  bool link_trains = true;  // false: 0xF3(1) powers the PHY but the link never reaches L0
  // Config TLPs to buses 1..4 are forwarded only through bridges whose secondary/subordinate
  // bus numbers cover them, as on hardware (tinygrad/runtime/support/usb.py; tinygrad/runtime/support/am/amdev.py programs them first).
  bool route_config_by_bus_numbers = true;
  // The GPU function on bus 4; by default derived from the gpu (VRAM size, device id by gen).
  std::optional<pci_function_config> gpu_function;
  bridge_limits limits{};
};

// Standard USB setup calls the host made, as libusb would have sent them.
struct usb_setup_record {
  int configuration = -1;  // last set_configuration
  int claimed_interface = -1;
  int alt_setting = -1;
  int kernel_driver_detaches = 0;
};

struct bridge_stats {
  // Requests by type (a request counts once, when the bridge takes it; a timed-out request on a
  // wedged bridge counts only in `timeouts`).
  std::uint64_t get_descriptor = 0;
  std::uint64_t xdata_reads = 0, xdata_writes = 0;           // 0xE4, 0xE5
  std::uint64_t single_tlps = 0, completions = 0;            // 0xF0 OUT mode 0, 0xF0 IN
  std::uint64_t stream_write_arms = 0, stream_read_arms = 0;  // 0xF0 OUT mode 1, mode 2
  std::uint64_t sram_write_arms = 0, sram_read_arms = 0;      // 0xF2
  std::uint64_t power_requests = 0;                           // 0xF3
  std::uint64_t bulk_out = 0, bulk_in = 0;
  // Bytes by path.
  std::uint64_t stream_write_bytes = 0, stream_read_bytes = 0;  // through 0xF0 streams
  std::uint64_t sram_write_bytes = 0, sram_read_bytes = 0;      // through 0xF2
  std::uint64_t xdata_read_bytes = 0, xdata_write_bytes = 0;    // through 0xE4 / 0xE5
  std::uint64_t gpu_read_bytes = 0, gpu_write_bytes = 0;        // the GPU's system_bus accesses
  std::uint64_t gpu_sram_write_bytes = 0;  // of gpu_write_bytes, into the SRAM data area the host streams to
  // Largest single transfers.
  std::uint64_t largest_bulk_out = 0, largest_bulk_in = 0;
  std::uint64_t largest_stream_write = 0, largest_stream_read = 0;  // 0xF0 arms, in bytes
  // What went wrong.
  std::uint64_t errors = 0;                // stalled requests: size mismatch, nothing armed, bad fields
  std::uint64_t timeouts = 0;              // requests answered with usb_status::timeout
  std::uint64_t unsupported_requests = 0;  // TLPs completed with Unsupported Request (memory or config)
  std::uint64_t dropped_writes = 0;        // memory-write dwords nothing decoded
  std::uint64_t releases = 0;              // GPU writes to cq_buf + 12
  std::uint64_t wedges = 0, resets = 0;
  std::chrono::nanoseconds modelled_time{0};  // all modelled transfer time so far
  usb_setup_record setup;
};

}  // namespace tg::emu::usb
