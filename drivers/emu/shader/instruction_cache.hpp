// instruction_cache.hpp: the emulated SQC instruction cache, one per gpu, shared by everything that
// fetches code for the interpreter, and the instructions decoded from it.
//
// The SQC keeps the code it fetched until an invalidate; a CP ACQUIRE_MEM with GCR_CNTL.GLI_INV is
// the one Linux emits at the start of every job (gfx_v11_0.c: gfx_v11_0_emit_mem_sync,
// gfx_v12_0.c: gfx_v12_0_emit_mem_sync). So code the host rewrites at an address that ran before
// keeps running its old bytes here until that invalidate, as on a card, and a driver that leaves it
// out fails the emulator's tests (tests/drivers/emu/shader/icache_test.cpp) before it fails on hardware.
//
// The cache holds the code bytes fetched through the MMU in 64-byte lines (the SQC line size, AMD
// "RDNA3 Instruction Set Architecture", chapter "Shader Concepts"), and what is derived from them
// (decoded instructions by PC) lives exactly as long as
// those lines. This is also what makes decoding once per code object safe: the decoded form cannot
// outlive the bytes it came from, because the invalidate that drops the bytes drops it too.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <unordered_map>

#include "drivers/emu/mmu.hpp"
#include "drivers/emu/shader/decoder.hpp"

namespace tg::emu::shader {

// A decoded instruction and the highest VGPR it names (-1 for none), checked against each
// dispatch's COMPUTE_PGM_RSRC1 allocation.
struct cached_instruction {
  instruction in;
  int highest_vgpr = -1;
};

class instruction_cache {
 public:
  static constexpr std::uint64_t line_bytes = 64;

  // `out.size()` code bytes at `va`, from the cached lines; a missing line is fetched through
  // `memory` as client CPC (a line never crosses a page, so it faults only where the code would).
  void read(mmu& memory, gpu_va va, std::span<std::byte> out);

  // The decoded instruction at `pc`, or nullptr when it has not been decoded since the last invalidate.
  const cached_instruction* find(std::uint64_t pc) const {
    auto it = decoded_.find(pc);
    return it != decoded_.end() ? &it->second : nullptr;
  }
  const cached_instruction& remember(std::uint64_t pc, const cached_instruction& d) {
    return decoded_.insert_or_assign(pc, d).first->second;
  }

  // GCR_CNTL.GLI_INV (and a mode-1 reset): every line and everything derived from them.
  void invalidate() {
    lines_.clear();
    decoded_.clear();
  }
  std::size_t lines() const { return lines_.size(); }

 private:
  std::unordered_map<std::uint64_t, std::array<std::byte, line_bytes>> lines_;  // by line address
  std::unordered_map<std::uint64_t, cached_instruction> decoded_;               // by PC
};

}  // namespace tg::emu::shader
