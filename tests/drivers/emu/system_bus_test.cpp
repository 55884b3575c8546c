// system_bus_test.cpp: GMMU leaves with the SYSTEM bit reach the attached system_bus: SDMA copies
// in and out of host pages, fences and fills there, and a missing or failing bus is a page fault.
#include <doctest/doctest.h>

#include "tests/drivers/emu/emu_rig.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace sdma = tg::queue::sdma;
using tg::queue::cmd_buffer;

namespace {

// Host pages at bus addresses [base, base + bytes), as the emulated PCI host or bridge would
// serve them. `broken` makes every access fail the way a bus with nothing behind it does.
class test_bus final : public system_bus {
 public:
  test_bus(std::uint64_t base, std::uint64_t bytes) : base_(base), mem_(bytes) {}

  void read(std::uint64_t at, std::span<std::byte> out) override {
    std::memcpy(out.data(), locate(at, out.size()), out.size());
    ++reads;
  }
  void write(std::uint64_t at, std::span<const std::byte> in) override {
    std::memcpy(locate(at, in.size()), in.data(), in.size());
    ++writes;
  }
  std::byte* host(std::uint64_t at) { return mem_.data() + (at - base_); }

  bool broken = false;
  std::size_t reads = 0, writes = 0;

 private:
  std::byte* locate(std::uint64_t at, std::size_t n) {
    if (broken || at < base_ || at + n > base_ + mem_.size())
      throw tg::device_error(tg::str("test_bus: nothing answers at ", tg::hex{at}, " (+", n, ")"));
    return host(at);
  }
  std::uint64_t base_;
  std::vector<std::byte> mem_;
};

constexpr std::uint64_t bus_base = 0x1'0000'0000;  // the mock's first fake PFN (test/mockgpu/am/amgpu.py: MockAMGPU)

// `bytes` of system pages at bus_base + offset, mapped at a fresh VA.
gpu_va map_system(emu_rig& rig, std::uint64_t offset, std::uint64_t bytes) {
  const gpu_va va = rig.vas.allocate(bytes);
  rig.pt.map(va, tg::memory::phys_chunk{gpu_pa{bus_base + offset}, bytes},
             {.location = tg::memory::page_location::system, .snooped = true});
  return va;
}

}  // namespace

TEST_CASE_TEMPLATE("SDMA copies a system page into VRAM and back, and fences into system memory", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  test_bus bus(bus_base, 64 * KiB);
  rig.g.attach_system_bus(&bus);
  sdma_ring q(rig, 4 * KiB);
  const gpu_va sys = map_system(rig, 0, 64 * KiB);
  buffer vram = rig.alloc(64 * KiB);
  const auto data = random_bytes(20000, 7);
  std::memcpy(bus.host(bus_base + 100), data.data(), data.size());

  cmd_buffer cb;
  sdma::emit_copy_linear(cb, vram.va + 3, sys + 100, data.size());          // in
  sdma::emit_copy_linear(cb, sys + 32 * KiB + 1, vram.va + 3, data.size());  // and out again
  sdma::emit_fence(cb, sys + 60 * KiB, 0xC0FFEE);
  q.submit(cb);
  rig.g.step_until_idle();

  REQUIRE(rig.g.faults().empty());
  const auto in_vram = rig.read(vram, 3, data.size());
  CHECK(std::equal(in_vram.begin(), in_vram.end(), data.begin()));
  CHECK(std::memcmp(bus.host(bus_base + 32 * KiB + 1), data.data(), data.size()) == 0);
  std::uint32_t fence = 0;
  std::memcpy(&fence, bus.host(bus_base + 60 * KiB), 4);
  CHECK(fence == 0xC0FFEEu);
  CHECK(bus.reads > 0);
  CHECK(bus.writes > 0);
}

TEST_CASE_TEMPLATE("CONST_FILL and PM4 RELEASE_MEM reach system pages", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  test_bus bus(bus_base, 16 * KiB);
  rig.g.attach_system_bus(&bus);
  const gpu_va sys = map_system(rig, 0, 16 * KiB);
  {
    sdma_ring q(rig, 4 * KiB);
    cmd_buffer cb;
    sdma::emit_const_fill(cb, sys + 8, 0xA5A5A5A5u, 4096);
    q.submit(cb);
    rig.g.step_until_idle();
  }
  REQUIRE(rig.g.faults().empty());
  for (std::uint64_t i = 8; i < 8 + 4096; i += 1021) CHECK(std::to_integer<int>(*bus.host(bus_base + i)) == 0xA5);
  CHECK(std::to_integer<int>(*bus.host(bus_base + 8 + 4096)) == 0);

  pm4_ring q(rig, 4 * KiB);
  cmd_buffer cb;
  tg::queue::pm4::emit_release_mem(
      cb, {.data = tg::queue::pm4::data_sel::value64, .address = sys + 12 * KiB, .value = 0x1122334455667788ull});
  q.submit(cb);
  rig.g.step_until_idle();
  REQUIRE(rig.g.faults().empty());
  std::uint64_t v = 0;
  std::memcpy(&v, bus.host(bus_base + 12 * KiB), 8);
  CHECK(v == 0x1122334455667788ull);
}

TEST_CASE_TEMPLATE("a system page is a fault when no bus is attached or the bus fails", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  test_bus bus(bus_base, 16 * KiB);
  const gpu_va sys = map_system(rig, 0, 16 * KiB);
  buffer vram = rig.alloc(16 * KiB);
  sdma_ring q(rig, 4 * KiB);

  SUBCASE("no bus") {}
  SUBCASE("the bus throws") {
    bus.broken = true;
    rig.g.attach_system_bus(&bus);
  }
  SUBCASE("detached again") {
    rig.g.attach_system_bus(&bus);
    rig.g.attach_system_bus(nullptr);
  }
  cmd_buffer cb;
  sdma::emit_copy_linear(cb, vram.va, sys + 0x1234, 64);
  q.submit(cb);
  rig.g.step_until_idle();

  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::page_fault);
  CHECK(faults[0].engine == engine_id::sdma);
  CHECK(faults[0].address == sys + 0x1234);
  CHECK_FALSE(faults[0].write);
  CHECK(rig.g.sdma_queue()->halted);
  // Latched as any page fault: FAULT_ADDR holds the page number (gmc_v11_0_process_interrupt).
  const gc_registers& r = rig.g.chip().gc_reg;
  CHECK(rig.g.read_register(r.vm_fault_addr_lo) == std::uint32_t((sys.value + 0x1234) >> 12));
  CHECK(rig.g.read_register(r.vm_fault_status) != 0);
}
