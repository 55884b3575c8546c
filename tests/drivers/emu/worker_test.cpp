// worker_test.cpp: the emulated GPU running its queues on a worker thread while the host polls
// signals, as a driver does on hardware.
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>

#include "tests/drivers/emu/emu_rig.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace pm4 = tg::queue::pm4;
namespace sdma = tg::queue::sdma;
using tg::queue::cmd_buffer;
using tg::queue::compare;

namespace {

// Polls a 32-bit signal until it reaches `value`; false after 5 s.
bool wait_signal(emu_rig& rig, const buffer& sig, std::uint64_t offset, std::uint32_t value) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (rig.load32(sig, offset) < value)
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

// Waits until the compute queue reports being blocked on a wait packet; false after 5 s.
bool wait_compute_blocked(emu_rig& rig) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    const auto q = rig.g.compute_queue();
    if (q && q->waiting) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
  }
}

}  // namespace

TEST_CASE_TEMPLATE("the worker runs queues as doorbells arrive while the host polls signals", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  sdma_ring q(rig, 4 * KiB);
  buffer dst = rig.alloc(4 * MiB), sig = rig.alloc(4 * KiB);
  rig.g.start();
  CHECK(rig.g.running());
  for (std::uint32_t i = 1; i <= 20; ++i) {
    cmd_buffer cb;
    sdma::emit_const_fill(cb, dst.va, i, 4 * MiB);
    sdma::emit_fence(cb, sig.va, i);
    q.submit(cb);
    REQUIRE(wait_signal(rig, sig, 0, i));
    REQUIRE(rig.load32(dst, 4 * MiB - 4) == i);  // the signal came after the data
  }
  rig.g.stop();
  CHECK_FALSE(rig.g.running());
  CHECK(rig.g.faults().empty());
}

TEST_CASE_TEMPLATE("compute waits on SDMA's signal across queues, under the worker", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring compute(rig, 4 * KiB);
  sdma_ring copy(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  rig.g.start();
  cmd_buffer c;
  pm4::emit_wait_mem(c, sig.va, compare::greater_equal, 1);  // wait for the copy queue
  pm4::release_mem r;
  r.address = sig.va + 8;
  r.value = 2;
  pm4::emit_release_mem(c, r);
  compute.submit(c);
  // The worker took the doorbell and stopped at the wait: the release behind it has not run.
  REQUIRE(wait_compute_blocked(rig));
  CHECK(rig.load32(sig, 8) == 0);
  CHECK(rig.g.compute_queue()->waiting);
  cmd_buffer s;
  sdma::emit_fence(s, sig.va, 1);
  copy.submit(s);
  CHECK(wait_signal(rig, sig, 8, 2));
  rig.g.stop();
}

TEST_CASE("a doorbell stored through a mapping of the doorbell page reaches the worker") {
  emu_rig rig(gfx_gen::gfx12);
  sdma_ring q(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  void* bar2 = ::mmap(nullptr, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED, rig.g.doorbell_fd(), 0);
  REQUIRE(bar2 != MAP_FAILED);
  rig.g.start();
  cmd_buffer cb;
  sdma::emit_fence(cb, sig.va, 3);
  q.copy_in(cb);
  rig.store64(q.gart, sdma_ring::wptr_at, q.put());
  std::atomic_ref<std::uint64_t>(static_cast<std::uint64_t*>(bar2)[sdma_ring::doorbell / 8])
      .store(q.put(), std::memory_order_release);
  CHECK(wait_signal(rig, sig, 0, 3));
  rig.g.stop();
  ::munmap(bar2, 0x2000);
}
