// nbio_doorbell.hpp: the NBIO / NBIF "S2A" doorbell entries that route a BAR2 store to the engine
// it is meant for. Without them a doorbell reaches neither the CP nor SDMA and no queue starts.
//
// Linux programs them from the GFX and SDMA blocks: nbio_v4_3.c (gfx11) and nbif_v6_3_1.c (gfx12)
// *_gc_doorbell_init (entries 0 and 3, called from gfx_v11_0.c / gfx_v12_0.c hw init) and
// *_sdma_doorbell_range (entry 2, from sdma_v6_0.c / sdma_v7_0.c gfx_resume); tinygrad's
// am/ip.py AM_SOC.doorbell_enable does the same. On NBIO 4.3.0 the entries are in segment 5,
// beyond the MMIO BAR, so mmio reaches them through the RSMU window.
//
//   tg::amd::nbio_gc_doorbell_init(ctx);
//   tg::amd::nbio_sdma_doorbell_range(ctx, 0x800);
//
// Not thread-safe.
#pragma once
#include <cstdint>

#include "drivers/amd/am_context.hpp"

namespace tg::amd {

// S2A_DOORBELL_ENTRY_0_CTRL = 0x30000007, ENTRY_3_CTRL = 0x3000000D (the CP's two ports).
void nbio_gc_doorbell_init(am_context& c);
// Entry 2 for SDMA0 queue 0 at BAR2 byte `doorbell_bytes`: port enabled, AWID 0xE, the range from
// that doorbell's dword over soc21's sdma_doorbell_range (20 dwords), AWADDR[31:28] = 3.
void nbio_sdma_doorbell_range(am_context& c, std::uint64_t doorbell_bytes);
// The register index of S2A entry n (0..3) on this NBIO / NBIF.
std::uint64_t nbio_s2a_entry(const am_context& c, unsigned n);

}  // namespace tg::amd
