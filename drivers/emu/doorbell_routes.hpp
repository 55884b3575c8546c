// doorbell_routes.hpp: which engine a doorbell store reaches, from the NBIO/NBIF "S2A" doorbell
// entries the driver programmed. A store that no entry routes to an engine is dropped there, as on
// a card whose driver skipped the routes: the queue never sees its write pointer and never starts.
//
// Entry fields (nbio_4_3_0_sh_mask.h S2A_DOORBELL_ENTRY_n_CTRL, nbif_6_3_1_sh_mask.h
// GDC_S2A0_S2A_DOORBELL_ENTRY_n_CTRL, the same on both): ENABLE 0, AWID 5:1, RANGE_OFFSET 16:7 and
// RANGE_SIZE 24:17 in doorbell dwords, AWADDR_31_28_VALUE 31:28. The model:
// - SDMA0 is reached through entry 2 when it is enabled with AWID 0xE and AWADDR 3 and the
//   doorbell's dword lies in [RANGE_OFFSET, RANGE_OFFSET + RANGE_SIZE) (nbio_v4_3.c,
//   nbif_v6_3_1.c: *_sdma_doorbell_range).
// - The CP is reached through entry 0 (AWID 3) or entry 3 (AWID 6), enabled with AWADDR 3; Linux
//   programs them with RANGE_SIZE 0 (*_gc_doorbell_init: 0x30000007, 0x3000000d), and here they
//   take every doorbell the SDMA range does not claim.
// A mode-1 reset clears the entries with every other register.
#pragma once
#include <cstdint>

#include "drivers/emu/gpu_core.hpp"

namespace tg::emu {

// Whether a 64-bit doorbell store at `byte_offset` of BAR2 reaches `engine`.
bool doorbell_reaches(const gpu_core& core, engine_id engine, std::uint64_t byte_offset);

}  // namespace tg::emu
