// emu_bridge.cpp: the emulated bridge as a libusb-level backend: listing, handles, synchronous
// and asynchronous transfers (see emu_bridge.hpp).
#include "drivers/emu/usb/emu_bridge.hpp"

#include <optional>

#include <tg/core/error.hpp>

namespace tg::emu::usb {

using std::chrono::steady_clock;
using transport::usb::usb_status;

namespace {

constexpr std::uint8_t bulk_out_endpoint = 0x02, bulk_in_endpoint = 0x81;  // tinygrad/runtime/support/usb.py

// Everything but an armed SRAM read completes when submitted.
class completed_transfer final : public async_transfer {
 public:
  explicit completed_transfer(transfer_result r) : result_(r) {}
  bool done() override { return true; }
  transfer_result wait() override { return result_; }

 private:
  transfer_result result_;
};

std::unique_ptr<async_transfer> completed(transfer_result r) { return std::make_unique<completed_transfer>(r); }

}  // namespace

// A bulk IN that took an armed SRAM read: it completes once the GPU writes cq_buf + 12.
class emu_bridge::pending_sram_read final : public async_transfer {
 public:
  pending_sram_read(emu_bridge& bridge, const sram_read_claim& claim, std::span<std::byte> data,
                    milliseconds timeout, steady_clock::time_point start)
      : bridge_(bridge), claim_(claim), data_(data), timeout_(timeout), start_(start) {}

  bool done() override {
    if (result_) return true;
    return bridge_.windows_.releases() > claim_.releases_at_arm || bridge_.windows_.cancels() != claim_.cancels_at_claim ||
           (timeout_.count() != 0 && steady_clock::now() >= start_ + timeout_);
  }
  transfer_result wait() override {
    if (!result_) result_ = bridge_.finish_sram_read(claim_, data_, timeout_, start_);
    return *result_;
  }

 private:
  emu_bridge& bridge_;
  sram_read_claim claim_;
  std::span<std::byte> data_;
  milliseconds timeout_;
  steady_clock::time_point start_;
  std::optional<transfer_result> result_;
};

// A handle is a view of the bridge: every handle talks to the same firmware.
class emu_bridge::handle final : public usb_handle {
 public:
  explicit handle(emu_bridge& bridge) : bridge_(bridge) {}

  transfer_result control(std::uint8_t request_type, std::uint8_t request, std::uint16_t value, std::uint16_t index,
                          std::span<std::byte> data, milliseconds timeout) override {
    return bridge_.control({request_type, request, value, index}, data, timeout);
  }
  transfer_result bulk(std::uint8_t endpoint, std::span<std::byte> data, milliseconds timeout) override {
    return bridge_.submit_bulk(endpoint, data, timeout)->wait();
  }
  std::unique_ptr<async_transfer> submit_control(std::uint8_t request_type, std::uint8_t request,
                                                 std::uint16_t value, std::uint16_t index, std::span<std::byte> data,
                                                 milliseconds timeout) override {
    return completed(control(request_type, request, value, index, data, timeout));
  }
  std::unique_ptr<async_transfer> submit_bulk(std::uint8_t endpoint, std::span<std::byte> data,
                                              milliseconds timeout) override {
    return bridge_.submit_bulk(endpoint, data, timeout);
  }

  // Kernel-driver and interface calls are host-side in libusb: they work on a wedged bridge.
  bool kernel_driver_active(int interface) override {
    std::lock_guard lock(bridge_.host_mutex_);
    return interface == 0 && bridge_.kernel_driver_attached_;
  }
  usb_status detach_kernel_driver(int interface) override {
    std::lock_guard lock(bridge_.host_mutex_);
    if (interface != 0 || !bridge_.kernel_driver_attached_) return usb_status::not_found;
    bridge_.kernel_driver_attached_ = false;
    ++bridge_.firmware_.setup_record().kernel_driver_detaches;
    return usb_status::ok;
  }
  usb_status claim_interface(int interface) override {
    std::lock_guard lock(bridge_.host_mutex_);
    if (interface != 0) return usb_status::not_found;
    bridge_.firmware_.setup_record().claimed_interface = interface;
    return usb_status::ok;
  }
  usb_status set_configuration(int configuration) override {
    std::lock_guard lock(bridge_.host_mutex_);
    return bridge_.firmware_.set_configuration(configuration);
  }
  usb_status set_interface_alt_setting(int interface, int alt_setting) override {
    std::lock_guard lock(bridge_.host_mutex_);
    return bridge_.firmware_.set_interface_alt_setting(interface, alt_setting);
  }
  usb_status reset_device() override {
    std::lock_guard lock(bridge_.host_mutex_);
    bridge_.firmware_.usb_reset();
    return usb_status::ok;
  }

 private:
  emu_bridge& bridge_;
};

emu_bridge::emu_bridge(gpu& g, const bridge_config& config)
    : gpu_(g),
      config_(config),
      firmware_(config, g, windows_),
      kernel_driver_attached_(config.kernel_driver_attached) {
  // Any product string is allowed: a bridge with another firmware (stock ASMedia) is exactly what
  // the transport's product check must refuse, and tests build one to see that it does.
  gpu_.attach_system_bus(this);
}

emu_bridge::~emu_bridge() { gpu_.attach_system_bus(nullptr); }

std::vector<usb_device_info> emu_bridge::list() {
  return {usb_device_info{.bus = config_.bus,
                          .address = config_.address,
                          .vendor_id = config_.vendor_id,
                          .product_id = config_.product_id,
                          .product_string_index = 2}};
}

std::unique_ptr<usb_handle> emu_bridge::open(const usb_device_info& device) {
  if (device.bus != config_.bus || device.address != config_.address)
    throw device_error(str("emu usb bridge: no device at usb:", int(device.bus), "-", int(device.address),
                           " (the emulated bridge is usb:", int(config_.bus), "-", int(config_.address), ")"));
  return std::make_unique<handle>(*this);
}

void emu_bridge::read(std::uint64_t bus_address, std::span<std::byte> out) { windows_.read(bus_address, out); }

void emu_bridge::write(std::uint64_t bus_address, std::span<const std::byte> in) { windows_.write(bus_address, in); }

void emu_bridge::abandon_mid_stream() {
  std::lock_guard lock(host_mutex_);
  firmware_.abandon_mid_stream();
}

bool emu_bridge::wedged() const {
  std::lock_guard lock(host_mutex_);
  return firmware_.wedged();
}

bridge_stats emu_bridge::stats() const {
  std::lock_guard lock(host_mutex_);
  return firmware_.stats();
}

transfer_result emu_bridge::control(const setup_packet& setup, std::span<std::byte> data, milliseconds timeout) {
  std::lock_guard lock(host_mutex_);
  return firmware_.control(setup, data, timeout);
}

std::unique_ptr<async_transfer> emu_bridge::submit_bulk(std::uint8_t endpoint, std::span<std::byte> data,
                                                        milliseconds timeout) {
  const steady_clock::time_point start = steady_clock::now();
  std::lock_guard lock(host_mutex_);
  if (endpoint == bulk_out_endpoint) return completed(firmware_.bulk_out(data, timeout));
  if (endpoint != bulk_in_endpoint) return completed({usb_status::not_found, 0});  // no such endpoint
  auto started = firmware_.bulk_in(data, timeout);
  if (auto* r = std::get_if<transfer_result>(&started)) return completed(*r);
  return std::make_unique<pending_sram_read>(*this, std::get<sram_read_claim>(started), data, timeout, start);
}

transfer_result emu_bridge::finish_sram_read(const sram_read_claim& claim, std::span<std::byte> data,
                                             milliseconds timeout, steady_clock::time_point start) {
  std::optional<steady_clock::time_point> deadline;
  if (timeout.count() != 0) deadline = start + timeout;
  // Without the host lock: the GPU's release comes from its worker, and other host threads
  // (ringing the doorbell that starts the copy) must get through meanwhile.
  const release_wait outcome = windows_.wait_for_release(claim.releases_at_arm, claim.cancels_at_claim, deadline);
  const auto waited = steady_clock::now() - start;
  std::lock_guard lock(host_mutex_);
  return firmware_.finish_sram_read(claim, outcome, waited, data, timeout);
}

}  // namespace tg::emu::usb
