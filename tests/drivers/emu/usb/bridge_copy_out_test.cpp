// bridge_copy_out_test.cpp: the copy-out of tinygrad's AMDAllocator._copyout end to end, with the GPU's worker thread
// running: arm an SRAM read, ring SDMA through BAR2 over the bridge, and the GPU's COPY into the
// SRAM window plus its WRITE to cq_buf + 12 (both through the bridge's system_bus) release the
// bulk IN. Checks the lock order: host requests call into the gpu while its worker calls the bridge.
#include <random>

#include "tests/drivers/emu/emu_rig.hpp"
#include "tests/drivers/emu/usb/bridge_rig.hpp"
#include "runtime/queue/sdma.hpp"

namespace sdma = tg::queue::sdma;
namespace ut = tg::emu::usb::test;
using namespace tg::emu;
using tg::emu::test::emu_rig;
using tg::emu::test::sdma_ring;
using tg::transport::usb::usb_status;
using namespace std::chrono_literals;

namespace {

// Bridge memory as system pages in the GPU's page table (the driver maps each region: USBIface._dma_region).
gpu_va map_window(emu_rig& rig, std::uint64_t bus_address, std::uint64_t bytes) {
  const gpu_va va = rig.vas.allocate(bytes);
  rig.pt.map(va, tg::memory::phys_chunk{gpu_pa{bus_address}, bytes},
             {.location = tg::memory::page_location::system, .snooped = false});
  return va;
}

}  // namespace

TEST_CASE_TEMPLATE("copy-out: SDMA fills the SRAM window and its write to cq_buf + 12 releases the armed read", G,
                   tg::emu::test::gfx11, tg::emu::test::gfx12) {
  emu_rig rig(G::gen, 64 * ut::MiB);
  usb::emu_bridge bridge(rig.g);
  auto h = bridge.open(bridge.list().front());
  ut::power_on(*h);
  ut::setup_bridge_buses(*h);
  const auto bars = ut::assign_gpu_bars(*h);

  const gpu_va sram = map_window(rig, 0x200000, 512 * ut::KiB);
  const gpu_va cq_buf = map_window(rig, 0x822000, 4 * ut::KiB);
  sdma_ring q(rig, 4 * ut::KiB);
  const std::uint64_t size = 100'000;  // not a multiple of 512: the bulk IN rounds up
  tg::emu::test::buffer src = rig.alloc(size);
  std::vector<std::byte> data(size);
  std::mt19937 rng(3);
  for (auto& b : data) b = std::byte(rng());
  rig.write(src, 0, data);
  rig.g.start();

  const std::uint64_t wire = (size + 511) / 512 * 512;
  REQUIRE(ut::arm_sram(*h, true, 0, wire).status == usb_status::ok);
  std::vector<std::byte> got(wire);
  auto pending = h->submit_bulk(0x81, got, 10000ms);

  tg::queue::cmd_buffer cb;
  sdma::emit_copy_linear(cb, sram, src.va, size);
  sdma::emit_fence(cb, cq_buf + 12, 0);
  q.copy_in(cb);
  rig.store64(q.gart, sdma_ring::wptr_at, q.put());
  const std::uint64_t put = q.put();
  REQUIRE(ut::memory_write(*h, bars[2].address + sdma_ring::doorbell, std::as_bytes(std::span(&put, 1))).status ==
          usb_status::ok);

  const auto r = pending->wait();
  rig.g.stop();
  REQUIRE(rig.g.faults().empty());
  CHECK(r.status == usb_status::ok);
  CHECK(r.transferred == wire);
  CHECK(std::equal(data.begin(), data.end(), got.begin()));
  const usb::bridge_stats s = bridge.stats();
  CHECK(s.releases == 1);
  CHECK(s.gpu_write_bytes == size + 4);
  CHECK(s.sram_read_bytes == wire);
}
