// gfx_gen.hpp: which GPU generation's page-table entry format to use.
//
// gfx11 = RDNA3 (GC 11.x, gmc_v11_0.c), gfx12 = RDNA4 (GC 12.x, gmc_v12_0.c). Their PTE/PDE
// layouts differ in the MTYPE field and in how a leaf is marked (amdgpu_vm.h).
#pragma once
#include <cstdint>

namespace tg::memory {

enum class gfx_gen : std::uint8_t { gfx11, gfx12 };

}  // namespace tg::memory
