// emu_driver_test.cpp: the emulated GPU brought up by emu_driver and driven only through
// runtime/queue's queues: bring-up and SDMA, graph replay through a small compute ring, a page
// fault during a dispatch and the queue's recovery, and a hung queue timing out.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <string>

#include "drivers/emu/emu_driver.hpp"
#include "runtime/queue/emit_signal.hpp"
#include "runtime/queue/indirect_buffer.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::emu;
namespace pm4 = tg::queue::pm4;
namespace q = tg::queue;
using namespace std::chrono_literals;

namespace {

struct gfx11 {
  static constexpr gfx_gen gen = gfx_gen::gfx11;
};
struct gfx12 {
  static constexpr gfx_gen gen = gfx_gen::gfx12;
};

q::gpu_va qva(gpu_va va) { return {va.value}; }

// A program whose only user SGPRs are the kernarg pointer (facts 6.4), at `code`.
pm4::kernel_summary kernel_at(emu_driver& d, gpu_va code) {
  const q::reg_table& gc = *d.device().chip().gc_table;
  return {qva(code), 0, 8, 0, gc.encode("regCOMPUTE_PGM_RSRC2", {{"USER_SGPR", 2}}), 0,
          std::uint16_t(pm4::kcp_kernarg_segment_ptr | pm4::kcp_wavefront_size32)};
}

pm4::dispatch_args one_group(emu_driver& d, gpu_va kernargs) {
  return {d.gfx(), {1, 1, 1}, {64, 1, 1}, qva(kernargs), qva(d.scratch())};
}

// A host kernel that adds one to the 32-bit counter its first argument points at.
void register_increment(emu_driver& d, gpu_va code) {
  d.device().register_kernel(code, [](dispatch_context& ctx) {
    const auto counter = ctx.kernarg<gpu_va>(0);
    ctx.store(counter, ctx.load<std::uint32_t>(counter) + 1);
  });
}

std::uint32_t load32(const emu_allocation& a, std::size_t offset) {
  std::uint32_t v;
  std::memcpy(&v, a.host.data() + offset, 4);
  return v;
}

// The parts of one "increment the counter" dispatch: code, kernargs pointing at the counter.
struct increment_rig {
  explicit increment_rig(emu_driver& d) : code(d.allocate(4096)), args(d.allocate(4096)), counter(d.allocate(4096)) {
    register_increment(d, code.va);
    std::memcpy(args.host.data(), &counter.va.value, 8);
  }
  q::cmd_buffer dispatch(emu_driver& d) const {
    q::cmd_buffer cb;
    pm4::emit_dispatch(cb, kernel_at(d, code.va), one_group(d, args.va));
    return cb;
  }
  emu_allocation code, args, counter;
};

}  // namespace

TEST_CASE_TEMPLATE("bring-up: an SDMA copy and a compute dispatch through the driver's queues", G, gfx11, gfx12) {
  emu_driver d({.gen = G::gen});
  CHECK(d.device().running());
  emu_allocation src = d.allocate(64 << 10), dst = d.allocate(64 << 10);
  for (std::size_t i = 0; i < src.bytes; ++i) src.host[i] = std::byte(i * 7 + 3);
  q::cmd_buffer cb;
  q::sdma::emit_copy_linear(cb, qva(dst.va), qva(src.va), src.bytes);
  d.copy().submit(cb);

  increment_rig inc(d);
  d.compute().submit(inc.dispatch(d));
  d.synchronize(5s);
  CHECK(std::memcmp(src.host.data(), dst.host.data(), src.bytes) == 0);
  CHECK(load32(inc.counter, 0) == 1);
  CHECK(d.device().faults().empty());
  d.release(src);
  d.release(dst);
}

TEST_CASE_TEMPLATE("a recorded dispatch + signal replayed 10,000 times through an 8 KiB ring", G, gfx11, gfx12) {
  emu_driver d({.gen = G::gen, .compute_ring_bytes = 8 << 10});
  increment_rig inc(d);
  emu_allocation done_mem = d.allocate(4096), ib_mem = d.allocate(4096);
  q::gpu_signal done("graph", "done", done_mem.memory().slice(0, q::gpu_signal::size_bytes));

  // The graph: the dispatch, then its own signal, whose value each replay patches.
  q::cmd_buffer recorded = inc.dispatch(d);
  const std::size_t value_dword = recorded.size() + q::pm4_signal_value_dword;
  q::emit_signal_pm4(recorded, done, 0);
  q::indirect_buffer ib("graph", ib_mem.memory(), recorded);

  constexpr std::uint32_t replays = 10'000;
  for (std::uint32_t i = 1; i <= replays; ++i) {
    ib.wait_idle(5s);
    ib.patch(value_dword, i);
    d.compute().submit_ib(ib);
    done.wait(i, 5s);  // the signal wait between replays
  }
  d.synchronize(5s);
  CHECK(d.device().faults().empty());  // no overrun (a protocol fault), no page fault
  CHECK(load32(inc.counter, 0) == replays);
  CHECK(done.value() == replays);
  // The ring went round many times: each replay is an INDIRECT_BUFFER and a RELEASE_MEM.
  const q::ring_pm4& ring = d.compute().pm4_ring();
  CHECK(ring.put() > 10 * ring.size_units());
  CHECK(d.device().stats().dispatches == replays);
}

TEST_CASE_TEMPLATE("a page fault in a dispatch is reported with its address and the queue recovers", G, gfx11, gfx12) {
  emu_driver d({.gen = G::gen});
  increment_rig inc(d);
  // A buffer released before use: its VA is unmapped again (and the TLB flushed). Nothing is
  // allocated after the release, so the VA allocator cannot hand the range out again.
  emu_allocation bad_args = d.allocate(4096), gone = d.allocate(4096);
  const gpu_va bad = gone.va + 0x40;
  d.release(gone);
  std::memcpy(bad_args.host.data(), &bad.value, 8);

  q::cmd_buffer faulting;
  pm4::emit_dispatch(faulting, kernel_at(d, inc.code.va), one_group(d, bad_args.va));
  d.compute().submit(faulting);

  const auto t0 = std::chrono::steady_clock::now();
  std::string error;
  try {
    d.synchronize(10s);
  } catch (const tg::device_error& e) {
    error = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO(error);
  CHECK(error.find("compute0") != std::string::npos);
  CHECK(error.find(tg::str(bad)) != std::string::npos);  // the faulting address
  CHECK(took < 5s);                                      // found by the wait hook, not the timeout
  REQUIRE(d.device().faults().size() == 1);
  CHECK(d.device().faults()[0].kind == fault_kind::page_fault);
  CHECK(d.device().faults()[0].address == bad);
  CHECK(d.compute().is_failed());
  CHECK_THROWS_AS(d.compute().submit(inc.dispatch(d)), tg::device_error);  // failed until recovered

  d.recover_compute();
  CHECK_FALSE(d.compute().is_failed());
  d.compute().submit(inc.dispatch(d));
  d.compute().submit(inc.dispatch(d));
  d.synchronize(5s);
  CHECK(load32(inc.counter, 0) == 2);
  CHECK(d.device().faults().size() == 1);  // nothing new
  CHECK(d.recoveries() == 1);
}

TEST_CASE_TEMPLATE("a hung queue makes synchronize fail within its timeout, naming the queue", G, gfx11, gfx12) {
  emu_driver d({.gen = G::gen});
  increment_rig inc(d);
  d.device().freeze_engine(engine_id::compute, true);  // fault injection: the queue stops advancing
  d.compute().submit(inc.dispatch(d));

  const auto t0 = std::chrono::steady_clock::now();
  std::string error;
  try {
    d.synchronize(300ms);
  } catch (const tg::device_error& e) {
    error = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO(error);
  CHECK(error.find("compute0") != std::string::npos);
  CHECK(took >= 300ms);
  CHECK(took < 2s);
  CHECK(load32(inc.counter, 0) == 0);
  CHECK(d.compute().is_failed());

  // The driver resets the queue; the dropped submission never runs, the next one does.
  d.recover_compute();
  d.device().freeze_engine(engine_id::compute, false);
  d.compute().submit(inc.dispatch(d));
  d.synchronize(5s);
  CHECK(load32(inc.counter, 0) == 1);
  CHECK(d.device().faults().empty());
}

TEST_CASE("a hung SDMA queue fails its synchronize too, naming sdma0") {
  emu_driver d({.gen = gfx_gen::gfx12});
  emu_allocation a = d.allocate(4096), b = d.allocate(4096);
  d.device().freeze_engine(engine_id::sdma, true);
  q::cmd_buffer cb;
  q::sdma::emit_copy_linear(cb, qva(b.va), qva(a.va), 4096);
  d.copy().submit(cb);
  CHECK_THROWS_WITH_AS(d.synchronize(200ms), doctest::Contains("sdma0"), tg::device_error);
  d.recover_copy();
  d.device().freeze_engine(engine_id::sdma, false);
  d.copy().submit(cb);
  d.synchronize(5s);
  CHECK(d.device().faults().empty());
}

namespace {

TEST_CASE("a slow queue finishes late but correctly, and a short synchronize names it") {
  emu_driver d({.gen = gfx_gen::gfx11});
  increment_rig inc(d);
  // fault injection: one packet per round, 20 ms apart; a dispatch is several packets
  d.device().slow_engine(engine_id::compute, std::chrono::microseconds(20000));
  for (int i = 0; i < 3; ++i) d.compute().submit(inc.dispatch(d));
  std::string error;
  try {
    d.synchronize(50ms);
  } catch (const tg::device_error& e) {
    error = e.what();
  }
  INFO(error);
  CHECK(error.find("compute0") != std::string::npos);
  // Slow is not hung: with the delay removed and the queue reset, work completes.
  d.device().slow_engine(engine_id::compute, std::chrono::microseconds(0));
  d.recover_compute();
  d.compute().submit(inc.dispatch(d));
  d.synchronize(5s);
  CHECK(load32(inc.counter, 0) >= 1);
}

}  // namespace
