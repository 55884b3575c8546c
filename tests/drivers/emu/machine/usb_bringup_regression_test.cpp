// usb_bringup_regression_test.cpp: the regression test for the failure users hit with the
// reference over USB (tinygrad's MemoryManager.palloc with zero=True): zero-filling a 4 MiB CPU-visible buffer as one
// 0xF0 write timed out and wedged the bridge until a power cycle.
//
// Against the emulated ASM2464 bridge with its limits on (3.6 MB/s streams, 1 MiB wedge size,
// per-request timeouts; virtual time), with GPU page tables on: bring-up, a 4 MiB and a 256 MiB
// CPU-visible allocation (both zeroed), 64 MiB copied in and out bit-exact, a kernel dispatch.
// Run twice in a row, then once more after a simulated crash that leaves the bridge mid-stream:
// every run succeeds, and no USB transfer is ever larger than the transport's chunk limit.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "tests/drivers/amd/am_dispatch.hpp"
#include "drivers/amd/am_device.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"
#include "runtime/queue/pm4.hpp"
#include <tg/core/error.hpp>

using namespace tg;
using namespace std::chrono_literals;

namespace {

std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> out(n);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n; i += 8) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    std::memcpy(out.data() + i, &x, std::min<std::size_t>(8, n - i));
  }
  return out;
}

bool all_zero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

struct session_log {
  std::vector<std::string> lines;  // what the USB transport reported (recovery)
};

transport::system_buses buses_for(emu::emulated_machine& m, session_log& log) {
  transport::system_buses b = m.buses();
  b.usb_options.log = [&log](const std::string& line) { log.lines.push_back(line); };
  return b;
}

using test::options_for;

// kernels/fill.ll, run as machine code by the emulated GPU: i + tag into the first 4096 dwords of
// its output buffer.
void dispatch_and_check(amd::am_device& dev, std::uint32_t tag) {
  const std::optional<test::am_kernel> k = test::load_kernel(dev, "fill", "fill");
  if (!k) return;
  const amd::allocation image = k->image;
  amd::allocation out = dev.allocate(64 << 10), args = dev.allocate(4096);
  const std::uint32_t kernargs[6] = {std::uint32_t(out.va.value), std::uint32_t(out.va.value >> 32), 4096, 1, tag, 0};
  dev.copy_in(args, 0, std::as_bytes(std::span(kernargs)));
  dev.compute().submit(test::one_group_dispatch(dev, *k, args));
  dev.synchronize(5000ms);
  std::vector<std::uint32_t> seen(4096);
  dev.copy_out(std::as_writable_bytes(std::span(seen)), out, 0);
  bool right = true;
  for (std::uint32_t i = 0; i < seen.size(); ++i) right = right && seen[i] == i + tag;
  CHECK_MESSAGE(right, "the dispatched kernel's output is wrong (tag ", tag, ")");
  for (const amd::allocation& a : {image, out, args}) dev.release(a);
}

// One process's worth of work. `crash` stops it half-way through a copy, as a killed process
// would leave the bridge: mid-stream, wedged.
session_log run_session(emu::emulated_machine& m, std::uint32_t seed, bool crash) {
  session_log log;
  transport::system_buses buses = buses_for(m, log);
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD:USB:0", buses);
  amd::am_device dev(*t, options_for(m));
  CHECK(dev.info().gfx_target == "gfx1200");

  // The allocations of seed 002: a 4 MiB CPU-visible buffer (the one that wedged the bridge) and a
  // 256 MiB one, both zeroed without a single oversized write.
  amd::allocation small = dev.allocate(4 << 20, /*cpu_visible=*/true);
  amd::allocation big = dev.allocate(256 << 20, /*cpu_visible=*/true);
  CHECK(small.cpu_visible);
  CHECK(big.cpu_visible);
  std::vector<std::byte> spot(64 << 10);
  for (std::uint64_t at : {std::uint64_t{0}, std::uint64_t{(4u << 20) - spot.size()}}) {
    dev.copy_out(spot, small, at);
    CHECK(all_zero(spot));
  }
  for (std::uint64_t at : {std::uint64_t{0}, std::uint64_t{128u << 20}, std::uint64_t{(256u << 20) - spot.size()}}) {
    dev.copy_out(spot, big, at);
    CHECK(all_zero(spot));
  }

  const std::vector<std::byte> in = random_bytes(64 << 20, seed);
  if (crash) {
    dev.copy_in(big, 0, std::span(in).first(8 << 20));
    m.bridge()->abandon_mid_stream();  // the process dies here; its destructors still run below,
    return log;                        // over a bridge that no longer answers
  }
  dev.copy_in(big, 4096, in);
  std::vector<std::byte> out(in.size());
  dev.copy_out(out, big, 4096);
  CHECK(out == in);
  dispatch_and_check(dev, seed);
  dev.release(small);
  dev.release(big);
  return log;
}

}  // namespace

TEST_CASE("bring-up, 4 MiB and 256 MiB zeroed buffers, 64 MiB copies and a dispatch over the limited bridge: "
          "twice, then again after a crash mid-stream") {
  emu::emulated_machine m({.gen = emu::gfx_gen::gfx12, .vram_bytes = 1ull << 30, .bus = emu::emulated_bus::usb});
  REQUIRE(m.bridge()->limits().enabled);
  const std::uint64_t chunk = transport::usb::stream_limits{}.max_chunk_bytes;

  run_session(m, 1, false);
  run_session(m, 2, false);
  CHECK(m.bridge()->stats().wedges == 0);
  CHECK(m.bridge()->stats().timeouts == 0);

  // The crash: the session's teardown meets a wedged bridge and must neither hang nor throw.
  const auto crash_start = std::chrono::steady_clock::now();
  run_session(m, 3, true);
  CHECK(std::chrono::steady_clock::now() - crash_start < 60s);
  CHECK(m.bridge()->wedged());

  // The next run finds the bridge wedged, resets it, boots the GPU again and works.
  session_log recovered = run_session(m, 4, false);
  CHECK_FALSE(m.bridge()->wedged());
  CHECK(m.bridge()->stats().resets >= 1);
  bool told = false;  // the user is told why the first requests timed out
  for (const std::string& line : recovered.lines) told = told || line.find("resetting") != std::string::npos;
  CHECK(told);

  const emu::usb::bridge_stats s = m.bridge()->stats();
  CHECK(s.largest_stream_write <= chunk);  // no 0xF0 stream above the limit, ever
  CHECK(s.largest_stream_read <= chunk);
  CHECK(s.largest_bulk_out <= 512u << 10);  // SRAM transfers stay inside the 512 KiB window
  CHECK(s.largest_bulk_in <= 512u << 10);
  MESSAGE("bridge: largest 0xF0 stream ", s.largest_stream_write, " B, largest bulk OUT ", s.largest_bulk_out,
          " B, ", s.sram_write_bytes >> 20, " MiB through SRAM, ", s.stream_write_bytes >> 10,
          " KiB through 0xF0 streams, modelled time ", std::chrono::duration<double>(s.modelled_time).count(), " s");
}
