// replay_stress_test.cpp: graph replay through indirect buffers on a small ring, against a
// software CP on another thread.
//
// 64 IBs, each a recorded two-kernel graph (the real dispatch sequence of tinygrad's AMDComputeQueue.exec plus a
// RELEASE_MEM of a graph signal), are replayed 5,000 times round-robin on a 4 KiB ring. Each
// replay patches, in place, the workgroup counts, the kernel arguments (kept in the IB's data
// tail) and the graph signal's value. The engine checks, per kernel and per IB, that all of them
// belong to one replay, and that the ring's timeline values arrive in order. A replay patched
// while the engine still read its IB, or ring space overwritten before the engine consumed it,
// shows up as mixed values, a bad header or an out-of-order value. The engine pauses now and then
// so the producer catches up: in the first half the IBs' reuse protocol makes it wait, in the
// second half large NOP submissions fill the ring and back-pressure makes it wait.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <tg/core/error.hpp>

#include "tests/runtime/queue/fake_pm4_engine.hpp"
#include "tests/runtime/queue/queue_rig.hpp"
#include "runtime/queue/emit_signal.hpp"
#include "runtime/queue/queue_compute.hpp"

using namespace tg::queue;
using namespace std::chrono_literals;
using tg::str;

namespace {

constexpr std::uint32_t replays = 5000;
constexpr std::size_t slots = 64;
constexpr std::size_t kernels = 2;
constexpr std::uint32_t arg_mix = 2654435761u;  // arg1 = arg0 * arg_mix + kernel

// Where a replay patches one recorded graph.
struct graph_slot {
  std::unique_ptr<indirect_buffer> ib;
  std::size_t workgroups_x[kernels];
  std::size_t args[kernels];  // two dwords each: replay, replay * arg_mix + kernel
  std::size_t signal_value;
};

graph_slot record(std::size_t index, queue_memory memory, const gpu_signal& graph_done) {
  constexpr std::size_t args_dword = 256;  // kernargs after the commands, 8-byte aligned
  cmd_buffer cb;
  graph_slot g;
  for (std::size_t k = 0; k < kernels; ++k) {
    g.args[k] = args_dword + 2 * k;
    pm4::kernel_summary kernel{.entry = gpu_va{0x7000'0000 + 0x1000 * k}, .group_segment_bytes = 0,
                               .kernarg_bytes = 8, .rsrc1 = 0, .rsrc2 = 0, .rsrc3 = 0,
                               .code_properties = pm4::kcp_kernarg_segment_ptr | pm4::kcp_wavefront_size32};
    pm4::dispatch_args launch{.gfx = pm4::gfx_version::gfx11, .workgroups = {1, 1, 1},
                              .workgroup_size = {32, 1, 1}, .kernargs = memory.va + 4 * g.args[k],
                              .scratch = gpu_va{0}};
    pm4::emit_dispatch(cb, kernel, launch);
    // DISPATCH_DIRECT is followed only by the 2-dword EVENT_WRITE; its DW1 is workgroups in x.
    g.workgroups_x[k] = cb.size() - pm4::event_write_dwords - pm4::dispatch_direct_dwords + 1;
  }
  g.signal_value = cb.size() + pm4_signal_value_dword;
  emit_signal_pm4(cb, graph_done, 0);
  REQUIRE(cb.size() <= args_dword);
  g.ib = std::make_unique<indirect_buffer>(str("graph", index), memory, cb);
  return g;
}

// What the software CP checks, on its own thread; read after it stopped.
struct replay_checker {
  tg::test::host_arena& arena;
  std::vector<std::string> errors;
  std::vector<std::uint32_t> graphs_seen;  // graph signal values, in execution order
  std::uint64_t last_timeline = 0;
  std::uint32_t replay = 0;  // of the IB being executed
  std::size_t kernel = 0;

  void on_dispatch(const tg::test::fake_dispatch& d) {
    gpu_va kernargs{std::uint64_t(d.user_data[1]) << 32 | d.user_data[0]};
    std::byte* p = arena.at(kernargs, 8);
    if (!d.from_ib || !p) return errors.push_back("dispatch outside an IB or kernargs outside memory");
    std::uint32_t a[2];
    std::memcpy(a, p, 8);
    if (kernel == 0) replay = a[0];
    if (a[0] != replay || a[1] != a[0] * arg_mix + kernel || d.workgroups[0] != a[0] % 1000 + 1 + kernel)
      errors.push_back(str("kernel ", kernel, " of replay ", replay, " saw args ", a[0], ", ", a[1], " and x ",
                           d.workgroups[0]));
    ++kernel;
  }

  void on_release(const tg::test::fake_release& r) {
    if (r.from_ib) {
      if (kernel != kernels || r.value != replay)
        errors.push_back(str("graph signal ", r.value, " after ", kernel, " kernels of replay ", replay));
      graphs_seen.push_back(std::uint32_t(r.value));
      kernel = 0;
    } else {
      if (r.value != last_timeline + 1) errors.push_back(str("timeline ", r.value, " after ", last_timeline));
      last_timeline = r.value;
    }
  }
};

}  // namespace

TEST_CASE("5000 graph replays through 64 IBs on a 4 KiB ring: every replay runs intact and in order") {
  auto start = std::chrono::steady_clock::now();
  tg::test::queue_rig rig(4096, 4 << 20);
  gpu_signal graph_done("graph 0", "done", rig.arena.carve(16, 16));
  graph_done.set(0);
  queue_compute q({.ring = rig.config("compute0", 2000ms), .signal = rig.signal});

  std::vector<graph_slot> graphs;
  for (std::size_t i = 0; i < slots; ++i) graphs.push_back(record(i, rig.arena.carve(2048), graph_done));
  cmd_buffer padding;
  pm4::emit_nop(padding, 400);

  replay_checker check{rig.arena};
  tg::test::fake_pm4_engine engine(
      rig.arena, rig.ring, rig.pointers.rptr, rig.pointers.wptr,
      {.pause_every = 256, .pause_for = 1000us,
       .on_dispatch = [&](const tg::test::fake_dispatch& d) { check.on_dispatch(d); },
       .on_release = [&](const tg::test::fake_release& r) { check.on_release(r); }});
  engine.start();

  // A failure on this side (a timeout after the engine stopped on a bad packet) is kept, so the
  // engine's own findings are still reported below.
  std::string producer_error;
  std::uint64_t ib_waits = 0, space_waits_first_half = 0;
  try {
    for (std::uint32_t replay = 1; replay <= replays; ++replay) {
      graph_slot& g = graphs[replay % slots];
      if (!g.ib->is_idle()) ++ib_waits;
      g.ib->wait_idle(2000ms);
      for (std::size_t k = 0; k < kernels; ++k) {
        g.ib->patch(g.workgroups_x[k], replay % 1000 + 1 + std::uint32_t(k));
        g.ib->patch(g.args[k], replay);
        g.ib->patch(g.args[k] + 1, replay * arg_mix + std::uint32_t(k));
      }
      g.ib->patch(g.signal_value, replay);
      q.submit_ib(*g.ib);
      if (replay == replays / 2) space_waits_first_half = q.pm4_ring().space_waits();
      if (replay > replays / 2 && replay % 8 == 0) q.submit(padding);
    }
    q.synchronize(2000ms);
  } catch (const std::exception& e) {
    producer_error = e.what();
  }
  engine.stop();
  auto elapsed = std::chrono::steady_clock::now() - start;

  CHECK_MESSAGE(producer_error.empty(), producer_error);
  CHECK(engine.errors().empty());
  for (const std::string& e : engine.errors()) MESSAGE(e);
  CHECK(check.errors.empty());
  for (std::size_t i = 0; i < check.errors.size() && i < 10; ++i) MESSAGE(check.errors[i]);
  REQUIRE(check.graphs_seen.size() == replays);
  std::size_t out_of_order = 0;
  for (std::uint32_t i = 0; i < replays; ++i)
    if (check.graphs_seen[i] != i + 1 && ++out_of_order <= 5)
      MESSAGE("replay " << i + 1 << " ran with the values of replay " << check.graphs_seen[i]);
  CHECK(out_of_order == 0);
  CHECK(graph_done.value() == replays);
  CHECK(q.timeline_signal().value() == q.last_submitted().value);
  CHECK(q.last_submitted().value == replays + (replays / 8 - replays / 2 / 8));  // + the padding submissions
  // Both limits were hit: IBs still in use (first half), then a full ring (second half).
  CHECK(ib_waits > 0);
  CHECK(q.pm4_ring().space_waits() > space_waits_first_half);
  MESSAGE("ib waits " << ib_waits << ", ring waits " << q.pm4_ring().space_waits() << " (" << space_waits_first_half
                      << " in the first half), "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms");
  CHECK(elapsed < 5s);
}
