// gpu_core.hpp: the parts of the emulated GPU its queue engines share: memory, registers, MMU,
// registered kernels, and what they report.
//
// The gpu owns one and serialises all access to it under its lock.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "drivers/emu/doorbell_page.hpp"
#include "drivers/emu/faults.hpp"
#include "drivers/emu/mmu.hpp"
#include "drivers/emu/personality.hpp"
#include "drivers/emu/register_file.hpp"
#include "drivers/emu/shader/interpreter.hpp"
#include "drivers/emu/vram.hpp"

namespace tg::emu {

// Counters for tests and logs.
struct gpu_stats {
  std::uint64_t pm4_packets = 0, sdma_packets = 0;
  std::uint64_t dispatches = 0, indirect_buffers = 0, release_mems = 0, acquire_mems = 0, event_writes = 0;
  std::uint64_t hdp_flushes = 0, tlb_invalidate_requests = 0;
  std::uint64_t dropped_doorbells = 0;
  std::uint64_t icache_invalidates = 0;  // ACQUIRE_MEMs with GCR_CNTL.GLI_INV
  std::uint64_t writes_lost_in_reset = 0;  // register writes while a mode-1 reset kept the card off the bus  // stores no S2A route took to the queue's engine (doorbell_routes.hpp)
};

struct gpu_core {
  gpu_core(const personality& p, std::uint64_t vram_bytes, std::uint64_t doorbell_bytes, unsigned shader_threads)
      : chip(p), memory(vram_bytes), doorbells(doorbell_bytes), gmmu(p, regs, memory), shader_threads(shader_threads),
        power_on(std::chrono::steady_clock::now()) {}

  // The 100 MHz GPU clock of RELEASE_MEM timestamps and SDMA TIMESTAMP (tinygrad/runtime/ops_amd.py: AMDDevice, 100 MHz),
  // counted from power-on.
  std::uint64_t gpu_clock() const {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - power_on);
    return std::uint64_t(ns.count()) / 10;
  }

  // The VRAM offset of [mc, mc + bytes), an MC address the driver gave a firmware block (PSP
  // ring and fences, IH ring): MC = FB base + VRAM offset, with the FB base read from
  // MMMC_VM_FB_LOCATION_BASE (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c). nullopt when it is not in VRAM.
  std::optional<gpu_pa> mc_to_vram(std::uint64_t mc, std::uint64_t bytes) const {
    const std::uint64_t fb = std::uint64_t{chip.field.fb_base.get(regs.peek(chip.mm_reg.fb_location_base))} << 24;
    if (mc < fb || !memory.contains({mc - fb}, bytes)) return std::nullopt;
    return gpu_pa{mc - fb};
  }

  const personality& chip;
  vram memory;
  doorbell_page doorbells;
  register_file regs;
  mmu gmmu;
  // The SQC instruction cache (shader/instruction_cache.hpp): the interpreter decodes from it, so it
  // keeps running stale code until GCR_CNTL.GLI_INV.
  shader::instruction_cache icache;
  shader::worker_threads shader_threads;  // the host threads that interpret dispatches
  std::vector<fault_record> faults;
  std::vector<interrupt_record> interrupts;
  gpu_stats stats;
  shader::dispatch_counters last_dispatch;  // of the last interpreted dispatch (drivers/emu/shader)
  std::function<void(const shader::launch&, const shader::dispatch_counters&)> dispatch_observer;  // gpu::observe_dispatches
  std::chrono::steady_clock::time_point power_on;
};

}  // namespace tg::emu
