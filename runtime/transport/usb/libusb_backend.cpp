// libusb_backend.cpp: usb_backend over libusb-1.0: one context, device listing, sync transfers,
// and async transfers from a small pool of libusb_transfer objects whose events are pumped by
// whoever waits (as tinygrad/runtime/support/usb.py: USB3.bulk_write_async, bulk_wait). No policy:
// statuses go up unchanged for usb_device to explain.
//
//   std::unique_ptr<usb_backend> usb = make_libusb_backend();
//   auto handle = usb->open(usb->list().front());
//
// A handle is used by one thread at a time (usb_backend.hpp). Completion callbacks only set a
// flag; they never throw (libusb calls them from C).
#include <libusb.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/transport/usb/usb_backend.hpp"
#include <tg/core/error.hpp>

namespace tg::transport::usb {
namespace {

usb_status from_libusb_error(int rc) {
  switch (rc) {
    case LIBUSB_SUCCESS: return usb_status::ok;
    case LIBUSB_ERROR_TIMEOUT: return usb_status::timeout;
    case LIBUSB_ERROR_PIPE: return usb_status::stall;
    case LIBUSB_ERROR_NO_DEVICE: return usb_status::no_device;
    case LIBUSB_ERROR_BUSY: return usb_status::busy;
    case LIBUSB_ERROR_ACCESS: return usb_status::access;
    case LIBUSB_ERROR_NOT_FOUND: return usb_status::not_found;
    case LIBUSB_ERROR_OVERFLOW: return usb_status::overflow;
    case LIBUSB_ERROR_IO: return usb_status::io;
    default: return rc > 0 ? usb_status::ok : usb_status::other;
  }
}

usb_status from_transfer_status(libusb_transfer_status s) {
  switch (s) {
    case LIBUSB_TRANSFER_COMPLETED: return usb_status::ok;
    case LIBUSB_TRANSFER_TIMED_OUT: return usb_status::timeout;
    case LIBUSB_TRANSFER_STALL: return usb_status::stall;
    case LIBUSB_TRANSFER_NO_DEVICE: return usb_status::no_device;
    case LIBUSB_TRANSFER_OVERFLOW: return usb_status::overflow;
    case LIBUSB_TRANSFER_ERROR: return usb_status::io;
    default: return usb_status::other;
  }
}

unsigned timeout_ms(std::chrono::milliseconds t) { return unsigned(std::max<std::int64_t>(t.count(), 1)); }

// Pools libusb_transfer objects per handle, so a copy-in pipeline does not allocate per chunk.
class transfer_pool {
 public:
  ~transfer_pool() {
    for (libusb_transfer* t : free_) libusb_free_transfer(t);
  }
  libusb_transfer* take() {
    if (free_.empty()) {
      libusb_transfer* t = libusb_alloc_transfer(0);
      if (!t) throw device_error("usb: libusb_alloc_transfer failed (out of memory)");
      return t;
    }
    libusb_transfer* t = free_.back();
    free_.pop_back();
    return t;
  }
  void give_back(libusb_transfer* t) { free_.push_back(t); }

 private:
  std::vector<libusb_transfer*> free_;
};

class libusb_async final : public async_transfer {
 public:
  // For control transfers `buffer` holds the 8-byte setup packet and the data; `in_data` is where
  // an IN transfer's data is copied back.
  libusb_async(libusb_context* ctx, transfer_pool& pool, libusb_transfer* t, std::vector<unsigned char> buffer,
               std::span<std::byte> in_data)
      : ctx_(ctx), pool_(&pool), t_(t), buffer_(std::move(buffer)), in_data_(in_data) {
    t_->user_data = &completed_;
    t_->callback = &on_complete;
  }
  ~libusb_async() override {
    if (!t_) return;
    if (!completed_ && libusb_cancel_transfer(t_) == LIBUSB_SUCCESS) pump(std::chrono::milliseconds(1000));
    // A transfer libusb still owns must not be freed or reused; leaking it is the safe choice.
    if (completed_) pool_->give_back(t_);
  }

  // libusb refused the transfer: it is the caller's to free, not ours to cancel or pool.
  void forget_unsubmitted() { t_ = nullptr; }

  bool done() override {
    timeval zero{0, 0};
    libusb_handle_events_timeout_completed(ctx_, &zero, &completed_);
    return completed_ != 0;
  }

  transfer_result wait() override {
    // libusb times the transfer out itself; the extra margin only guards against a lost event.
    if (!pump(std::chrono::milliseconds(t_->timeout) + std::chrono::milliseconds(5000))) {
      libusb_cancel_transfer(t_);
      pump(std::chrono::milliseconds(1000));
      return {usb_status::timeout, 0};
    }
    transfer_result r{from_transfer_status(t_->status), std::size_t(t_->actual_length)};
    if (t_->type == LIBUSB_TRANSFER_TYPE_CONTROL) {
      const unsigned char* data = libusb_control_transfer_get_data(t_);
      if (!in_data_.empty()) std::memcpy(in_data_.data(), data, std::min(in_data_.size(), r.transferred));
    }
    return r;
  }

 private:
  static void LIBUSB_CALL on_complete(libusb_transfer* t) { *static_cast<int*>(t->user_data) = 1; }

  bool pump(std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!completed_ && std::chrono::steady_clock::now() < deadline) {
      timeval tv{0, 100 * 1000};
      int rc = libusb_handle_events_timeout_completed(ctx_, &tv, &completed_);
      if (rc != LIBUSB_SUCCESS && rc != LIBUSB_ERROR_INTERRUPTED) break;
    }
    return completed_ != 0;
  }

  libusb_context* ctx_;
  transfer_pool* pool_;
  libusb_transfer* t_;
  std::vector<unsigned char> buffer_;
  std::span<std::byte> in_data_;
  int completed_ = 0;
};

// An async transfer libusb refused to submit: its wait() reports why.
class failed_async final : public async_transfer {
 public:
  explicit failed_async(usb_status s) : status_(s) {}
  bool done() override { return true; }
  transfer_result wait() override { return {status_, 0}; }

 private:
  usb_status status_;
};

class libusb_handle final : public usb_handle {
 public:
  libusb_handle(libusb_context* ctx, libusb_device_handle* h) : ctx_(ctx), h_(h) {}
  ~libusb_handle() override {
    for (int i : claimed_) libusb_release_interface(h_, i);
    libusb_close(h_);
  }

  transfer_result control(std::uint8_t request_type, std::uint8_t request, std::uint16_t value, std::uint16_t index,
                          std::span<std::byte> data, std::chrono::milliseconds timeout) override {
    int rc = libusb_control_transfer(h_, request_type, request, value, index,
                                     reinterpret_cast<unsigned char*>(data.data()), std::uint16_t(data.size()),
                                     timeout_ms(timeout));
    return rc >= 0 ? transfer_result{usb_status::ok, std::size_t(rc)} : transfer_result{from_libusb_error(rc), 0};
  }

  transfer_result bulk(std::uint8_t endpoint, std::span<std::byte> data, std::chrono::milliseconds timeout) override {
    int moved = 0;
    int rc = libusb_bulk_transfer(h_, endpoint, reinterpret_cast<unsigned char*>(data.data()), int(data.size()),
                                  &moved, timeout_ms(timeout));
    return {from_libusb_error(rc), std::size_t(std::max(moved, 0))};
  }

  std::unique_ptr<async_transfer> submit_control(std::uint8_t request_type, std::uint8_t request,
                                                 std::uint16_t value, std::uint16_t index, std::span<std::byte> data,
                                                 std::chrono::milliseconds timeout) override {
    // libusb wants the setup packet in front of the data, in one buffer.
    std::vector<unsigned char> buffer(LIBUSB_CONTROL_SETUP_SIZE + data.size());
    libusb_fill_control_setup(buffer.data(), request_type, request, value, index, std::uint16_t(data.size()));
    bool in = request_type & 0x80;
    if (!in) std::memcpy(buffer.data() + LIBUSB_CONTROL_SETUP_SIZE, data.data(), data.size());
    libusb_transfer* t = pool_.take();
    libusb_fill_control_transfer(t, h_, buffer.data(), nullptr, nullptr, timeout_ms(timeout));
    return submit(t, std::move(buffer), in ? data : std::span<std::byte>());
  }

  std::unique_ptr<async_transfer> submit_bulk(std::uint8_t endpoint, std::span<std::byte> data,
                                              std::chrono::milliseconds timeout) override {
    libusb_transfer* t = pool_.take();
    libusb_fill_bulk_transfer(t, h_, endpoint, reinterpret_cast<unsigned char*>(data.data()), int(data.size()),
                              nullptr, nullptr, timeout_ms(timeout));
    return submit(t, {}, {});
  }

  bool kernel_driver_active(int interface) override { return libusb_kernel_driver_active(h_, interface) == 1; }
  usb_status detach_kernel_driver(int interface) override {
    return from_libusb_error(libusb_detach_kernel_driver(h_, interface));
  }
  usb_status set_configuration(int configuration) override {
    return from_libusb_error(libusb_set_configuration(h_, configuration));
  }
  usb_status claim_interface(int interface) override {
    usb_status s = from_libusb_error(libusb_claim_interface(h_, interface));
    if (s == usb_status::ok && std::find(claimed_.begin(), claimed_.end(), interface) == claimed_.end())
      claimed_.push_back(interface);
    return s;
  }
  usb_status set_interface_alt_setting(int interface, int alt_setting) override {
    return from_libusb_error(libusb_set_interface_alt_setting(h_, interface, alt_setting));
  }
  usb_status reset_device() override { return from_libusb_error(libusb_reset_device(h_)); }

 private:
  std::unique_ptr<async_transfer> submit(libusb_transfer* t, std::vector<unsigned char> buffer,
                                         std::span<std::byte> in_data) {
    // Built before submitting: its constructor installs the callback and completion flag.
    auto async = std::make_unique<libusb_async>(ctx_, pool_, t, std::move(buffer), in_data);
    int rc = libusb_submit_transfer(t);
    if (rc == LIBUSB_SUCCESS) return async;
    async->forget_unsubmitted();
    libusb_free_transfer(t);
    return std::make_unique<failed_async>(from_libusb_error(rc));
  }

  libusb_context* ctx_;
  libusb_device_handle* h_;
  transfer_pool pool_;
  std::vector<int> claimed_;
};

class libusb_backend final : public usb_backend {
 public:
  libusb_backend() {
    int rc = libusb_init(&ctx_);
    if (rc != LIBUSB_SUCCESS) throw device_error(str("usb: libusb_init failed: ", libusb_error_name(rc)));
  }
  ~libusb_backend() override { libusb_exit(ctx_); }

  std::vector<usb_device_info> list() override {
    std::vector<usb_device_info> out;
    for_each_device([&](libusb_device* d, const usb_device_info& info) {
      (void)d;
      out.push_back(info);
      return false;
    });
    return out;
  }

  std::unique_ptr<usb_handle> open(const usb_device_info& wanted) override {
    std::string name = str("usb:", unsigned(wanted.bus), "-", unsigned(wanted.address));
    libusb_device_handle* h = nullptr;
    int rc = LIBUSB_ERROR_NOT_FOUND;
    for_each_device([&](libusb_device* d, const usb_device_info& info) {
      if (info.bus != wanted.bus || info.address != wanted.address) return false;
      rc = libusb_open(d, &h);
      return true;
    });
    if (rc == LIBUSB_ERROR_ACCESS)
      throw device_error(str(name, ": libusb_open failed: ", libusb_error_name(rc),
                             " (no permission on /dev/bus/usb; add a udev rule for the dock or run as root)"));
    if (rc != LIBUSB_SUCCESS) throw device_error(str(name, ": libusb_open failed: ", libusb_error_name(rc)));
    return std::make_unique<libusb_handle>(ctx_, h);
  }

 private:
  // Calls fn(device, info) for each device until it returns true.
  template <class Fn>
  void for_each_device(Fn fn) {
    libusb_device** devices = nullptr;
    ssize_t n = libusb_get_device_list(ctx_, &devices);
    if (n < 0) throw device_error(str("usb: libusb_get_device_list failed: ", libusb_error_name(int(n))));
    for (ssize_t i = 0; i < n; ++i) {
      libusb_device_descriptor desc{};
      if (libusb_get_device_descriptor(devices[i], &desc) != LIBUSB_SUCCESS) continue;
      usb_device_info info{libusb_get_bus_number(devices[i]), libusb_get_device_address(devices[i]), desc.idVendor,
                           desc.idProduct, desc.iProduct};
      if (fn(devices[i], info)) break;
    }
    libusb_free_device_list(devices, 1);
  }

  libusb_context* ctx_ = nullptr;
};

}  // namespace

std::unique_ptr<usb_backend> make_libusb_backend() { return std::make_unique<libusb_backend>(); }

}  // namespace tg::transport::usb
