// am_queue_stress_test.cpp: the AM driver's queues under the promises users rely on, on emulated
// machines: graph replay through an 8 KiB compute ring (10,000 indirect-buffer replays on PCI,
// 1,000 recorded submissions behind the USB bridge with its limits on), a page fault during a
// dispatch reported with its queue and address and recovered, frozen compute and SDMA engines
// failing synchronize within its timeout by name, a slow engine caught by a short synchronize,
// and VRAM filled until allocate() fails, without a leak or damage to what was allocated before.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <tg/core/error.hpp>

#include "drivers/amd/am_device.hpp"
#include "tests/drivers/amd/am_dispatch.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"
#include "runtime/queue/emit_signal.hpp"
#include "runtime/queue/indirect_buffer.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg;
using namespace std::chrono_literals;
namespace pm4 = tg::queue::pm4;

namespace {

struct gfx11 {
  static constexpr emu::gfx_gen gen = emu::gfx_gen::gfx11;
};
struct gfx12 {
  static constexpr emu::gfx_gen gen = emu::gfx_gen::gfx12;
};

struct session_config {
  emu::gfx_gen gen = emu::gfx_gen::gfx11;
  emu::emulated_bus bus = emu::emulated_bus::pci;
  std::uint64_t vram_bytes = 512ull << 20;
  std::uint64_t compute_ring_bytes = 0;  // 0: the driver's default
  bool resize_bar0 = true;               // false: BAR0 stays at 256 MiB (no ReBAR)
};

// One emulated machine, its transport and an am_device booted on it (members in that order).
struct session {
  explicit session(const session_config& c)
      : m({.gen = c.gen, .vram_bytes = c.vram_bytes, .bus = c.bus}),
        t(open(m, c)),
        dev(*t, options(m, c)) {}

  static std::unique_ptr<transport::device_transport> open(emu::emulated_machine& m, const session_config& c) {
    transport::system_buses buses = m.buses();
    buses.pci_options.resize_bar0 = c.resize_bar0;
    return transport::open_transport("AMD", buses);
  }

  static amd::am_options options(const emu::emulated_machine& m, const session_config& c) {
    amd::am_options o;
    o.firmware_dir = m.firmware_dir();
    o.timeout = 2000ms;
    o.queue_timeout = 10000ms;
    o.compute_ring_bytes = c.compute_ring_bytes;
    return o;
  }

  emu::gpu& gpu() { return m.device(); }

  emu::emulated_machine m;
  std::unique_ptr<transport::device_transport> t;
  amd::am_device dev;
};

std::uint32_t read32(amd::am_device& dev, const amd::allocation& a, std::uint64_t offset = 0) {
  std::uint32_t v = 0;
  dev.copy_out(std::as_writable_bytes(std::span(&v, 1)), a, offset);
  return v;
}

void write64(amd::am_device& dev, const amd::allocation& a, std::uint64_t value) {
  dev.copy_in(a, 0, std::as_bytes(std::span(&value, 1)));
}

// The device_error text of `f()`, or "" when it does not throw one.
template <class F>
std::string device_error_of(F&& f) {
  try {
    f();
  } catch (const device_error& e) {
    return e.what();
  }
  return {};
}

// kernels/increment.ll, run as machine code by the emulated GPU: adds one to the 32-bit counter
// whose address is its first kernel argument; `args` points at `counter` unless a test says otherwise.
// Without LLVM's tools `ready` is false and the tests that dispatch check nothing more.
struct increment_kernel {
  explicit increment_kernel(session& s)
      : k(test::load_kernel(s.dev, "increment", "increment")), args(s.dev.allocate(4096)), counter(s.dev.allocate(4096)) {
    write64(s.dev, args, counter.va.value);
  }

  bool ready() const { return k.has_value(); }
  queue::cmd_buffer dispatch(amd::am_device& dev) const { return dispatch_with(dev, args); }
  queue::cmd_buffer dispatch_with(amd::am_device& dev, const amd::allocation& kernargs) const {
    return test::one_group_dispatch(dev, *k, kernargs);
  }
  std::uint32_t count(amd::am_device& dev) const { return read32(dev, counter); }

  std::optional<test::am_kernel> k;
  amd::allocation args, counter;
};

// The CPU's view of a CPU-visible allocation through the transport's BAR0 mapping (PCI with a
// large BAR). Writes reach VRAM before the GPU reads them: the doorbell flushes HDP first.
queue::queue_memory bar0_view(session& s, const amd::allocation& a) {
  std::byte* bar0 = s.t->bar(0).mapping();
  REQUIRE(bar0 != nullptr);
  REQUIRE(a.cpu_visible);
  return {{bar0 + a.pa.value, a.bytes}, a.va};
}

}  // namespace

TEST_CASE_TEMPLATE("an SDMA copy and a compute dispatch run through am_device's queues", G, gfx11, gfx12) {
  session s({.gen = G::gen});
  const std::size_t bytes = 64 << 10;
  amd::allocation src = s.dev.allocate(bytes), dst = s.dev.allocate(bytes);
  std::vector<std::byte> in(bytes);
  for (std::size_t i = 0; i < bytes; ++i) in[i] = std::byte(i * 7 + 3);
  s.dev.copy_in(src, 0, in);
  queue::cmd_buffer cb;
  queue::sdma::emit_copy_linear(cb, dst.va, src.va, bytes);
  s.dev.copy().submit(cb);

  increment_kernel inc(s);
  if (!inc.ready()) return;
  s.dev.compute().submit(inc.dispatch(s.dev));
  s.dev.synchronize(5s);
  std::vector<std::byte> out(bytes);
  s.dev.copy_out(out, dst, 0);
  CHECK(out == in);
  CHECK(inc.count(s.dev) == 1);
  CHECK(s.gpu().faults().empty());
}

// The recorded graph is one dispatch and a RELEASE_MEM of its own "done" signal, whose value
// each replay patches. Replays go through a pool of IB copies so the host waits only once per
// batch; a batch (250 replays of 12 ring dwords) is larger than the 8 KiB ring, so submit_ib
// also waits for ring space mid-batch, and the ring wraps dozens of times.
TEST_CASE_TEMPLATE("a recorded dispatch + signal replayed 10,000 times through an 8 KiB compute ring", G, gfx11,
                   gfx12) {
  session s({.gen = G::gen, .compute_ring_bytes = 8 << 10});
  increment_kernel inc(s);
  if (!inc.ready()) return;
  constexpr std::uint32_t replays = 10'000, batch = 250;
  constexpr std::size_t slot_bytes = 1024;
  amd::allocation done_mem = s.dev.allocate(4096, true), ib_mem = s.dev.allocate(batch * slot_bytes, true);
  const queue::gpu_signal done("graph", "done", bar0_view(s, done_mem).slice(0, queue::gpu_signal::size_bytes));

  queue::cmd_buffer recorded = inc.dispatch(s.dev);
  const std::size_t value_dword = recorded.size() + queue::pm4_signal_value_dword;
  queue::emit_signal_pm4(recorded, done, 0);
  REQUIRE(recorded.size() * 4 <= slot_bytes);
  std::vector<queue::indirect_buffer> ibs;
  for (std::uint32_t i = 0; i < batch; ++i)
    ibs.emplace_back("graph", bar0_view(s, ib_mem).slice(i * slot_bytes, slot_bytes), recorded);

  std::uint32_t late_signals = 0;
  for (std::uint32_t i = 1; i <= replays; ++i) {
    queue::indirect_buffer& ib = ibs[(i - 1) % batch];
    ib.wait_idle(5s);
    ib.patch(value_dword, i);
    s.dev.compute().submit_ib(ib);
    if (i % batch == 0) {
      done.wait(i, 5s);  // the host's signal wait between batches
      if (done.value() != i) ++late_signals;
    }
  }
  s.dev.synchronize(5s);
  CHECK(late_signals == 0);
  CHECK(s.gpu().faults().empty());  // no ring overrun (a protocol fault), no page fault
  CHECK(inc.count(s.dev) == replays);
  CHECK(done.value() == replays);
  CHECK(s.gpu().stats().dispatches == replays);
  CHECK(s.gpu().stats().indirect_buffers == replays);
  const queue::ring_pm4& ring = s.dev.compute().pm4_ring();
  CHECK(ring.size_units() * 4 == 8 << 10);
  CHECK(ring.put() > 20 * ring.size_units());  // wrapped many times
  CHECK(s.dev.compute().last_submitted().value == replays);
}

// USB: no BAR mapping, so the graph is submitted as commands (dispatch + its signal) rather than
// an IB; every ring write and doorbell is a bridge message. The default USB ring is 8 KiB, and a
// batch of 100 submissions (about 70 ring dwords each) overfills it, so submit waits for space too.
TEST_CASE("1,000 recorded submissions through the 8 KiB compute ring behind the USB bridge, limits on") {
  session s({.gen = emu::gfx_gen::gfx12, .bus = emu::emulated_bus::usb});
  REQUIRE(s.m.bridge()->limits().enabled);
  increment_kernel inc(s);
  if (!inc.ready()) return;
  amd::allocation done_mem = s.dev.allocate(4096);
  // A signal the test only reads back with copy_out; its memory view is never dereferenced here.
  std::vector<std::byte> unused(queue::gpu_signal::size_bytes);
  const queue::gpu_signal done("graph", "done", {unused, done_mem.va});

  queue::cmd_buffer recorded = inc.dispatch(s.dev);
  const std::size_t value_dword = recorded.size() + queue::pm4_signal_value_dword;
  queue::emit_signal_pm4(recorded, done, 0);

  constexpr std::uint32_t replays = 1'000, batch = 100;
  std::uint32_t late_signals = 0;
  for (std::uint32_t i = 1; i <= replays; ++i) {
    recorded[value_dword] = i;
    const queue::submission sub = s.dev.compute().submit(recorded);
    if (i % batch == 0) {
      s.dev.compute().wait(sub, 5s);  // the timeline signal behind submission i
      if (read32(s.dev, done_mem) != i) ++late_signals;
    }
  }
  s.dev.synchronize(5s);
  CHECK(late_signals == 0);
  CHECK(s.gpu().faults().empty());
  CHECK(inc.count(s.dev) == replays);
  CHECK(read32(s.dev, done_mem) == replays);
  CHECK(s.gpu().stats().dispatches == replays);
  const queue::ring_pm4& ring = s.dev.compute().pm4_ring();
  CHECK(ring.size_units() * 4 == 8 << 10);
  CHECK(ring.put() > 10 * ring.size_units());
  const emu::usb::bridge_stats b = s.m.bridge()->stats();
  CHECK(b.largest_stream_write <= s.t->limits().max_write_chunk);
  CHECK(b.largest_stream_read <= s.t->limits().max_read_chunk);
  CHECK(b.wedges == 0);
  CHECK(b.timeouts == 0);
  CHECK(b.errors == 0);
}

// The hardware reports a fault's page (IH DW4/DW5 and FAULT_ADDR hold VA bits 47:12), so the
// driver's message names the page; the emulator's record holds the exact byte address.
TEST_CASE_TEMPLATE("a page fault during a dispatch names compute0 and the address, and recovery restarts the queue",
                   G, gfx11, gfx12) {
  session s({.gen = G::gen});
  increment_kernel inc(s);
  if (!inc.ready()) return;
  // Kernel arguments pointing into a released buffer: its VA is unmapped (and the TLB flushed).
  // Nothing is allocated afterwards, so the VA cannot be handed out again.
  amd::allocation bad_args = s.dev.allocate(4096), gone = s.dev.allocate(4096);
  const memory::gpu_va bad = gone.va + 0x40;
  s.dev.release(gone);
  write64(s.dev, bad_args, bad.value);

  s.dev.compute().submit(inc.dispatch_with(s.dev, bad_args));
  const auto t0 = std::chrono::steady_clock::now();
  const std::string error = device_error_of([&] { s.dev.synchronize(10s); });
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO(error);
  CHECK(error.find("queue compute0: GPU page fault at VA " + str(tg::hex{bad.value / 4096 * 4096})) !=
        std::string::npos);
  CHECK(error.find("(read") != std::string::npos);  // the kernel's first access, its load
  CHECK(took < 5s);  // found by the queue's wait hook, not by the timeout
  const std::vector<emu::fault_record> faults = s.gpu().faults();
  REQUIRE(faults.size() == 1);  // the load faulted and the queue stopped there
  CHECK(faults[0].kind == emu::fault_kind::page_fault);
  CHECK(faults[0].engine == emu::engine_id::compute);
  CHECK(faults[0].address == bad);
  CHECK(s.dev.compute().is_failed());
  CHECK_THROWS_AS(s.dev.compute().submit(inc.dispatch(s.dev)), device_error);  // failed until recovered

  s.dev.recover_compute();
  CHECK_FALSE(s.dev.compute().is_failed());
  s.dev.compute().submit(inc.dispatch(s.dev));
  s.dev.compute().submit(inc.dispatch(s.dev));
  s.dev.synchronize(5s);
  CHECK(inc.count(s.dev) == 2);
  CHECK(s.gpu().faults().size() == faults.size());  // nothing new
  CHECK(s.dev.recoveries() == 1);
}

TEST_CASE_TEMPLATE("a frozen compute queue fails synchronize within its timeout naming compute0", G, gfx11, gfx12) {
  session s({.gen = G::gen});
  increment_kernel inc(s);
  if (!inc.ready()) return;
  s.gpu().freeze_engine(emu::engine_id::compute, true);  // fault injection: the queue stops advancing
  s.dev.compute().submit(inc.dispatch(s.dev));

  const auto t0 = std::chrono::steady_clock::now();
  const std::string error = device_error_of([&] { s.dev.synchronize(300ms); });
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO(error);
  CHECK(error.find("compute0") != std::string::npos);
  CHECK(took >= 300ms);
  CHECK(took < 3s);
  CHECK(inc.count(s.dev) == 0);
  CHECK(s.dev.compute().is_failed());

  // The driver resets the queue while the engine is still hung; the dropped submission never
  // runs, the next one does.
  s.dev.recover_compute();
  s.gpu().freeze_engine(emu::engine_id::compute, false);
  s.dev.compute().submit(inc.dispatch(s.dev));
  s.dev.synchronize(5s);
  CHECK(inc.count(s.dev) == 1);
  CHECK(s.gpu().faults().empty());
}

TEST_CASE("a frozen SDMA queue fails synchronize within its timeout naming sdma0") {
  session s({.gen = emu::gfx_gen::gfx12});
  amd::allocation a = s.dev.allocate(4096), b = s.dev.allocate(4096);
  const std::uint32_t marker = 0x5D3A0001;
  s.dev.copy_in(a, 0, std::as_bytes(std::span(&marker, 1)));
  s.gpu().freeze_engine(emu::engine_id::sdma, true);
  queue::cmd_buffer cb;
  queue::sdma::emit_copy_linear(cb, b.va, a.va, 4096);
  s.dev.copy().submit(cb);

  const auto t0 = std::chrono::steady_clock::now();
  const std::string error = device_error_of([&] { s.dev.synchronize(200ms); });
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO(error);
  CHECK(error.find("sdma0") != std::string::npos);
  CHECK(took >= 200ms);
  CHECK(took < 3s);
  CHECK(s.dev.copy().is_failed());

  // The driver resets the queue while the engine is still hung. After the thaw the new queue
  // runs a fill; the dropped copy stays dropped.
  s.dev.recover_copy();
  s.gpu().freeze_engine(emu::engine_id::sdma, false);
  amd::allocation c = s.dev.allocate(4096);
  queue::cmd_buffer fill;
  queue::sdma::emit_const_fill(fill, c.va, 0x77777777u, 4096);
  s.dev.copy().submit(fill);
  s.dev.synchronize(5s);
  CHECK(read32(s.dev, c, 4092) == 0x77777777u);
  CHECK(read32(s.dev, b) == 0);
  s.dev.copy().submit(cb);
  s.dev.synchronize(5s);
  CHECK(read32(s.dev, b) == marker);
  CHECK(s.gpu().faults().empty());
}

TEST_CASE("a slow compute queue is caught by a short synchronize and works again once recovered") {
  session s({.gen = emu::gfx_gen::gfx11});
  increment_kernel inc(s);
  if (!inc.ready()) return;
  // Fault injection: one packet per worker round, 20 ms apart; a dispatch is several packets, so
  // the timeline does not move for longer than the 50 ms synchronize allows.
  s.gpu().slow_engine(emu::engine_id::compute, 20ms);
  for (int i = 0; i < 3; ++i) s.dev.compute().submit(inc.dispatch(s.dev));
  const std::string error = device_error_of([&] { s.dev.synchronize(50ms); });
  INFO(error);
  CHECK(error.find("compute0") != std::string::npos);
  CHECK(s.dev.compute().is_failed());

  // Slow is not hung: without the delay and with the queue reset, work completes.
  s.gpu().slow_engine(emu::engine_id::compute, 0us);
  s.dev.recover_compute();
  const std::uint32_t before = inc.count(s.dev);
  CHECK(before <= 3);
  s.dev.compute().submit(inc.dispatch(s.dev));
  s.dev.synchronize(5s);
  CHECK(inc.count(s.dev) == before + 1);
}

namespace {

std::vector<std::byte> pattern(std::size_t bytes, std::uint32_t seed) {
  std::vector<std::byte> out(bytes);
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < bytes; i += 4) {
    x = x * 1664525u + 1013904223u;  // LCG: different bytes everywhere, cheap to make
    std::memcpy(out.data() + i, &x, 4);
  }
  return out;
}

// VRAM filled as far as it goes: allocations of 8 MiB, then 1 MiB, 64 KiB and 4 KiB, each size
// until allocate() throws. Every allocation gets a 4 KiB pattern at its start and its end.
struct vram_fill {
  struct failure {
    std::uint64_t bytes;
    std::string message;
  };
  std::vector<amd::allocation> allocations;
  std::vector<failure> failures;
  std::uint64_t total_bytes = 0;
};

constexpr std::uint64_t fill_sizes[] = {8ull << 20, 1ull << 20, 64ull << 10, 4ull << 10};
constexpr std::size_t mark_bytes = 4096;

// Where the patterns go: the first and the last 4 KiB (one place in a 4 KiB allocation).
std::vector<std::uint64_t> mark_offsets(const amd::allocation& a) {
  if (a.bytes == mark_bytes) return {0};
  return {0, a.bytes - mark_bytes};
}

vram_fill fill_vram(amd::am_device& dev) {
  vram_fill f;
  for (const std::uint64_t bytes : fill_sizes) {
    for (;;) {
      try {
        f.allocations.push_back(dev.allocate(bytes));
      } catch (const device_error& e) {
        f.failures.push_back({bytes, e.what()});
        break;
      }
      const amd::allocation& a = f.allocations.back();
      const std::uint32_t seed = std::uint32_t(f.allocations.size());
      for (const std::uint64_t at : mark_offsets(a)) dev.copy_in(a, at, pattern(mark_bytes, seed + std::uint32_t(at)));
      f.total_bytes += a.bytes;
    }
  }
  return f;
}

// The patterns fill_vram wrote, read back through copy_out.
std::size_t damaged_allocations(amd::am_device& dev, const vram_fill& f) {
  std::size_t damaged = 0;
  std::vector<std::byte> seen(mark_bytes);
  for (std::size_t i = 0; i < f.allocations.size(); ++i) {
    const amd::allocation& a = f.allocations[i];
    const std::uint32_t seed = std::uint32_t(i + 1);
    bool ok = true;
    for (const std::uint64_t at : mark_offsets(a)) {
      dev.copy_out(seen, a, at);
      ok = ok && seen == pattern(mark_bytes, seed + std::uint32_t(at));
    }
    if (!ok) ++damaged;
  }
  return damaged;
}

// "... out of VRAM: N bytes requested, F bytes free ..." -> F; or a page-table failure's
// "... the allocator has F bytes free ..." -> F. nullopt when the message names no free bytes.
std::optional<std::uint64_t> free_bytes_in(const std::string& message) {
  std::smatch m;
  if (!std::regex_search(message, m, std::regex("(\\d+) bytes free"))) return std::nullopt;
  return std::stoull(m[1]);
}

}  // namespace

// "Our memory manager never fails half-way": a failed allocate() changes nothing, whatever ran
// out (the heap, or VRAM for a new page table, which shares the heap when BAR0 is large).
TEST_CASE("allocating until VRAM is full fails cleanly: the error names the size and what is free, nothing leaks") {
  session_config c;
  SUBCASE("256 MiB of VRAM, all of it behind BAR0") { c.vram_bytes = 256ull << 20; }
  SUBCASE("512 MiB of VRAM, BAR0 256 MiB (page tables in their own pool)") {
    c.vram_bytes = 512ull << 20;
    c.resize_bar0 = false;
  }
  session s(c);
  INFO("VRAM ", c.vram_bytes >> 20, " MiB, large BAR ", s.dev.info().large_bar);
  const vram_fill first = fill_vram(s.dev);
  REQUIRE(first.failures.size() == std::size(fill_sizes));
  CHECK(first.total_bytes > c.vram_bytes / 2);  // the fill got far: most of VRAM is the heap
  for (const vram_fill::failure& f : first.failures) {
    INFO(f.message);
    CHECK(f.message.find(str(f.bytes, " bytes")) != std::string::npos);  // the size asked
    const std::optional<std::uint64_t> free = free_bytes_in(f.message);  // and what is free
    REQUIRE(free.has_value());
  }
  // After the last (4 KiB) failure nothing usable is left.
  CHECK(*free_bytes_in(first.failures.back().message) < 4096);

  // The failed allocations damaged nothing: the host sees every pattern, and the GPU still
  // translates the earlier allocations (an SDMA copy between two of them through their VAs).
  CHECK(damaged_allocations(s.dev, first) == 0);
  const amd::allocation& from = first.allocations.front();
  const amd::allocation& to = first.allocations.back();
  queue::cmd_buffer cb;
  queue::sdma::emit_copy_linear(cb, to.va, from.va, mark_bytes);
  s.dev.copy().submit(cb);
  s.dev.synchronize(5s);
  std::vector<std::byte> copied(mark_bytes);
  s.dev.copy_out(copied, to, 0);
  CHECK(copied == pattern(mark_bytes, 1));
  CHECK(s.gpu().faults().empty());

  // Nothing leaked: with everything released, the same fill gets exactly as far again.
  for (const amd::allocation& a : first.allocations) s.dev.release(a);
  const vram_fill second = fill_vram(s.dev);
  CHECK(second.allocations.size() == first.allocations.size());
  CHECK(second.total_bytes == first.total_bytes);
  REQUIRE(second.failures.size() == first.failures.size());
  for (std::size_t i = 0; i < first.failures.size(); ++i) CHECK(second.failures[i].message == first.failures[i].message);
  CHECK(damaged_allocations(s.dev, second) == 0);
  for (const amd::allocation& a : second.allocations) s.dev.release(a);
  // With a large BAR the heap is one piece (the small-BAR heap is two: inside and beyond BAR0),
  // and the page tables the fills made in it did not cut it up: the 8 MiB part fits at once.
  if (s.dev.info().large_bar) {
    const std::uint64_t in_8mib = std::uint64_t(std::count_if(first.allocations.begin(), first.allocations.end(),
                                                              [](const amd::allocation& a) { return a.bytes == 8ull << 20; }));
    s.dev.release(s.dev.allocate(in_8mib * (8ull << 20)));
  }
}
