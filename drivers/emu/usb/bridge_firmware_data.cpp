// bridge_firmware_data.cpp: the emulated bridge firmware's data phases (0xF0 streams and 0xF2
// SRAM transfers on the bulk endpoints), their modelled timing, and the wedged state
// (see bridge_firmware.hpp).
#include <algorithm>

#include "drivers/emu/usb/bridge_firmware.hpp"

namespace tg::emu::usb {

using std::chrono::nanoseconds;

// libusb's own timeout for the standard requests behind set_configuration / set_interface.
constexpr milliseconds standard_request_timeout{1000};

transfer_result bridge_firmware::ok(std::size_t transferred) {
  clock_.spend(clock_.fixed(config_.limits.request_latency));
  return {usb_status::ok, transferred};
}

transfer_result bridge_firmware::stall() {
  ++stats_.errors;
  clock_.spend(clock_.fixed(config_.limits.request_latency));
  return {usb_status::stall, 0};
}

// The host waits its whole timeout for an answer that never comes. With no timeout (0) libusb
// would wait forever; we answer at once rather than hang the caller.
transfer_result bridge_firmware::time_out(milliseconds timeout) {
  ++stats_.timeouts;
  clock_.spend(clock_.hang(timeout).duration);
  return {usb_status::timeout, 0};
}

transfer_result bridge_firmware::bulk_out(std::span<const std::byte> data, milliseconds timeout) {
  if (wedged_) return time_out(timeout);
  ++stats_.bulk_out;
  stats_.largest_bulk_out = std::max<std::uint64_t>(stats_.largest_bulk_out, data.size());
  if (stream_ && stream_->write) {
    const stream_arm arm = *stream_;
    stream_.reset();
    return stream_write(arm, data, timeout);
  }
  if (sram_ && !sram_->read) {
    const sram_arm arm = *sram_;
    sram_.reset();
    return sram_write(arm, data, timeout);
  }
  return stall();  // nothing armed for a bulk OUT
}

std::variant<transfer_result, sram_read_claim> bridge_firmware::bulk_in(std::span<std::byte> data,
                                                                        milliseconds timeout) {
  if (wedged_) return time_out(timeout);
  ++stats_.bulk_in;
  stats_.largest_bulk_in = std::max<std::uint64_t>(stats_.largest_bulk_in, data.size());
  if (stream_ && !stream_->write) {
    const stream_arm arm = *stream_;
    stream_.reset();
    return stream_read(arm, data, timeout);
  }
  if (sram_ && sram_->read) {
    const sram_arm arm = *sram_;
    sram_.reset();
    if (data.size() != arm.bytes) return stall();
    return sram_read_claim{arm.offset, arm.bytes, arm.releases_at_arm, windows_.cancels()};
  }
  return stall();  // nothing armed for a bulk IN
}

transfer_result bridge_firmware::stream_write(const stream_arm& arm, std::span<const std::byte> data,
                                              milliseconds timeout) {
  if (data.size() != arm.bytes) return stall();
  transfer_result r;
  if (config_.limits.enabled && arm.bytes > config_.limits.wedge_stream_bytes) {
    r = wedge(arm.bytes, timeout);
  } else {
    const transfer_fit f = clock_.fit(arm.bytes, config_.limits.stream_write_bytes_per_s, timeout, 4);
    clock_.spend(f.duration);
    if (!f.fits) ++stats_.timeouts;
    r = {f.fits ? usb_status::ok : usb_status::timeout, f.moved};
  }
  // What crossed USB before a timeout or the wedge still reached PCIe: writes are posted.
  stats_.dropped_writes += fabric_.memory_write(arm.address, data.first(r.transferred));
  stats_.stream_write_bytes += r.transferred;
  return r;
}

// An over-limit stream: the firmware takes data up to its limit and stops servicing USB, so
// the transfer times out whatever its timeout (tinygrad/runtime/support/usb.py: 5000 ms did not help) and every
// later request does too, until a USB reset.
transfer_result bridge_firmware::wedge(std::uint64_t bytes, milliseconds timeout) {
  wedged_ = true;
  ++stats_.wedges;
  ++stats_.timeouts;
  if (timeout.count() == 0) return {usb_status::timeout, 0};  // see time_out()
  const transfer_fit f = clock_.fit(bytes, config_.limits.stream_write_bytes_per_s, timeout, 4);
  clock_.spend(timeout);
  return {usb_status::timeout, std::min(f.moved, config_.limits.wedge_stream_bytes / 4 * 4)};
}

transfer_result bridge_firmware::stream_read(const stream_arm& arm, std::span<std::byte> data,
                                             milliseconds timeout) {
  if (data.size() != arm.bytes) return stall();
  const transfer_fit f = clock_.fit(arm.bytes, config_.limits.stream_read_bytes_per_s, timeout, 4);
  stats_.unsupported_requests += fabric_.memory_read(arm.address, data.first(f.moved));
  stats_.stream_read_bytes += f.moved;
  clock_.spend(f.duration);
  if (!f.fits) ++stats_.timeouts;
  return {f.fits ? usb_status::ok : usb_status::timeout, f.moved};
}

transfer_result bridge_firmware::sram_write(const sram_arm& arm, std::span<const std::byte> data,
                                            milliseconds timeout) {
  if (data.size() != arm.bytes) return stall();
  const transfer_fit f = clock_.fit(arm.bytes, config_.limits.sram_bytes_per_s, timeout, 512);
  windows_.write_sram(arm.offset, data.first(f.moved));
  stats_.sram_write_bytes += f.moved;
  clock_.spend(f.duration);
  if (!f.fits) ++stats_.timeouts;
  return {f.fits ? usb_status::ok : usb_status::timeout, f.moved};
}

transfer_result bridge_firmware::finish_sram_read(const sram_read_claim& claim, release_wait outcome,
                                                  nanoseconds waited, std::span<std::byte> data,
                                                  milliseconds timeout) {
  clock_.account(waited);  // real time the host spent waiting for the GPU
  if (outcome == release_wait::cancelled) return {usb_status::other, 0};  // a USB reset cancelled it
  if (outcome == release_wait::timed_out) {
    ++stats_.timeouts;
    return {usb_status::timeout, 0};
  }
  // The bytes must move in what is left of the timeout.
  const nanoseconds left = timeout.count() == 0 ? nanoseconds(0) : std::max(nanoseconds(1), timeout - waited);
  const transfer_fit f = clock_.fit(claim.bytes, config_.limits.sram_bytes_per_s, left, 512);
  windows_.read_sram(claim.offset, data.first(f.moved));
  stats_.sram_read_bytes += f.moved;
  clock_.spend(f.duration);
  if (!f.fits) ++stats_.timeouts;
  return {f.fits ? usb_status::ok : usb_status::timeout, f.moved};
}

usb_status bridge_firmware::set_configuration(int configuration) {
  if (wedged_) return time_out(standard_request_timeout).status;
  stats_.setup.configuration = configuration;
  return ok(0).status;
}

usb_status bridge_firmware::set_interface_alt_setting(int interface, int alt_setting) {
  if (wedged_) return time_out(standard_request_timeout).status;
  if (interface != 0) return stall().status;  // one interface (tinygrad/runtime/support/usb.py)
  stats_.setup.alt_setting = alt_setting;
  return ok(0).status;
}

void bridge_firmware::usb_reset() {
  wedged_ = false;
  stream_.reset();
  sram_.reset();
  completion_ = {};
  ++stats_.resets;
  windows_.cancel();  // a reset cancels a bulk IN waiting for its release
}

// Where a process that crashed between 0xF0 mode 1 and its bulk OUT leaves the bridge: the
// firmware sits in its stream loop waiting for data and answers nothing else.
void bridge_firmware::abandon_mid_stream() {
  stream_ = stream_arm{true, 0, 64 * 1024};
  wedged_ = true;
  ++stats_.wedges;
}

bridge_stats bridge_firmware::stats() const {
  bridge_stats s = stats_;
  s.modelled_time = clock_.modelled();
  s.gpu_read_bytes = windows_.gpu_read_bytes();
  s.gpu_write_bytes = windows_.gpu_write_bytes();
  s.gpu_sram_write_bytes = windows_.gpu_sram_write_bytes();
  s.releases = windows_.releases();
  return s;
}

}  // namespace tg::emu::usb
