// mmu.hpp: address translation of the emulated GC hub (VMID 0): page-table walks, a TLB, faults.
//
// It translates what the driver programmed: the system aperture (addresses the GPU treats as
// physical, gc_11_0_0_sh_mask.h; gc_12_0_0_sh_mask.h) and VM_CONTEXT0's page table between PAGE_TABLE_START and _END
// (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c). Leaves come from memory::translate(), the decoder written apart from the mapper.
//
// The TLB keeps every leaf it used until the driver requests an invalidation for VMID 0 through
// GCVM_INVALIDATE_ENG17_REQ (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c): a page remapped without a flush keeps its old
// translation, so a missing flush shows in tests instead of passing by luck. Failed walks are
// not cached. The TLB has no capacity limit below 64 Ki entries (then it is dropped whole), so
// staleness is deterministic.
//
// Leaves with the SYSTEM bit (amdgpu_vm.h) map bus addresses: every access through read/write/copy/
// fill/load/store goes to the attached system_bus (tinygrad's mock GPU (test/mockgpu/amd)). With no bus attached, or when the
// bus throws, the access is a fault like any other (mapping error, the VA in FAULT_ADDR).
//
// An access that does not translate latches GCVM_L2_PROTECTION_FAULT_STATUS and _ADDR (gmc_v11_0.c:
// gmc_v11_0_process_interrupt; the first fault wins, later ones set MORE_FAULTS), tells the fault listener (the IH ring)
// and throws page_fault.
//
// Not thread-safe: the gpu serialises every access under its lock, and the shader interpreter's
// threads take a lock of their own around it (shader/thread_view.hpp).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>

#include "drivers/emu/personality.hpp"
#include "drivers/emu/register_file.hpp"
#include "drivers/emu/system_bus.hpp"
#include "drivers/emu/vram.hpp"
#include "runtime/memory/address.hpp"
#include "runtime/memory/page_table_walker.hpp"
#include <tg/core/error.hpp>

namespace tg::emu {

using memory::gpu_va;

// UTCL2 client ids, the CID field of the fault status (gfxhub_client_ids in Linux 6.12
// gfxhub_v3_0.c and gfxhub_v12_0.c: index 5 "CPC", 13 "SDMA0").
enum class utcl2_client : std::uint8_t { cpc = 5, sdma0 = 13 };

enum class access_kind : std::uint8_t { read, write };

struct page_fault : device_error {
  page_fault(const std::string& message, gpu_va va, access_kind a) : device_error(message), address(va), access(a) {}
  gpu_va address;
  access_kind access;
};

// What the fault listener hears: the faulting VA and the status word latched for it.
struct fault_event {
  gpu_va address;
  access_kind access;
  utcl2_client client;
  std::uint32_t status = 0;  // GCVM_L2_PROTECTION_FAULT_STATUS as this fault alone would set it
};

struct tlb_stats {
  std::uint64_t hits = 0, misses = 0, invalidations = 0, entries = 0;
};

class mmu {
 public:
  mmu(const personality& chip, register_file& regs, vram& memory);

  struct run {
    gpu_pa pa;                // a VRAM offset, or with `system` a bus address
    std::uint64_t bytes = 0;  // 1..asked: contiguous from pa, never past the leaf's end
    bool system = false;      // a system page: reach it through the system bus
  };
  // Where `va` lives, for an access of up to `bytes` (> 0). Throws page_fault, also for a system
  // page while no system bus is attached.
  run translate(gpu_va va, std::uint64_t bytes, access_kind access, utcl2_client client);

  // The bus system pages resolve to; nullptr detaches (system accesses then fault).
  void attach(system_bus* bus) { bus_ = bus; }
  system_bus* bus() const { return bus_; }
  // Called for every fault after the registers are latched, before page_fault is thrown.
  void on_fault(std::function<void(const fault_event&)> listener) { listener_ = std::move(listener); }

  // Accesses that cross leaves, split where the translation changes.
  void read(gpu_va va, std::span<std::byte> out, utcl2_client client);
  void write(gpu_va va, std::span<const std::byte> in, utcl2_client client);
  void copy(gpu_va dst, gpu_va src, std::uint64_t bytes, utcl2_client client);
  void fill(gpu_va dst, std::uint64_t bytes, std::uint32_t pattern, utcl2_client client);
  // Aligned words, single-copy atomic (signals, pointers).
  std::uint32_t load32(gpu_va va, utcl2_client client);
  void store32(gpu_va va, std::uint32_t value, utcl2_client client);
  std::uint64_t load64(gpu_va va, utcl2_client client);
  void store64(gpu_va va, std::uint64_t value, utcl2_client client);

  void invalidate();  // drop every cached translation
  // The VRAM that leaves without the SYSTEM bit map (for the interpreter's threads, shader/thread_view.hpp).
  vram& vram_memory() { return memory_; }
  tlb_stats stats() const;

 private:
  struct fault_bits {
    std::uint32_t permission = 0;  // PERMISSION_FAULTS
    bool mapping_error = false, walker_error = false;
  };
  [[noreturn]] void raise(gpu_va va, access_kind access, utcl2_client client, fault_bits bits, const std::string& why);
  const memory::walked_leaf* lookup(gpu_va va);
  const memory::walked_leaf* walk(gpu_va va, gpu_va va_base, access_kind access, utcl2_client client);
  std::uint64_t reg64(std::uint32_t lo, std::uint32_t hi) const;
  run word(gpu_va va, unsigned bytes, access_kind access, utcl2_client client);
  // A system-bus access for the run that translated `va`; a bus error becomes a fault.
  void bus_read(gpu_va va, const run& r, std::span<std::byte> out, utcl2_client client);
  void bus_write(gpu_va va, const run& r, std::span<const std::byte> in, utcl2_client client);

  const personality& chip_;
  register_file& regs_;
  vram& memory_;
  // Leaves by level (PDB2 .. PTB), keyed by va >> level shift.
  std::array<std::unordered_map<std::uint64_t, memory::walked_leaf>, 4> tlb_;
  const memory::walked_leaf* last_ = nullptr;
  tlb_stats stats_;
  system_bus* bus_ = nullptr;
  std::function<void(const fault_event&)> listener_;
};

}  // namespace tg::emu
