// fake_bridge.hpp: a scripted ASM2464 for the USB transport's tests: a usb_backend / usb_handle
// pair that records every request and answers from a small model of the bridge (XDATA bytes, the
// SRAM, config spaces of bridge buses 0..3 and a GPU on bus 4 with BARs and a ReBAR capability,
// PCIe memory as sparse bytes), plus knobs that make it fail the way real bridges do.
// Written from tinygrad's usb.py and System.pci_setup_usb_bars independently of the code under test.
//
//   fake_bridge bridge;
//   fake_backend backend(bridge);
//   auto dev = open_usb_device(backend, backend.list().front());
//   CHECK(bridge.log.back().request == 0xF0);
//
// Not thread-safe.
#pragma once
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/transport/usb/usb_backend.hpp"
#include "runtime/transport/usb/usb_device.hpp"

namespace tg::transport::usb::testing {

struct usb_record {
  enum kind_t { control, bulk } kind;
  std::uint8_t request_type = 0, request = 0;
  std::uint16_t value = 0, index = 0;
  std::uint8_t endpoint = 0;
  std::size_t size = 0;
  std::vector<std::byte> out;  // the data of an OUT transfer
  std::chrono::milliseconds timeout{0};
};

struct fake_bar {
  std::uint64_t size = 0;   // 0: not implemented
  std::uint32_t type = 0;   // low bits: 1 = I/O, 4 = 64-bit, 8 = prefetchable
  std::uint64_t value = 0;  // what the register pair holds
};

class fake_bridge {
 public:
  fake_bridge();

  // --- model ---
  std::array<std::uint8_t, 0x10000> xdata{};
  std::vector<std::byte> sram = std::vector<std::byte>(512 * 1024);
  std::map<unsigned, std::array<std::uint8_t, 4096>> config;  // by bus
  std::array<fake_bar, 6> bars{};                             // the GPU's, sized by the model
  std::map<std::uint64_t, std::byte> memory;                  // PCIe memory the streams reach
  std::string product = "custom-v2";
  std::uint8_t ltssm_after_power = 0x78;

  // --- failure knobs ---
  int descriptor_timeouts = 0;         // GET_DESCRIPTOR times out this many times (-1: always)
  int tlp_return_failures = 0;         // completions with return status 1 before a good one
  unsigned completion_status = 0;      // bits 7:5 of byte 4 in every completion
  usb_status bulk_out_status = usb_status::ok;  // forced outcome of every bulk OUT
  bool kernel_driver = false;

  // --- what happened ---
  std::vector<usb_record> log;
  std::vector<std::string> setup;      // "reset", "set_configuration 1", ...
  int resets = 0;

  // Config writes in order: {bus, register, size, value} (for golden checks).
  struct config_write_record {
    unsigned bus, reg, size;
    std::uint32_t value;
    bool operator==(const config_write_record&) const = default;
  };
  std::vector<config_write_record> config_writes;

  transfer_result control(std::uint8_t rt, std::uint8_t req, std::uint16_t value, std::uint16_t index,
                          std::span<std::byte> data, std::chrono::milliseconds timeout);
  transfer_result bulk(std::uint8_t endpoint, std::span<std::byte> data, std::chrono::milliseconds timeout);

  std::uint32_t config32(unsigned bus, unsigned reg) const;
  void set_config32(unsigned bus, unsigned reg, std::uint32_t v);

 private:
  transfer_result get_descriptor(std::uint16_t index_value, std::span<std::byte> data);
  transfer_result tlp_out(std::uint16_t value, std::uint16_t index, std::span<const std::byte> data);
  void config_tlp(std::uint8_t fmt, unsigned be, std::uint64_t address, std::uint32_t value);
  std::uint32_t gpu_config_read(unsigned reg) const;
  void gpu_bar_write(unsigned reg, std::uint32_t value);

  // The request armed for the next bulk transfer.
  enum class armed_t { none, stream_write, stream_read, sram_write, sram_read } armed_ = armed_t::none;
  std::uint64_t armed_address_ = 0, armed_bytes_ = 0;
  std::array<std::byte, 8> completion_{};
};

class fake_handle final : public usb_handle {
 public:
  explicit fake_handle(fake_bridge& b) : b_(&b) {}
  transfer_result control(std::uint8_t rt, std::uint8_t req, std::uint16_t value, std::uint16_t index,
                          std::span<std::byte> data, std::chrono::milliseconds timeout) override {
    return b_->control(rt, req, value, index, data, timeout);
  }
  transfer_result bulk(std::uint8_t endpoint, std::span<std::byte> data, std::chrono::milliseconds timeout) override {
    return b_->bulk(endpoint, data, timeout);
  }
  std::unique_ptr<async_transfer> submit_control(std::uint8_t rt, std::uint8_t req, std::uint16_t value,
                                                 std::uint16_t index, std::span<std::byte> data,
                                                 std::chrono::milliseconds timeout) override;
  std::unique_ptr<async_transfer> submit_bulk(std::uint8_t endpoint, std::span<std::byte> data,
                                              std::chrono::milliseconds timeout) override;
  bool kernel_driver_active(int) override { return b_->kernel_driver; }
  usb_status detach_kernel_driver(int i) override { return note("detach_kernel_driver " + std::to_string(i)); }
  usb_status set_configuration(int c) override { return note("set_configuration " + std::to_string(c)); }
  usb_status claim_interface(int i) override { return note("claim_interface " + std::to_string(i)); }
  usb_status set_interface_alt_setting(int i, int a) override {
    return note("set_interface_alt_setting " + std::to_string(i) + " " + std::to_string(a));
  }
  usb_status reset_device() override;

 private:
  usb_status note(const std::string& what) {
    b_->setup.push_back(what);
    return usb_status::ok;
  }
  fake_bridge* b_;
};

class fake_backend final : public usb_backend {
 public:
  explicit fake_backend(fake_bridge& b) : b_(&b) {}
  std::vector<usb_device_info> devices = {{3, 2, 0xADD1, 0x0001, 2}};
  std::vector<usb_device_info> list() override { return devices; }
  std::unique_ptr<usb_handle> open(const usb_device_info&) override { return std::make_unique<fake_handle>(*b_); }

 private:
  fake_bridge* b_;
};

// The fake bridge opened as a usb_device through the fake backend, its log cleared of the
// open sequence: the usual start of a bridge-protocol test.
struct opened_bridge {
  fake_bridge bridge;
  fake_backend backend{bridge};
  usb_device dev = open_usb_device(backend, backend.list().front(), nullptr);
  opened_bridge() { bridge.log.clear(); }
};

}  // namespace tg::transport::usb::testing
