// bridge_firmware.hpp: the ASM2464's custom firmware as the host sees it over USB (tinygrad/runtime/support/usb.py-7.4,
// 7.6, 7.10): EP0 requests (standard descriptors and the vendor requests 0xE4, 0xE5, 0xF0,
// 0xF2, 0xF3) and the data phases on bulk OUT 0x02 / bulk IN 0x81 that 0xF0 and 0xF2 arm.
//
// Armed state: at most one 0xF0 stream (write or read) and one 0xF2 SRAM transfer at a time; a
// new arm of the same kind replaces the old one. A bulk OUT feeds the 0xF0 write if one is
// armed, else the 0xF2 write; a bulk IN takes the 0xF0 read if one is armed, else the 0xF2 read
// (so register reads may happen between arming an SRAM read and collecting it, as copy-out does).
// The data phase must match the armed size exactly, or it stalls and the arm is dropped. A data
// phase that times out has moved what the model moves in the timeout, and the arm is dropped.
//
// Wedged (an over-limit 0xF0 write, or abandon_mid_stream()): every request, standard ones
// included, times out until usb_reset(). A USB reset clears the wedge and every armed transfer,
// but keeps PCIe state, XDATA and SRAM: a port reset re-enumerates the USB side, it does not
// power-cycle the GPU or the bridge's memories (our choice; the facts say nothing either way).
//
//   bridge_firmware fw(config, gpu, windows);
//   fw.control({0x40, 0xF3, 1, 0}, {}, 10000ms);       // PCIe power on
//   auto r = fw.bulk_in(buffer, 1000ms);                // a transfer_result, or an SRAM read claim
//
// Not thread-safe: emu_bridge serialises calls under its host lock, and waits for an SRAM read's
// release (sram_windows) between bulk_in() and finish_sram_read() without that lock.
#pragma once
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <variant>

#include "drivers/emu/gpu.hpp"
#include "drivers/emu/usb/bridge_config.hpp"
#include "drivers/emu/usb/link_clock.hpp"
#include "drivers/emu/usb/pcie_fabric.hpp"
#include "drivers/emu/usb/sram_windows.hpp"
#include "runtime/transport/usb/usb_backend.hpp"

namespace tg::emu::usb {

using transport::usb::transfer_result;
using transport::usb::usb_status;
using std::chrono::milliseconds;

struct setup_packet {
  std::uint8_t request_type = 0, request = 0;
  std::uint16_t value = 0, index = 0;
};

// An armed SRAM read that a bulk IN took: the caller waits for the GPU's release, then finishes.
struct sram_read_claim {
  std::uint64_t offset = 0, bytes = 0;
  std::uint64_t releases_at_arm = 0;  // sram_windows::releases() when 0xF2 armed it
  std::uint64_t cancels_at_claim = 0;
};

class bridge_firmware {
 public:
  bridge_firmware(const bridge_config& config, gpu& g, sram_windows& windows);

  transfer_result control(const setup_packet& setup, std::span<std::byte> data, milliseconds timeout);
  transfer_result bulk_out(std::span<const std::byte> data, milliseconds timeout);
  std::variant<transfer_result, sram_read_claim> bulk_in(std::span<std::byte> data, milliseconds timeout);
  // After the wait: `waited` is the wall time since the bulk IN began.
  transfer_result finish_sram_read(const sram_read_claim& claim, release_wait outcome,
                                   std::chrono::nanoseconds waited, std::span<std::byte> data,
                                   milliseconds timeout);

  // Standard requests libusb sends for the setup calls (SET_CONFIGURATION, SET_INTERFACE).
  usb_status set_configuration(int configuration);
  usb_status set_interface_alt_setting(int interface, int alt_setting);
  usb_setup_record& setup_record() { return stats_.setup; }

  void usb_reset();
  void abandon_mid_stream();
  bool wedged() const { return wedged_; }
  bridge_stats stats() const;
  const bridge_limits& limits() const { return config_.limits; }
  const pci_config_space& gpu_config() const { return fabric_.gpu_config(); }

 private:
  struct stream_arm {
    bool write;
    std::uint64_t address, bytes;
  };
  struct sram_arm {
    bool read;
    std::uint64_t offset, bytes, releases_at_arm;
  };

  // ---- EP0 (bridge_firmware.cpp)
  transfer_result get_descriptor(const setup_packet& s, std::span<std::byte> data);
  transfer_result vendor_request(const setup_packet& s, std::span<std::byte> data);
  transfer_result read_xdata(std::uint16_t address, std::span<std::byte> data);
  transfer_result write_xdata(std::uint16_t address, std::uint8_t value);
  transfer_result power_pcie(std::uint16_t value);
  transfer_result issue_tlp(const setup_packet& s, std::span<std::byte> data);
  transfer_result fetch_completion(std::span<std::byte> data);
  transfer_result arm_sram(std::uint16_t value, std::uint16_t index);
  void single_tlp(std::uint8_t fmt_type, std::uint8_t byte_enable, std::uint64_t address, std::uint32_t value);
  void complete(const tlp_completion& c);
  std::uint8_t ltssm() const;

  // ---- data phases and failure states (bridge_firmware_data.cpp)
  transfer_result stream_write(const stream_arm& arm, std::span<const std::byte> data, milliseconds timeout);
  transfer_result stream_read(const stream_arm& arm, std::span<std::byte> data, milliseconds timeout);
  transfer_result sram_write(const sram_arm& arm, std::span<const std::byte> data, milliseconds timeout);
  transfer_result wedge(std::uint64_t bytes, milliseconds timeout);
  transfer_result ok(std::size_t transferred);   // a control request done: its latency spent
  transfer_result stall();                       // a request the firmware refused
  transfer_result time_out(milliseconds timeout);  // a wedged firmware never answers

  bridge_config config_;
  sram_windows& windows_;
  pcie_fabric fabric_;
  link_clock clock_;
  std::array<std::uint8_t, 0x10000> xram_{};  // XDATA outside the windows
  bool pcie_powered_ = false;                  // the custom firmware boots with PCIe off (tinygrad/runtime/support/usb.py)
  std::array<std::byte, 8> completion_{};      // what the next 0xF0 IN returns
  std::optional<stream_arm> stream_;
  std::optional<sram_arm> sram_;
  bool wedged_ = false;
  bridge_stats stats_;
};

}  // namespace tg::emu::usb
