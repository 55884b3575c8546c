// interpreter.hpp: runs a DISPATCH_DIRECT by executing the program's RDNA3 / RDNA4 machine code.
//
// The CP state a dispatch reads (COMPUTE_PGM_LO/HI, RSRC1/2/3, USER_DATA_0..15, NUM_THREAD_X/Y/Z,
// TMPRING_SIZE, DISPATCH_SCRATCH_BASE) becomes a `launch`; the workgroups are spread over the host
// threads of `worker_threads` (the calling one among them), and each runs its waves round robin on
// its thread, each until it ends or waits at a barrier, sharing its LDS. Initial wave state
// follows llvm/docs/AMDGPUUsage.rst, "Initial Kernel Execution State": s[0..USER_SGPR_COUNT) from
// COMPUTE_USER_DATA_n, then the enabled workgroup ids X, Y, Z at s[USER_SGPR_COUNT..] (so LLVM's
// gfx1100 / gfx1102 padding of USER_SGPR_COUNT, and gfx1101's lack of it, both land where the code
// looks); on gfx12 the ids are also in TTMP9 (X) and TTMP7 (Y | Z << 16), where LLVM reads them
// ("architected SGPRs", AMDGPUUsage.rst "Processors" and GCNSubtarget::hasArchitectedSGPRs); v0 holds
// the packed work-item ids (X | Y << 10 | Z << 20, AMDGPUUsage.rst "Packed Work-Item IDs").
//
// Instructions are fetched through the gpu's instruction cache (instruction_cache.hpp), which keeps
// them decoded by address across dispatches until an ACQUIRE_MEM with GLI_INV. Memory goes
// through the MMU: an access that does not translate is a page fault at its exact VA (mmu.hpp), and
// anything the interpreter does not implement ends the dispatch with shader_fault naming the
// mnemonic (or raw dwords), the PC and the kernel.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "drivers/emu/mmu.hpp"
#include "drivers/emu/shader/decoder.hpp"
#include "drivers/emu/shader/instruction_cache.hpp"
#include "runtime/threads/thread_pool.hpp"

namespace tg::emu::shader {

struct launch {
  isa_gen gen = isa_gen::gfx11;
  std::string_view target;  // the personality's LLVM processor name, for messages
  gpu_va program;
  std::array<std::uint32_t, 3> workgroups{1, 1, 1}, workgroup_size{1, 1, 1};
  std::array<std::uint32_t, 16> user_data{};
  std::uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
  std::uint32_t dispatch_initiator = 0;
  std::uint32_t tmpring_size = 0;
  gpu_va scratch_base;
  std::uint32_t lds_bytes = 64 * 1024;  // the LDS a workgroup may address
  // Test mode: move every odd lane's transcendental result by its whole error bound
  // (transcendental.hpp), so a kernel that relies on exact libm values fails here as on a card.
  bool perturb_transcendentals = false;
};

// What one dispatch did (issue 11: the code generator's cost model).
struct dispatch_counters {
  std::uint64_t instructions = 0, salu = 0, valu = 0, smem = 0, vmem = 0, lds = 0, branch = 0, other = 0;
  std::uint64_t global_bytes_read = 0, global_bytes_written = 0;  // as the lanes and scalar loads asked for them
  // Distinct 128-byte lines (the GL2 line size of RDNA3 / RDNA4) that global accesses touched: the
  // DRAM traffic of a cache big enough for the dispatch, which is what a roofline model charges.
  std::uint64_t global_lines = 0;
  std::uint64_t waves = 0, workgroups = 0;
  // Waits (s_waitcnt vmcnt, s_wait_loadcnt) that found a vector load of the wave still in flight:
  // memory latencies the wave had to sit out. Summed over waves, and the most any one wave had.
  std::uint64_t memory_waits = 0, max_wave_memory_waits = 0;
  unsigned vgprs = 0, sgprs = 0;   // what COMPUTE_PGM_RSRC1 asks for (wave32 granules)
  unsigned waves_per_simd = 0;     // occupancy those VGPRs allow (1536-entry file, 24-VGPR granule, at most 16)
};

// An instruction the interpreter cannot run, or a dispatch it cannot set up.
struct shader_fault : std::runtime_error {
  shader_fault(const std::string& message, gpu_va at) : std::runtime_error(message), pc(at) {}
  gpu_va pc;
};

// The host threads a gpu runs workgroups on: `count` (0: $TG_THREADS, else one per hardware thread,
// as the CPU device), the thread that dispatches included; the pool starts with the first dispatch
// of several workgroups.
class worker_threads {
 public:
  explicit worker_threads(unsigned count = 0) : count_(count ? count : unsigned(threads::default_thread_count())) {}
  unsigned count() const { return count_; }
  threads::thread_pool& pool();

 private:
  unsigned count_;
  std::unique_ptr<threads::thread_pool> pool_;
};

// Runs the whole grid, fetching code through `icache`. Throws page_fault (from the MMU) or
// shader_fault; counters are filled either way. With several threads, the first fault ends the
// dispatch and workgroups other threads were running stop where they are, as the waves of a
// card's other CUs do when its queue halts.
void run_dispatch(mmu& memory, const launch& l, dispatch_counters& counters, instruction_cache& icache,
                  worker_threads& threads);

}  // namespace tg::emu::shader
