// link_clock.cpp: modelled transfer durations and timeouts (see link_clock.hpp).
#include "drivers/emu/usb/link_clock.hpp"

#include <algorithm>
#include <thread>

namespace tg::emu::usb {

using std::chrono::nanoseconds;

transfer_fit link_clock::fit(std::uint64_t bytes, double bytes_per_s, nanoseconds timeout,
                             std::uint64_t granule) const {
  if (!limits_.enabled) return {.fits = true, .moved = bytes, .duration = nanoseconds(0)};
  const double seconds = double(bytes) / bytes_per_s;
  const nanoseconds duration = limits_.request_latency + nanoseconds(std::int64_t(seconds * 1e9));
  const nanoseconds limit = timeout;
  if (timeout.count() == 0 || duration <= limit) return {.fits = true, .moved = bytes, .duration = duration};
  // What the link moved before the host gave up: the time left after the request's latency.
  const double usable_s = std::max(0.0, double((limit - limits_.request_latency).count()) / 1e9);
  const auto moved = std::min<std::uint64_t>(bytes, std::uint64_t(usable_s * bytes_per_s));
  return {.fits = false, .moved = moved / granule * granule, .duration = limit};
}

transfer_fit link_clock::hang(std::chrono::milliseconds timeout) const {
  return {.fits = false, .moved = 0, .duration = nanoseconds(timeout)};
}

void link_clock::spend(nanoseconds d) {
  modelled_ += d;
  if (limits_.time != time_mode::real || d.count() <= 0) return;
  // Pace against a running deadline rather than sleeping `d` each time, so the host's own work
  // between requests is absorbed and the long-run rate matches the model.
  const auto now = std::chrono::steady_clock::now();
  paced_until_ = std::max(paced_until_, now) + d;
  std::this_thread::sleep_until(paced_until_);
}

}  // namespace tg::emu::usb
