// executor.hpp: what the instruction executors share (internal to drivers/emu/shader).
//
// Each family's executor runs one instruction for the whole wave: it reads every lane's sources
// before it writes any destination, so cross-lane instructions (DPP, permlane, readlane) and
// VOPD pairs see the values from before the instruction. The wave's PC already points past the
// instruction; branches overwrite it.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "drivers/emu/mmu.hpp"
#include "drivers/emu/shader/interpreter.hpp"
#include "drivers/emu/shader/thread_view.hpp"
#include "drivers/emu/shader/wave.hpp"

namespace tg::emu::shader {

struct workgroup {
  std::array<std::uint32_t, 3> id{};
  std::vector<std::uint8_t> lds;
  std::vector<wave> waves;
  std::uint64_t barrier_generation = 0;
  unsigned arrived = 0;  // waves that signalled the current barrier
};

// FLOAT_MODE from COMPUTE_PGM_RSRC1 (AMDGPUUsage.rst, "compute_pgm_rsrc1"), changed by s_denorm_mode.
struct float_mode {
  unsigned denorm32 = 3, denorm16_64 = 3;  // 0 flush in and out, 1 flush out, 2 flush in, 3 keep
  unsigned round32 = 0, round16_64 = 0;    // 0 nearest even (the only one implemented)
};

// The 128-byte lines one dispatch's global accesses touched, counted into dispatch_counters::global_lines.
class line_tracker {
 public:
  static constexpr unsigned line_bytes = 128;
  void touch(std::uint64_t address, unsigned bytes, dispatch_counters& k) {
    const std::uint64_t first = address / line_bytes, last = (address + bytes - 1) / line_bytes;
    for (std::uint64_t line = first; line <= last; ++line) {
      if (line == recent_) continue;  // neighbouring lanes mostly share a line: skip the set
      recent_ = line;
      if (seen_.insert(line).second) ++k.global_lines;
    }
  }
  // The lines of another thread's tracker added to these; how many lines there are then.
  std::uint64_t absorb(const line_tracker& other) {
    seen_.insert(other.seen_.begin(), other.seen_.end());
    return seen_.size();
  }

 private:
  std::unordered_set<std::uint64_t> seen_;
  std::uint64_t recent_ = ~std::uint64_t{0};
};

struct exec_context {
  thread_view& memory;  // global memory, through this thread's view of the MMU
  const launch& l;
  dispatch_counters& counters;
  workgroup& group;
  float_mode mode;
  gpu_va pc;  // of the instruction running, for messages
  line_tracker& lines;
};

// Ends the dispatch with a shader fault (an instruction not implemented, or one that faults: LDS or
// scratch out of range, a barrier misused): "<why>: <mnemonic> (<raw dwords>) at <pc> (program +<offset>) of the <target> kernel at <va>".
[[noreturn]] void fail_instruction(const exec_context& c, const instruction& in, const std::string& why);

// The 16 float compare conditions of VOPC and of gfx12's SOPC (F, LT, EQ, LE, GT, LG, GE, O, U, NGE,
// NLG, NGT, NLE, NEQ, NLT, T, in opcode order); floats compare exactly as doubles.
bool compare_float(unsigned cond, double a, double b);

void exec_scalar(exec_context& c, wave& w, const instruction& in);  // SOP1/SOP2/SOPC/SOPK/SOPP
void exec_smem(exec_context& c, wave& w, const instruction& in);
void exec_valu(exec_context& c, wave& w, const instruction& in);    // VOP1/VOP2/VOPC/VOP3
void exec_vop3p(exec_context& c, wave& w, const instruction& in);
void exec_vopd(exec_context& c, wave& w, const instruction& in);
void exec_ds(exec_context& c, wave& w, const instruction& in);
void exec_vmem(exec_context& c, wave& w, const instruction& in);    // FLAT/GLOBAL/SCRATCH/MUBUF

// Barrier bookkeeping (interpreter.cpp): the wave arrives (s_barrier_signal, or s_barrier's first half).
void barrier_signal(exec_context& c, wave& w);
// Blocks the wave until every live wave of the workgroup signalled (s_barrier_wait, s_barrier).
void barrier_wait(exec_context& c, wave& w, const instruction& in);

}  // namespace tg::emu::shader
