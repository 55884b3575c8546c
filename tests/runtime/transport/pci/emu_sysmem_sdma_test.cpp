// emu_sysmem_sdma_test.cpp: the emulated GPU's SDMA engine reaches DMA memory of the emulated PCI
// host through emu_sysmem, page by page across the holes between its fake bus addresses.
// Uses the emulator tests' rig (tests/drivers/emu/emu_rig.hpp) for page tables and the SDMA queue.
#include <doctest/doctest.h>

#include <cstring>

#include "drivers/emu/pci/emu_sysmem.hpp"
#include "tests/drivers/emu/emu_rig.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace sdma = tg::queue::sdma;
using tg::queue::cmd_buffer;

TEST_CASE("SDMA copies a 3-page DMA region into VRAM and fences back into it") {
  emu_rig rig(tg::memory::gfx_gen::gfx11);
  auto mem = std::make_shared<emu_sysmem>();
  rig.g.attach_system_bus(mem.get());
  std::unique_ptr<tg::transport::dma_region> r = mem->allocate(3 * 4096);
  const std::vector<std::uint64_t> pages = r->page_bus_addresses();

  // One VA range over the scattered pages, as a driver maps SYS pages (tinygrad's PCIIfaceBase.alloc; amdgpu_vm.h).
  const gpu_va va = rig.vas.allocate(3 * 4096);
  for (std::size_t i = 0; i < pages.size(); ++i)
    rig.pt.map(va + i * 4096, tg::memory::phys_chunk{gpu_pa{pages[i]}, 4096},
               {.location = tg::memory::page_location::system, .snooped = true});

  std::vector<std::byte> data(3 * 4096 - 64);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i * 7 + 3);
  r->write(0, data);

  buffer vram = rig.alloc(16 * KiB);
  sdma_ring q(rig, 4 * KiB);
  cmd_buffer cb;
  sdma::emit_copy_linear(cb, vram.va, va, data.size());
  sdma::emit_fence(cb, va + (3 * 4096 - 8), 0xFEED);
  q.submit(cb);
  rig.g.step_until_idle();

  REQUIRE(rig.g.faults().empty());
  CHECK(rig.read(vram, 0, data.size()) == data);
  std::uint32_t fence = 0;
  r->read(3 * 4096 - 8, std::as_writable_bytes(std::span(&fence, 1)));
  CHECK(fence == 0xFEEDu);
  rig.g.attach_system_bus(nullptr);
}
