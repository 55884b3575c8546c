// interpreter.cpp: the dispatch loop of interpreter.hpp: launch state, workgroups spread over the
// host threads, barriers, the fetch through the gpu's instruction cache (instruction_cache.hpp, seen
// through each thread's thread_view.hpp) and the per-dispatch counters.
#include "drivers/emu/shader/interpreter.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <vector>

#include <tg/core/error.hpp>

#include "drivers/emu/shader/executor.hpp"

namespace tg::emu::shader {

namespace {

// COMPUTE_PGM_RSRC1/2 fields (AMDGPUUsage.rst, "compute_pgm_rsrc1/2 for GFX6-GFX12"; same positions as
// drivers/amd/code_object_descriptor.hpp, which reads them from the descriptor).
constexpr std::uint32_t field(std::uint32_t v, unsigned lo, unsigned width) { return (v >> lo) & ((1u << width) - 1); }

// A wave that runs this many instructions is taken to be in an endless loop.
constexpr std::uint64_t max_wave_instructions = 50'000'000;

// The highest VGPR an instruction names by its first register (register ranges are not sized here),
// or -1. VALU destinations that are SGPRs (VOP3 compares, v_readlane, v_readfirstlane, gfx12 v_s_*) are left out.
int highest_vgpr(isa_gen gen, const instruction& in) {
  int hi = -1;
  auto code = [&](unsigned c) { if (c >= src::vgpr0) hi = std::max(hi, int(c - src::vgpr0)); };
  auto reg = [&](unsigned r) { hi = std::max(hi, int(r)); };
  switch (in.fam) {
    case family::vop1: case family::vop2: case family::vopc: case family::vop3: {
      for (unsigned c : in.srcs) code(c);
      const bool sgpr_dst = in.op < 256 || in.op == 864 || in.op == 384 + 2 ||
                            (gen == isa_gen::gfx12 && in.op >= 640 && in.op <= 648);
      if (!sgpr_dst) reg(in.vdst);
      break;
    }
    case family::vop3p: for (unsigned c : in.srcs) code(c); reg(in.vdst); break;
    case family::vopd:
      code(in.srcs[0]); code(in.srcs[1]); code(in.srcsy[0]); code(in.srcsy[1]);
      reg(in.vdst); reg(in.vdsty);
      break;
    case family::ds: case family::flat: case family::global: case family::scratch:
      reg(in.addr); reg(in.data0); reg(in.data1); reg(in.vdst);
      break;
    default: break;
  }
  return hi;
}

void count(dispatch_counters& k, const instruction& in) {
  ++k.instructions;
  switch (in.fam) {
    case family::sopp:
      if (in.op >= 32 && in.op <= 38) ++k.branch; else ++k.other;
      break;
    case family::sop1: case family::sop2: case family::sopc: case family::sopk: ++k.salu; break;
    case family::smem: ++k.smem; break;
    case family::ds: ++k.lds; break;
    case family::flat: case family::global: case family::scratch: case family::mubuf: ++k.vmem; break;
    default: ++k.valu; break;
  }
}

// A thread of the dispatch: its view of memory and code, and what its workgroups did.
struct dispatch_thread {
  explicit dispatch_thread(dispatch_shared& s) : view(s) {}
  thread_view view;
  dispatch_counters counters;
  line_tracker lines;
};

// Thrown into a thread's workgroup when another thread's faulted: the dispatch ends with that fault.
struct dispatch_stopped {};

class dispatcher {
 public:
  dispatcher(mmu& m, const launch& l, dispatch_counters& k, instruction_cache& ic, worker_threads& threads)
      : shared_{m, ic}, l_(l), k_(k), threads_(threads) {}

  void run() {
    const std::uint32_t rsrc1 = l_.rsrc1, rsrc2 = l_.rsrc2;
    if (field(l_.dispatch_initiator, 15, 1) == 0 && l_.dispatch_initiator != 0)
      fault(l_.program, "DISPATCH_INITIATOR.CS_W32_EN is 0: wave64 is not modelled (the interpreter runs wave32)");
    k_.vgprs = (field(rsrc1, 0, 6) + 1) * 8;
    k_.sgprs = 128;  // GRANULATED_WAVEFRONT_SGPR_COUNT must be 0 on GFX10+: all 128 (AMDGPUUsage.rst)
    // 1536 VGPRs per SIMD lane in wave32, allocated in granules of 24 (AMDGPUBaseInfo.cpp: getVGPRAllocGranule
    // with Feature1_5xVGPRs), at most 16 waves (getMaxWavesPerEU).
    const unsigned granules = (k_.vgprs + 23) / 24;
    k_.waves_per_simd = std::min(16u, 1536u / (granules * 24));
    mode_.denorm32 = field(rsrc1, 16, 2);
    mode_.denorm16_64 = field(rsrc1, 18, 2);
    mode_.round32 = field(rsrc1, 12, 2);
    mode_.round16_64 = field(rsrc1, 14, 2);
    if (mode_.round32 != 0 || mode_.round16_64 != 0)
      fault(l_.program, "COMPUTE_PGM_RSRC1.FLOAT_ROUND_MODE other than round-to-nearest-even is not modelled");
    // f16 and f64 arithmetic keeps denormals (LLVM's default for kernels); flushing them is not modelled.
    if (mode_.denorm16_64 != 3)
      fault(l_.program, "COMPUTE_PGM_RSRC1.FLOAT_DENORM_MODE_16_64 other than 3 (keep denormals) is not modelled");
    user_sgprs_ = field(rsrc2, 1, 5);
    tgid_enable_ = field(rsrc2, 7, 3);
    tidig_ = field(rsrc2, 11, 2);
    if (field(rsrc2, 10, 1)) fault(l_.program, "COMPUTE_PGM_RSRC2.ENABLE_SGPR_WORKGROUP_INFO is not modelled");
    const unsigned lds_granules = field(rsrc2, 15, 9);
    lds_bytes_ = std::min<std::uint32_t>(lds_granules * 512, l_.lds_bytes);  // 128-dword granules (AMDGPUUsage.rst)
    const std::uint32_t threads = l_.workgroup_size[0] * l_.workgroup_size[1] * l_.workgroup_size[2];
    if (threads == 0 || threads > 1024) fault(l_.program, str("a workgroup of ", threads, " threads"));
    if (l_.workgroup_size[0] > 1024 || l_.workgroup_size[1] > 1024 || l_.workgroup_size[2] > 1024)
      fault(l_.program, "a workgroup dimension over 1024 (packed work-item ids have 10 bits)");
    waves_per_group_ = (threads + wave_lanes - 1) / wave_lanes;
    const std::uint32_t tmpring = l_.tmpring_size;
    scratch_waves_ = std::max(1u, field(tmpring, 0, 12));
    scratch_lane_bytes_ = field(tmpring, 12, l_.gen == isa_gen::gfx11 ? 15 : 18) * 4;
    run_groups();
  }

 private:
  [[noreturn]] void fault(gpu_va pc, const std::string& why) {
    throw shader_fault(str("shader: ", why, " (", l_.target, " kernel at ", l_.program, ", PC ", pc, ")"), pc);
  }

  // The grid's workgroups, x fastest, taken in turn by the threads. Each thread's waves use scratch
  // slots of their own (init_wave), so with scratch there are no more threads than TMPRING's WAVES
  // holds workgroups. A fault on one thread stops the others; the first one is the dispatch's.
  void run_groups() {
    const auto& n = l_.workgroups;
    const std::uint64_t groups = std::uint64_t(n[0]) * n[1] * n[2];
    std::uint64_t count = std::min<std::uint64_t>(threads_.count(), groups);
    if (scratch_lane_bytes_ > 0) count = std::max(1u, std::min<unsigned>(count, scratch_waves_ / waves_per_group_));
    std::vector<dispatch_thread> per_thread;
    per_thread.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) per_thread.emplace_back(shared_);
    std::atomic<std::uint64_t> next{0};
    auto work = [&](int t) {
      try {
        for (std::uint64_t g; !stopped_.load(std::memory_order_relaxed) && (g = next.fetch_add(1)) < groups;)
          run_group(per_thread[t], {std::uint32_t(g % n[0]), std::uint32_t(g / n[0] % n[1]), std::uint32_t(g / n[0] / n[1])},
                    unsigned(t));
      } catch (const dispatch_stopped&) {
      } catch (...) {
        stopped_.store(true);
        throw;
      }
    };
    std::exception_ptr error;
    try {
      if (count > 1) threads_.pool().parallel_for(int(count), work);
      else work(0);
    } catch (...) {
      error = std::current_exception();
    }
    line_tracker lines;
    for (const dispatch_thread& t : per_thread) {  // the counters are filled whether or not it faulted
      const dispatch_counters& c = t.counters;
      k_.instructions += c.instructions, k_.salu += c.salu, k_.valu += c.valu, k_.smem += c.smem, k_.vmem += c.vmem;
      k_.lds += c.lds, k_.branch += c.branch, k_.other += c.other;
      k_.global_bytes_read += c.global_bytes_read, k_.global_bytes_written += c.global_bytes_written;
      k_.waves += c.waves, k_.workgroups += c.workgroups, k_.memory_waits += c.memory_waits;
      k_.max_wave_memory_waits = std::max(k_.max_wave_memory_waits, c.max_wave_memory_waits);
      k_.global_lines = lines.absorb(t.lines);
    }
    if (error) std::rethrow_exception(error);
  }

  void init_wave(workgroup& g, wave& w, unsigned index, unsigned thread) {
    w.index = index;
    w.pc = l_.program.value;
    for (unsigned i = 0; i < user_sgprs_ && i < 16; ++i) w.sgpr[i] = l_.user_data[i];
    unsigned s = user_sgprs_;
    for (unsigned d = 0; d < 3; ++d)
      if ((tgid_enable_ >> d) & 1) w.sgpr[s++] = g.id[d];
    if (l_.gen == isa_gen::gfx12) {  // TTMP9 = X, TTMP7 = Y | Z << 16
      w.sgpr[108 + 9] = g.id[0];
      w.sgpr[108 + 7] = (g.id[1] & 0xFFFF) | g.id[2] << 16;
    }
    const std::uint32_t sx = l_.workgroup_size[0], sy = l_.workgroup_size[1];
    const std::uint32_t threads = sx * sy * l_.workgroup_size[2];
    std::uint32_t exec = 0;
    for (unsigned lane = 0; lane < wave_lanes; ++lane) {
      const std::uint32_t flat = index * wave_lanes + lane;
      if (flat >= threads) break;
      exec |= 1u << lane;
      const std::uint32_t tx = flat % sx, ty = (flat / sx) % sy, tz = flat / (sx * sy);
      w.v(0, lane) = tx | (tidig_ >= 1 ? ty << 10 : 0) | (tidig_ >= 2 ? tz << 20 : 0);
    }
    w.sgpr[src::exec_lo] = exec;
    // The waves in flight at once, those of one workgroup per thread, each have a slot of their own.
    const std::uint64_t slot = (std::uint64_t(thread) * waves_per_group_ + index) % scratch_waves_;
    w.scratch_lane_bytes = scratch_lane_bytes_;
    w.scratch_base = l_.scratch_base.value + slot * wave_lanes * scratch_lane_bytes_;
  }

  // Decoded once per address while the SQC holds its line (instruction_cache.hpp); the VGPR check
  // runs on every fetch, since each dispatch's COMPUTE_PGM_RSRC1 may allocate differently.
  const instruction& fetch(thread_view& view, std::uint64_t pc) {
    const cached_instruction& d =
        view.fetch(pc, [this](mmu& m, instruction_cache& ic, std::uint64_t at) { return decode_at(m, ic, at); });
    // A VGPR beyond what COMPUTE_PGM_RSRC1 allocates belongs to another wave on hardware: a code
    // generator bug this catches before a card does.
    if (d.highest_vgpr >= int(k_.vgprs))
      fault(gpu_va{pc}, str(mnemonic(l_.gen, d.in), " (", raw_words(d.in), ") names v", d.highest_vgpr,
                            " but COMPUTE_PGM_RSRC1 allocates ", k_.vgprs, " VGPRs"));
    return d.in;
  }

  cached_instruction decode_at(mmu& m, instruction_cache& icache, std::uint64_t pc) {
    if (pc & 3) fault(gpu_va{pc}, "a PC that is not dword aligned");
    std::array<std::uint32_t, 4> words{};
    // 12 bytes: the longest encoding this interpreter decodes (LLVM pads code with s_code_end).
    icache.read(m, gpu_va{pc}, std::as_writable_bytes(std::span(words.data(), 3)));
    cached_instruction d;
    try {
      d.in = decode(l_.gen, words);
    } catch (const decode_error& e) {
      fault(gpu_va{pc}, str(e.what(), "; raw dwords ", hex{words[0], 8, true}, " ", hex{words[1], 8, true}));
    }
    d.highest_vgpr = highest_vgpr(l_.gen, d.in);
    return d;
  }

  void run_group(dispatch_thread& t, std::array<std::uint32_t, 3> id, unsigned thread) {
    workgroup g;
    g.id = id;
    g.lds.assign(lds_bytes_, 0);
    g.waves.resize(waves_per_group_);
    for (unsigned i = 0; i < waves_per_group_; ++i) {
      init_wave(g, g.waves[i], i, thread);
      ++t.counters.waves;
    }
    ++t.counters.workgroups;
    exec_context c{t.view, l_, t.counters, g, mode_, l_.program, t.lines};
    bool progress = true;
    while (progress) {
      progress = false;
      for (wave& w : g.waves) {
        if (w.ended) continue;
        if (w.at_barrier) {
          if (g.barrier_generation == w.barrier_seen) continue;
          w.at_barrier = false;
        }
        progress = true;
        run_wave(c, w);
      }
      if (!progress) {
        for (wave& w : g.waves)
          if (!w.ended) fault(gpu_va{w.pc}, "every wave of the workgroup waits at a barrier no wave can release");
      }
    }
    for (const wave& w : g.waves) {
      t.counters.memory_waits += w.memory_waits;
      t.counters.max_wave_memory_waits = std::max(t.counters.max_wave_memory_waits, w.memory_waits);
    }
  }

  // Runs `w` until it ends or blocks at a barrier.
  void run_wave(exec_context& c, wave& w) {
    while (!w.ended && !w.at_barrier) {
      if (stopped_.load(std::memory_order_relaxed)) throw dispatch_stopped{};
      const instruction& in = fetch(c.memory, w.pc);
      c.pc = gpu_va{w.pc};
      w.pc += 4u * in.dwords;
      if (++w.instructions > max_wave_instructions)
        fault(c.pc, str("wave ", w.index, " ran ", max_wave_instructions, " instructions (an endless loop?)"));
      count(c.counters, in);
      switch (in.fam) {
        case family::sop1: case family::sop2: case family::sopc: case family::sopk: case family::sopp:
          exec_scalar(c, w, in);
          break;
        case family::smem: exec_smem(c, w, in); break;
        case family::vop1: case family::vop2: case family::vopc: case family::vop3: exec_valu(c, w, in); break;
        case family::vop3p: exec_vop3p(c, w, in); break;
        case family::vopd: exec_vopd(c, w, in); break;
        case family::ds: exec_ds(c, w, in); break;
        default: exec_vmem(c, w, in); break;
      }
    }
    if (w.ended) release_if_all_arrived(c.group);
  }

  void release_if_all_arrived(workgroup& g) {
    unsigned live = 0;
    for (const wave& w : g.waves) live += !w.ended;
    if (live > 0 && g.arrived >= live) {
      ++g.barrier_generation;
      g.arrived = 0;
    }
  }

  dispatch_shared shared_;
  const launch& l_;
  dispatch_counters& k_;
  worker_threads& threads_;
  std::atomic<bool> stopped_{false};
  float_mode mode_;
  unsigned user_sgprs_ = 0, tgid_enable_ = 0, tidig_ = 0, waves_per_group_ = 1;
  std::uint32_t lds_bytes_ = 0, scratch_waves_ = 1, scratch_lane_bytes_ = 0;
};

}  // namespace

void barrier_signal(exec_context& c, wave& w) {
  workgroup& g = c.group;
  if (w.barrier_signalled) return;  // a second signal before the wait: one arrival
  w.barrier_signalled = true;
  w.barrier_seen = g.barrier_generation;
  ++g.arrived;
  unsigned live = 0;
  for (const wave& x : g.waves) live += !x.ended;
  if (g.arrived >= live) {
    ++g.barrier_generation;
    g.arrived = 0;
  }
}

void barrier_wait(exec_context& c, wave& w, const instruction& in) {
  if (!w.barrier_signalled) fail_instruction(c, in, "s_barrier_wait without s_barrier_signal first");
  w.barrier_signalled = false;
  if (c.group.barrier_generation == w.barrier_seen) w.at_barrier = true;  // resumes once it moves on
}

void fail_instruction(const exec_context& c, const instruction& in, const std::string& why) {
  const std::uint64_t off = c.pc.value - c.l.program.value;
  throw shader_fault(str("shader: ", why, ": ", mnemonic(c.l.gen, in), " (", raw_words(in), ") at PC ", c.pc,
                         " (program + ", hex{off}, ") of the ", c.l.target, " kernel at ", c.l.program),
                     c.pc);
}


threads::thread_pool& worker_threads::pool() {
  if (!pool_) pool_ = std::make_unique<threads::thread_pool>(int(count_));
  return *pool_;
}

void run_dispatch(mmu& memory, const launch& l, dispatch_counters& counters, instruction_cache& icache,
                  worker_threads& threads) {
  dispatcher(memory, l, counters, icache, threads).run();
}

}  // namespace tg::emu::shader
