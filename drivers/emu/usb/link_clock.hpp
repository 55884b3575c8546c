// link_clock.hpp: the emulated bridge's model of time: what a transfer costs at a modelled rate,
// whether it fits the caller's timeout, and spending that time (accounted, or also slept).
//
//   link_clock clock(limits);
//   transfer_fit f = clock.fit(bytes, limits.stream_write_bytes_per_s, timeout, 4);
//   clock.spend(f.duration);          // virtual: accounting only; real: sleeps as well
//   if (!f.fits) ... f.moved bytes made it before the timeout
//
// Not thread-safe: the bridge calls it under its host lock.
#pragma once
#include <chrono>
#include <cstdint>

#include "drivers/emu/usb/bridge_config.hpp"

namespace tg::emu::usb {

struct transfer_fit {
  bool fits = true;               // the whole transfer finishes within the timeout
  std::uint64_t moved = 0;        // bytes moved (all of them when it fits)
  std::chrono::nanoseconds duration{0};  // time spent: the transfer's, or the timeout when it does not fit
};

class link_clock {
 public:
  explicit link_clock(const bridge_limits& limits) : limits_(limits) {}

  // One request moving `bytes` at `bytes_per_s`, against a libusb timeout (0 = none). On a
  // timeout, `moved` is rounded down to `granule` bytes (a dword, a sector).
  transfer_fit fit(std::uint64_t bytes, double bytes_per_s, std::chrono::nanoseconds timeout,
                   std::uint64_t granule) const;
  // A request that never completes: it costs its whole timeout.
  transfer_fit hang(std::chrono::milliseconds timeout) const;
  // A fixed cost (link training), not a data transfer.
  std::chrono::nanoseconds fixed(std::chrono::nanoseconds d) const { return limits_.enabled ? d : d.zero(); }

  void spend(std::chrono::nanoseconds d);
  // Time that passed on the wall clock anyway (waiting for the GPU): counted, never slept.
  void account(std::chrono::nanoseconds d) { modelled_ += d; }
  std::chrono::nanoseconds modelled() const { return modelled_; }

 private:
  bridge_limits limits_;
  std::chrono::nanoseconds modelled_{0};
  std::chrono::steady_clock::time_point paced_until_{};  // real mode: where the model's clock is
};

}  // namespace tg::emu::usb
