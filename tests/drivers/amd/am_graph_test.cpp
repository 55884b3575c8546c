// am_graph_test.cpp: graphs on the AMD backend over the emulated GPU (gfx11 and gfx12, PCI and
// the USB bridge): a replay computes what the same launches compute one by one, is one
// submission (one IB, one signal), patches variables, grids and swapped buffers in place,
// 10,000 replays through an 8 KiB compute ring allocate nothing, in VRAM or on the host, and
// programs and graphs made before a GPU fault work after the queue's recovery.
#include <doctest/doctest.h>


#include "drivers/amd/am_backend.hpp"
#include "drivers/emu/emu_device.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"
#include "drivers/emu/usb/emu_bridge.hpp"
#include "runtime/transport/open_transport.hpp"
#include "tests/runtime/jit/graph_checks.hpp"

namespace {

using tg::test::chain;
using tg::test::chain_n;

// "TEST:EMU8K" and "TEST:EMU8K:gfx12": the emulated GPU on PCI with an 8 KiB compute ring
// (AMD:EMU's is 1 MiB), so that 10,000 replays wrap it many times. The machine stays reachable for
// its counters.
std::shared_ptr<tg::emu::emulated_machine> small_ring_machine;
const tg::backend_registration small_ring("TEST:EMU8K", [](const std::string& args, const tg::device_options&) {
  auto m = std::make_shared<tg::emu::emulated_machine>(
      tg::emu::emulated_machine_config{.gen = tg::emu::parse_emu_device_args(args).gen});
  small_ring_machine = m;
  tg::amd::am_options o;
  o.firmware_dir = m->firmware_dir();
  o.compute_ring_bytes = 8 << 10;
  return std::shared_ptr<tg::backend>(
      std::make_shared<tg::amd::am_backend>("AMD:EMU", tg::transport::open_transport("AMD", m->buses()), o, m));
});

tg::emu::gpu_stats stats(tg::device& dev) {
  return dynamic_cast<tg::emu::emu_device&>(dev.impl()).emulated_gpu().stats();
}
tg::amd::am_device& am(tg::device& dev) { return dynamic_cast<tg::amd::am_backend&>(dev.impl()).device(); }

}  // namespace

TEST_CASE("a replayed graph on AMD:EMU computes what its launches compute one by one") {
  for (const char* name : {"AMD:EMU", "AMD:EMU:gfx12", "AMD:EMU:usb"}) {
    CAPTURE(std::string(name));
    tg::device dev(name);
    chain c(dev);
    tg::graph g = c.capture();
    const std::vector<float> x = tg::test::chain_input(1), blank(chain_n, -100.0f);
    // rows = 0 leaves the last kernel nothing to do: its dispatch becomes a NOP, then comes back.
    for (auto [v, rows] : {std::pair<std::int64_t, std::int64_t>{0, chain_n}, {3, 17}, {7, 0}, {-5, 299}})
      tg::test::check_replay_equals_direct(c, g, v, rows);
    // A swap holds for its replay only.
    g.replay({2, chain_n}, {{c.x_param, c.x1}});
    CHECK(c.read_w() == tg::test::chain_reference(tg::test::chain_input(2), 2, chain_n, blank));
    g.replay({2, chain_n});
    CHECK(c.read_w() == tg::test::chain_reference(x, 2, chain_n, blank));
    CHECK(dynamic_cast<tg::emu::emu_device&>(dev.impl()).emulated_gpu().faults().empty());
  }
}

TEST_CASE("a replay on AMD:EMU is one submission: one indirect buffer and one signal") {
  tg::device dev("AMD:EMU");
  chain c(dev);
  tg::graph g = c.capture();
  g.replay({1, chain_n});
  dev.synchronize();
  const tg::emu::gpu_stats before = stats(dev);
  const std::uint64_t submitted = am(dev).compute().last_submitted().value;
  g.replay({2, chain_n});
  dev.synchronize();
  tg::emu::gpu_stats after = stats(dev);
  CHECK(am(dev).compute().last_submitted().value == submitted + 1);
  CHECK(after.indirect_buffers == before.indirect_buffers + 1);
  CHECK(after.release_mems == before.release_mems + 1);
  CHECK(after.dispatches == before.dispatches + 4);
  // The same launches one by one are four submissions.
  c.launch_directly(c.x0, 2, chain_n);
  dev.synchronize();
  CHECK(am(dev).compute().last_submitted().value == submitted + 5);
  CHECK(stats(dev).indirect_buffers == after.indirect_buffers);
  // rows = 0: three dispatches, still one submission.
  after = stats(dev);
  g.replay({2, 0});
  dev.synchronize();
  CHECK(stats(dev).dispatches == after.dispatches + 3);
  CHECK(stats(dev).indirect_buffers == after.indirect_buffers + 1);
}

TEST_CASE("over the emulated USB bridge a replay takes fewer bridge requests than its launches one by one") {
  tg::device dev("AMD:EMU:usb");
  chain c(dev);
  tg::graph g = c.capture();
  auto& emu = dynamic_cast<tg::emu::emu_device&>(dev.impl());
  // Every control and bulk transfer the host made (tg::backend::link_traffic), checked against
  // what the bridge counted.
  auto requests = [&] {
    const tg::emu::usb::bridge_stats b = emu.machine().bridge()->stats();
    const std::optional<tg::link_counts> link = dev.impl().link_traffic();
    REQUIRE(link);
    CHECK(link->transfers >= b.bulk_out + b.bulk_in);
    return link->transfers;
  };
  g.replay({1, chain_n});
  dev.synchronize();
  // The calls alone, from an idle GPU: a synchronize's polls depend on how fast the GPU runs.
  std::uint64_t before = requests();
  g.replay({2, 100});  // both variables change: kernargs and a grid patched
  const std::uint64_t replay = requests() - before;
  dev.synchronize();
  before = requests();
  c.launch_directly(c.x0, 2, 100);
  const std::uint64_t direct = requests() - before;
  dev.synchronize();
  MESSAGE("AMD:EMU:usb, 4 launches: ", replay, " bridge transfers replayed, ", direct, " one by one");
  CHECK(replay * 4 <= direct);  // the replay of four launches costs no more than one launch
  // Rows past 100 keep what the first replay (v = 1, all rows) wrote.
  const std::vector<float> x = tg::test::chain_input(1);
  const std::vector<float> first = tg::test::chain_reference(x, 1, chain_n, std::vector<float>(chain_n, -100.0f));
  CHECK(c.read_w() == tg::test::chain_reference(x, 2, 100, first));
}

TEST_CASE("an AMD graph refuses kernels and buffers of another device") {
  tg::device dev("AMD:EMU"), cpu("CPU");
  chain c(dev);
  SUBCASE("a CPU kernel") {
    tg::graph_builder b(dev);
    b.add(cpu.prepare(tg::test::scale_kernel()), {c.y, c.x0});
    CHECK_THROWS_WITH_AS(b.finish(), "AMD:EMU: graph launch 0: the kernel was not compiled for an AMD device",
                         tg::usage_error);
  }
  SUBCASE("a kernel of another AMD device") {
    tg::device other("AMD:EMU");
    tg::graph_builder b(dev);
    b.add(other.prepare(tg::test::scale_kernel()), {c.y, c.x0});
    CHECK_THROWS_WITH_AS(b.finish(), "AMD:EMU: graph launch 0: the kernel was compiled for another device",
                         tg::usage_error);
  }
  SUBCASE("a CPU buffer") {
    tg::graph_builder b(dev);
    tg::buffer host = cpu.allocate(4 * chain_n);
    CHECK_THROWS_WITH_AS(b.add(c.scale, {c.y, host}),
                         "graph_builder on AMD:EMU, launch 0, slot 1: the buffer belongs to another device",
                         tg::usage_error);
    tg::graph g = c.capture();
    CHECK_THROWS_WITH_AS(g.replay({1, 2}, {{c.x_param, host}}),
                         "graph::replay: buffer parameter 'x': the swap's buffer belongs to another device",
                         tg::usage_error);
  }
}

TEST_CASE("an AMD launch refuses a buffer off the 16-byte boundary its kernel's loads assume") {
  tg::device dev("AMD:EMU");
  tg::prepared_kernel acc = dev.prepare(tg::test::accumulate_kernel());
  tg::buffer sum = dev.allocate(64 * 4 + 16);
  void* aligned = sum.data();
  void* inside = static_cast<char*>(sum.data()) + 4;  // within the allocation, 4 bytes in
  const std::int64_t one[] = {1};
  CHECK_NOTHROW(acc.compiled()->launch(std::span(&aligned, 1), one));
  CHECK_THROWS_WITH_AS(acc.compiled()->launch(std::span(&inside, 1), one),
                       doctest::Contains("is not 16-byte aligned (AMD kernels take whole allocations)"), tg::usage_error);
  dev.synchronize();
}

namespace {

// One kernel, acc += v, captured once and replayed 10,000 times without waiting in between.
void replay_10000_times(const char* name) {
  CAPTURE(std::string(name));
  tg::device dev(name);
  tg::prepared_kernel acc = dev.prepare(tg::test::accumulate_kernel());
  tg::buffer sum = dev.allocate(64 * 4);
  tg::graph_builder b(dev);
  const tg::graph_var v = b.var("v");
  b.add(acc, {sum}, {v});
  tg::graph g = b.finish();
  g.replay({0});  // warm: the queue's reused command vectors reach their size
  dev.synchronize();
  tg::amd::am_device& d = am(dev);
  const std::uint64_t vram_before = d.allocations_made();
  const std::uint64_t ibs_before = small_ring_machine->device().stats().indirect_buffers;
  constexpr std::int64_t replays = 10'000;
  std::int64_t value[1];
  const std::uint64_t heap_before = tg::test::thread_allocations;
  for (std::int64_t i = 1; i <= replays; ++i) {
    value[0] = i;
    g.replay(value);
  }
  const std::uint64_t heap_after = tg::test::thread_allocations;
  dev.synchronize();
  CHECK(d.allocations_made() == vram_before);
  CHECK(heap_after == heap_before);
  CHECK(small_ring_machine->device().stats().indirect_buffers == ibs_before + replays);
  const tg::queue::ring_pm4& ring = d.compute().pm4_ring();
  CHECK(ring.size_units() * 4 == 8 << 10);
  CHECK(ring.put() > 20 * ring.size_units());  // wrapped many times
  std::vector<std::int32_t> got(64);
  sum.copy_out(got.data(), 64 * 4);
  for (std::int32_t s : got) REQUIRE(s == replays * (replays + 1) / 2);
  CHECK(small_ring_machine->device().faults().empty());
}

}  // namespace

TEST_CASE("programs and graphs made before a GPU fault keep working after recover_compute") {
  // What BEAM on the user's own card relies on: a candidate faults the GPU, the driver recovers
  // the queue, and the model's programs and captured graphs run on.
  for (const char* name : {"AMD:EMU", "AMD:EMU:gfx12:usb"}) {
    CAPTURE(std::string(name));
    tg::device dev(name);
    tg::prepared_kernel acc = dev.prepare(tg::test::accumulate_kernel());
    tg::buffer sum = dev.allocate(64 * 4);
    std::int64_t expected = 0;
    // More launches than the program has kernarg slots, so that every slot remembers a
    // submission of the timeline before the fault, with values the new one has not reached.
    for (std::int64_t v = 1; v <= 40; ++v) acc.launch(std::vector<tg::buffer>{sum}, std::vector<std::int64_t>{v}), expected += v;
    tg::graph_builder b(dev);
    const tg::graph_var v = b.var("v");
    b.add(acc, {sum}, {v});
    tg::graph g = b.finish();
    for (std::int64_t r = 1; r <= 3; ++r) g.replay({100 * r}), expected += 100 * r;
    dev.synchronize();

    tg::kernel_builder kb;  // stores 64 TiB past its buffer: a GPU page fault
    auto i = kb.output_range(64);
    kb.store(0, i + (std::int64_t{1} << 44), kb.cast(tg::dtype::int32, kb.variable(0)));
    tg::buffer victim = dev.allocate(64 * 4);
    dev.launch(kb.finish(), std::vector<tg::buffer>{victim}, std::vector<std::int64_t>{1});
    CHECK_THROWS_WITH_AS(dev.synchronize(), doctest::Contains("GPU page fault"), tg::device_error);
    CHECK(am(dev).compute().is_failed());
    const std::uint64_t epoch = am(dev).compute().last_submitted().epoch;
    am(dev).recover_compute();
    CHECK(am(dev).compute().last_submitted().epoch == epoch + 1);

    for (std::int64_t w = 1; w <= 20; ++w) acc.launch(std::vector<tg::buffer>{sum}, std::vector<std::int64_t>{w}), expected += w;
    for (std::int64_t r = 1; r <= 3; ++r) g.replay({1000 * r}), expected += 1000 * r;
    std::vector<std::int32_t> got(64);
    sum.copy_out(got.data(), 64 * 4);
    for (std::int32_t s : got) REQUIRE(s == expected);
    CHECK_FALSE(am(dev).compute().is_failed());
  }
}

TEST_CASE("10,000 replays through an 8 KiB ring allocate nothing and each runs once") {
  replay_10000_times("TEST:EMU8K");
  replay_10000_times("TEST:EMU8K:gfx12");
}
