// bridge_limits_test.cpp: the emulated bridge's real limits (as measured and reported on hardware): the armed
// SRAM read gated on the GPU, exact data-phase sizes, modelled bandwidth against timeouts, the
// wedge and its recovery by USB reset, and the counters tests and benchmarks read.
#include <algorithm>
#include <thread>

#include "tests/drivers/emu/usb/bridge_rig.hpp"

using namespace tg::emu;
using namespace tg::emu::usb;
using namespace tg::emu::usb::test;
using std::chrono::steady_clock;

namespace {

// A rig with PCIe up and BAR0 assigned; returns BAR0's bus address.
std::uint64_t bring_up(rig& r) {
  power_on(*r.h);
  setup_bridge_buses(*r.h);
  return assign_gpu_bars(*r.h)[0].address;
}

std::string read_product(usb_handle& h, transfer_result& t) {
  std::array<std::uint8_t, 255> buf{};
  t = h.control(0x80, 6, 0x0302, 0x0409, std::as_writable_bytes(std::span(buf)), 1000ms);
  std::string s;
  for (std::size_t i = 2; i + 1 < t.transferred; i += 2) s += char(buf[i]);
  return s;
}

}  // namespace

TEST_CASE("an armed SRAM read waits for the GPU's write to cq_buf + 12, then returns the SRAM") {
  rig r;
  const std::vector<std::byte> data = pattern(1024, 4);
  r.bridge.write(0x200000, data);          // as SDMA's COPY into the bounce buffer would
  r.bridge.write(0x82200C, pattern(4, 0));  // a release before the arm does not count

  REQUIRE(arm_sram(*r.h, true, 0, data.size()).status == usb_status::ok);
  std::vector<std::byte> got(data.size());
  const auto start = steady_clock::now();
  auto pending = r.h->submit_bulk(0x81, got, 5000ms);
  CHECK_FALSE(pending->done());
  // The host can still talk to the bridge while the read waits.
  CHECK(read_xdata8(*r.h, 0xB450) == 0);
  std::thread gpu_side([&] {
    std::this_thread::sleep_for(50ms);
    const std::array<std::byte, 4> zero{};
    r.bridge.write(0x82200C, zero);  // SDMA's WRITE of 0 to cq_buf + 12 (tinygrad's AMDAllocator._copyout)
  });
  const transfer_result t = pending->wait();
  gpu_side.join();
  CHECK(t.status == usb_status::ok);
  CHECK(t.transferred == data.size());
  CHECK(got == data);
  CHECK(steady_clock::now() - start >= 50ms);
  CHECK(r.bridge.stats().releases == 2);
}

TEST_CASE("an armed SRAM read that is never released times out after the caller's timeout") {
  rig r;
  REQUIRE(arm_sram(*r.h, true, 2, 512).status == usb_status::ok);
  std::vector<std::byte> got(512);
  const auto start = steady_clock::now();
  const transfer_result t = r.h->bulk(0x81, got, 100ms);
  CHECK(t.status == usb_status::timeout);
  CHECK(t.transferred == 0);
  CHECK(steady_clock::now() - start >= 100ms);
  CHECK(r.bridge.stats().timeouts == 1);
  // The arm was consumed: the next bulk IN has nothing to read.
  CHECK(r.h->bulk(0x81, got, 100ms).status == usb_status::stall);
}

TEST_CASE("a bulk whose size differs from the armed one stalls, drops the arm and counts an error") {
  rig r;
  const std::uint64_t bar0 = bring_up(r);
  std::array<std::uint32_t, 3> arm{std::uint32_t(bar0), std::uint32_t(bar0 >> 32), 4};  // 16 bytes
  REQUIRE(vendor_out(*r.h, 0xF0, 0x60 | 0x0F << 8, 1, std::as_writable_bytes(std::span(arm))).status ==
          usb_status::ok);
  std::vector<std::byte> eight = pattern(8, 5);
  CHECK(r.h->bulk(0x02, eight, 1000ms).status == usb_status::stall);
  CHECK(r.bridge.stats().errors == 1);
  CHECK(r.g.vram().load64({0}) == 0);  // nothing was written
  CHECK(r.h->bulk(0x02, eight, 1000ms).status == usb_status::stall);  // nothing armed any more
  CHECK(r.bridge.stats().errors == 2);

  REQUIRE(arm_sram(*r.h, false, 0, 1024).status == usb_status::ok);
  std::vector<std::byte> small(512);
  CHECK(r.h->bulk(0x02, small, 1000ms).status == usb_status::stall);
  CHECK(r.bridge.stats().errors == 3);
}

TEST_CASE("0xF0 streams move at the modelled 3.6 MB/s: 64 KiB fits in 1000 ms, a timeout moves what fits") {
  rig r;
  const std::uint64_t bar0 = bring_up(r);
  CHECK(r.bridge.limits().stream_write_bytes_per_s == 3.6e6);

  const auto before = r.bridge.stats().modelled_time;
  const std::vector<std::byte> block = pattern(64 * KiB, 6);
  CHECK(memory_write(*r.h, bar0, block, 1000ms).status == usb_status::ok);
  const auto took = r.bridge.stats().modelled_time - before;
  // 65536 B / 3.6 MB/s = 18.2 ms, plus the 0xF0 control and the bulk's request latency.
  CHECK(took >= 18200us);
  CHECK(took <= 18300us);

  // 1 MiB is at the wedge limit, not over it: with 100 ms it times out after 3.6e6 B/s x
  // (100 ms - 20 us latency) = 359928 bytes, and the bridge keeps answering.
  const std::vector<std::byte> big = pattern(MiB, 7);
  const transfer_result t = memory_write(*r.h, bar0, big, 100ms);
  CHECK(t.status == usb_status::timeout);
  CHECK(t.transferred == 359928);
  CHECK_FALSE(r.bridge.wedged());
  CHECK(read_xdata8(*r.h, 0xB450) == 0x78);
  std::vector<std::byte> landed(t.transferred + 4);
  r.g.vram().read({0}, landed);
  CHECK(std::equal(landed.begin(), landed.end() - 4, big.begin()));
  // Past the cut VRAM keeps what it held (zeros: the 64 KiB block ends well before).
  CHECK(std::all_of(landed.end() - 4, landed.end(), [](std::byte b) { return b == std::byte{0}; }));
  CHECK_FALSE(std::all_of(big.begin() + t.transferred, big.begin() + t.transferred + 4,
                          [](std::byte b) { return b == std::byte{0}; }));
}

TEST_CASE("a 4 MiB stream with a 1000 ms timeout times out and wedges the bridge (seed 002)") {
  rig r;
  const std::uint64_t bar0 = bring_up(r);
  const std::vector<std::byte> zeros(4 * MiB);
  const transfer_result t = memory_write(*r.h, bar0 + 0x100000, zeros, 1000ms);
  CHECK(t.status == usb_status::timeout);
  CHECK(r.bridge.wedged());
  CHECK(r.bridge.stats().largest_stream_write == 4 * MiB);
}

TEST_CASE("a wedged bridge times out every request, GET_DESCRIPTOR included, until reset_device()") {
  rig r;
  const std::uint64_t bar0 = bring_up(r);
  // 2 MiB would take 0.58 s, inside the 5000 ms timeout: the limit wedges it anyway (as reported on hardware).
  const std::vector<std::byte> zeros(2 * MiB);
  CHECK(memory_write(*r.h, bar0, zeros, 5000ms).status == usb_status::timeout);
  REQUIRE(r.bridge.wedged());

  transfer_result t;
  read_product(*r.h, t);
  CHECK(t.status == usb_status::timeout);
  std::byte b{};
  CHECK(r.h->control(0xC0, 0xE4, 0xB450, 0, std::span(&b, 1), 1000ms).status == usb_status::timeout);
  CHECK(r.h->set_configuration(1) == usb_status::timeout);
  std::vector<std::byte> four(4);
  CHECK(r.h->bulk(0x81, four, 1000ms).status == usb_status::timeout);

  CHECK(r.h->reset_device() == usb_status::ok);
  CHECK_FALSE(r.bridge.wedged());
  CHECK(read_product(*r.h, t) == "custom ASM2464 (tg emulator)");
  CHECK(t.status == usb_status::ok);
  // A port reset does not power-cycle PCIe: the link and the BARs are as they were.
  CHECK(read_xdata8(*r.h, 0xB450) == 0x78);
  r.g.vram().store32({0x40}, 0x1234'5678);
  CHECK(read32(*r.h, bar0 + 0x40) == 0x1234'5678);
  const bridge_stats s = r.bridge.stats();
  CHECK(s.wedges == 1);
  CHECK(s.resets == 1);
  CHECK(s.timeouts == 5);
}

TEST_CASE("abandon_mid_stream leaves the bridge stuck until a USB reset, which drops the abandoned arm") {
  rig r;
  power_on(*r.h);
  r.bridge.abandon_mid_stream();
  std::byte b{};
  CHECK(r.h->control(0xC0, 0xE4, 0xB450, 0, std::span(&b, 1), 1000ms).status == usb_status::timeout);
  transfer_result t;
  read_product(*r.h, t);
  CHECK(t.status == usb_status::timeout);
  std::vector<std::byte> data(64 * KiB);
  CHECK(r.h->bulk(0x02, data, 1000ms).status == usb_status::timeout);  // the firmware is not listening

  CHECK(r.h->reset_device() == usb_status::ok);
  CHECK(read_xdata8(*r.h, 0xB450) == 0x78);
  CHECK(r.h->bulk(0x02, data, 1000ms).status == usb_status::stall);  // the old arm is gone
  CHECK(r.bridge.stats().wedges == 1);
}

TEST_CASE("a USB reset cancels a bulk IN waiting for its SRAM release") {
  rig r;
  REQUIRE(arm_sram(*r.h, true, 0, 512).status == usb_status::ok);
  std::vector<std::byte> got(512);
  auto pending = r.h->submit_bulk(0x81, got, 10000ms);
  CHECK(r.h->reset_device() == usb_status::ok);
  const auto start = steady_clock::now();
  CHECK(pending->wait().status == usb_status::other);
  CHECK(steady_clock::now() - start < 5000ms);
}

TEST_CASE("counters: requests by type, bytes by path, largest transfers, modelled time") {
  rig r;
  const std::uint64_t bar0 = bring_up(r);
  const bridge_stats base = r.bridge.stats();

  const std::vector<std::byte> four_k = pattern(4 * KiB, 8);
  REQUIRE(memory_write(*r.h, bar0, four_k).status == usb_status::ok);
  std::vector<std::byte> eight(8);
  REQUIRE(memory_read(*r.h, bar0, eight).status == usb_status::ok);
  REQUIRE(arm_sram(*r.h, false, 0, 2048).status == usb_status::ok);
  std::vector<std::byte> sram = pattern(2048, 9);
  REQUIRE(r.h->bulk(0x02, sram, 1000ms).status == usb_status::ok);
  std::array<std::byte, 16> xd{};
  REQUIRE(r.h->control(0xC0, 0xE4, 0x1000, 0, xd, 1000ms).status == usb_status::ok);

  const bridge_stats s = r.bridge.stats();
  CHECK(s.stream_write_arms - base.stream_write_arms == 1);
  CHECK(s.stream_read_arms - base.stream_read_arms == 1);
  CHECK(s.sram_write_arms - base.sram_write_arms == 1);
  CHECK(s.bulk_out - base.bulk_out == 2);
  CHECK(s.bulk_in - base.bulk_in == 1);
  CHECK(s.xdata_reads - base.xdata_reads == 1);
  CHECK(s.stream_write_bytes - base.stream_write_bytes == 4 * KiB);
  CHECK(s.stream_read_bytes - base.stream_read_bytes == 8);
  CHECK(s.sram_write_bytes - base.sram_write_bytes == 2048);
  CHECK(s.xdata_read_bytes - base.xdata_read_bytes == 16);
  CHECK(s.largest_bulk_out == 4 * KiB);
  CHECK(s.largest_bulk_in == 8);
  CHECK(s.largest_stream_write == 4 * KiB);
  CHECK(s.power_requests == 1);
  CHECK(s.errors == 0);
  // Bring-up: 4 ports x 8 config writes + the GPU's BAR sizing, all as single TLPs + completions.
  CHECK(s.single_tlps == s.completions);
  CHECK(s.single_tlps >= 32);
  // 4 KiB at 3.6 MB/s + 8 B at 3.6 MB/s + 2 KiB at 300 MB/s + 7 requests x 20 us.
  const double expected_s = 4096 / 3.6e6 + 8 / 3.6e6 + 2048 / 300e6 + 7 * 20e-6;
  const double modelled_s = std::chrono::duration<double>(s.modelled_time - base.modelled_time).count();
  CHECK(modelled_s == doctest::Approx(expected_s).epsilon(0.001));
}

TEST_CASE("real time mode paces transfers to the modelled rate on the wall clock") {
  bridge_config cfg;
  cfg.limits.time = time_mode::real;
  rig r(cfg);
  const auto start = steady_clock::now();
  const std::vector<std::byte> data = pattern(512 * KiB, 10);
  for (int i = 0; i < 4; ++i) {  // 2 MiB through the SRAM at 300 MB/s: about 7 ms
    REQUIRE(arm_sram(*r.h, false, 0, data.size()).status == usb_status::ok);
    std::vector<std::byte> copy = data;
    REQUIRE(r.h->bulk(0x02, copy, 1000ms).status == usb_status::ok);
  }
  const double wall_s = std::chrono::duration<double>(steady_clock::now() - start).count();
  CHECK(wall_s >= 4 * 512 * 1024 / 300e6);
  CHECK(wall_s < 1.0);
}

TEST_CASE("with limits off nothing times out or wedges") {
  bridge_config cfg;
  cfg.limits.enabled = false;
  rig r(cfg);
  const std::uint64_t bar0 = bring_up(r);
  const std::vector<std::byte> big = pattern(4 * MiB, 11);
  CHECK(memory_write(*r.h, bar0, big, 1000ms).status == usb_status::ok);
  CHECK_FALSE(r.bridge.wedged());
  std::vector<std::byte> direct(big.size());
  r.g.vram().read({0}, direct);
  CHECK(direct == big);
  CHECK(r.bridge.stats().modelled_time == std::chrono::nanoseconds(0));
}
