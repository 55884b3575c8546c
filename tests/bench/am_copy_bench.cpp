// am_copy_bench.cpp: host <-> VRAM copy speed of the AM driver behind the emulated ASM2464 bridge,
// with the bridge in real time mode (its modelled bandwidths slept on the wall clock), reported
// as MB/s and as a fraction of the bridge's modelled SRAM path (0xF2). The copies are
// checked bit-exact; the bridge's stats show that no transfer timed out or wedged it.
//
//   am_copy_bench [MiB]     (default 64)
//
// Exit status 1 when a copy is wrong or the bridge reports a timeout or wedge.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "drivers/amd/am_device.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"

using namespace tg;
using clock_type = std::chrono::steady_clock;

namespace {

std::vector<std::byte> pattern(std::size_t bytes) {
  std::vector<std::byte> out(bytes);
  std::uint32_t x = 12345;
  for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
    x = x * 1664525u + 1013904223u;
    std::memcpy(out.data() + i, &x, 4);
  }
  return out;
}

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::size_t(std::max(1, std::atoi(argv[1]))) : 64;
  const std::size_t bytes = mib << 20;
  emu::emulated_machine_config config{.gen = emu::gfx_gen::gfx12, .vram_bytes = 512ull << 20,
                                      .bus = emu::emulated_bus::usb};
  config.bridge.limits.time = emu::usb::time_mode::real;
  emu::emulated_machine m(config);
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_options o;
  o.firmware_dir = m.firmware_dir();
  o.timeout = std::chrono::milliseconds(10000);
  o.queue_timeout = std::chrono::milliseconds(60000);
  const clock_type::time_point boot = clock_type::now();
  amd::am_device dev(*t, o);
  std::printf("boot (%s, %s): %.2f s\n", dev.info().gfx_target.c_str(), t->name().c_str(), seconds_since(boot));

  const double sram = m.bridge()->limits().sram_bytes_per_s;
  amd::allocation a = dev.allocate(bytes);
  const std::vector<std::byte> in = pattern(bytes);
  std::vector<std::byte> out(bytes);

  const emu::usb::bridge_stats s0 = m.bridge()->stats();
  clock_type::time_point start = clock_type::now();
  dev.copy_in(a, 0, in);
  const double in_s = seconds_since(start);
  const emu::usb::bridge_stats s1 = m.bridge()->stats();
  start = clock_type::now();
  dev.copy_out(out, a, 0);
  const double out_s = seconds_since(start);
  const emu::usb::bridge_stats s2 = m.bridge()->stats();

  const double in_rate = double(bytes) / in_s, out_rate = double(bytes) / out_s;
  std::printf("host -> VRAM %zu MiB: %.3f s, %.1f MB/s, %.3f of the modelled SRAM path (%.0f MB/s)\n", mib, in_s,
              in_rate / 1e6, in_rate / sram, sram / 1e6);
  std::printf("VRAM -> host %zu MiB: %.3f s, %.1f MB/s, %.3f of the modelled SRAM path\n", mib, out_s,
              out_rate / 1e6, out_rate / sram);
  auto modelled = [](const emu::usb::bridge_stats& from, const emu::usb::bridge_stats& to) {
    return std::chrono::duration<double>(to.modelled_time - from.modelled_time).count();
  };
  // How much of each copy's wall time the bridge model itself accounts for (requests and bytes).
  std::printf("bridge model: copy-in %.3f s (%llu xdata reads, %llu stream writes), copy-out %.3f s\n",
              modelled(s0, s1), (unsigned long long)(s1.xdata_reads - s0.xdata_reads),
              (unsigned long long)(s1.stream_write_arms - s0.stream_write_arms), modelled(s1, s2));
  const emu::usb::bridge_stats s = m.bridge()->stats();
  std::printf("bridge: largest bulk out %llu, in %llu, stream write %llu; timeouts %llu, wedges %llu\n",
              (unsigned long long)s.largest_bulk_out, (unsigned long long)s.largest_bulk_in,
              (unsigned long long)s.largest_stream_write, (unsigned long long)s.timeouts,
              (unsigned long long)s.wedges);
  if (out != in) {
    std::printf("FAIL: VRAM -> host differs from what was copied in\n");
    return 1;
  }
  if (s.timeouts != 0 || s.wedges != 0) {
    std::printf("FAIL: the bridge timed out or wedged\n");
    return 1;
  }
  return 0;
}
