// gmc_v11.cpp: hub init and TLB flush for gfx11 / gfx12 (see gmc_v11.hpp).
#include "drivers/amd/ip/gmc_v11.hpp"

#include <algorithm>
#include <string>

namespace tg::amd {

namespace {

// "GC" / "MM" + the rest of a hub register's name: regGCVM_L2_CNTL, regMMMC_VM_AGP_BASE.
struct hub_names {
  const char* prefix;
  std::string operator()(const char* rest) const { return std::string("reg") + prefix + rest; }
};

// VM_INVALIDATE_ENG17_REQ for VMID 0, every level of the tables, flush type 0 (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
constexpr std::uint32_t invalidate_vmid0 = 0x00F80001;

}  // namespace

void gmc_v11::init_hub(hub h, memory::gpu_pa root, std::uint64_t va_base, std::uint64_t va_bytes,
                       memory::gpu_pa memscratch, memory::gpu_pa dummy_page) {
  ip_registers& r = regs(h);
  const hub_names n{h == hub::gc ? "GC" : "MM"};
  const std::uint64_t fb_top = c_.fb_base + c_.disc.vram_bytes - 1;
  // Apertures: AGP off, the system aperture over the framebuffer (gc_11_0_0_sh_mask.h; gc_12_0_0_sh_mask.h).
  r.write(n("MC_VM_AGP_BASE"), 0);
  r.write(n("MC_VM_AGP_BOT"), std::uint32_t(0xFFFFFFFFFFFFull >> 24));
  r.write(n("MC_VM_AGP_TOP"), 0);
  r.write(n("MC_VM_SYSTEM_APERTURE_LOW_ADDR"), std::uint32_t(c_.fb_base >> 18));
  r.write(n("MC_VM_SYSTEM_APERTURE_HIGH_ADDR"), std::uint32_t(fb_top >> 18));
  r.write64(n("MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB"), n("MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB"),
            memscratch.value >> 12);
  r.write64(n("VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32"), n("VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32"),
            dummy_page.value >> 12);
  r.update(n("VM_L2_PROTECTION_FAULT_CNTL2"), {{"ACTIVE_PAGE_MIGRATION_PTE_READ_RETRY", 1}});
  r.write_fields(n("MC_VM_MX_L1_TLB_CNTL"), {{"ENABLE_L1_TLB", 1}, {"SYSTEM_ACCESS_MODE", 3},
                                            {"ENABLE_ADVANCED_DRIVER_MODEL", 1}, {"MTYPE", 3}});
  // L2 (gc_11_0_0_sh_mask.h; gc_12_0_0_sh_mask.h): fragment processing off on gfx10+, identity aperture of context 1 off.
  r.update(n("VM_L2_CNTL"), {{"ENABLE_L2_CACHE", 1}, {"ENABLE_L2_FRAGMENT_PROCESSING", 0},
                             {"ENABLE_DEFAULT_PAGE_OUT_TO_SYSTEM_MEMORY", 1}, {"L2_PDE0_CACHE_TAG_GENERATION_MODE", 0},
                             {"PDE_FAULT_CLASSIFICATION", 0}, {"CONTEXT1_IDENTITY_ACCESS_MODE", 1},
                             {"IDENTITY_MODE_FRAGMENT_SIZE", 0}});
  r.update(n("VM_L2_CNTL2"), {{"INVALIDATE_ALL_L1_TLBS", 1}, {"INVALIDATE_L2_CACHE", 1}});
  r.write_fields(n("VM_L2_CNTL3"), {{"L2_CACHE_4K_ASSOCIATIVITY", 1}, {"L2_CACHE_BIGK_ASSOCIATIVITY", 1},
                                   {"BANK_SELECT", 9}, {"L2_CACHE_BIGK_FRAGMENT_SIZE", 6}});
  r.write_fields(n("VM_L2_CNTL4"), {{"L2_CACHE_4K_PARTITION_COUNT", 1}});
  r.update(n("VM_L2_CNTL5"), {{"WALKER_PRIORITY_CLIENT_ID", 0x1FF}});
  r.write64(n("VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32"), n("VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32"),
            0xFFFFFFFFFull);
  r.write64(n("VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32"), n("VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32"), 0);
  r.write64(n("VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32"), n("VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32"), 0);
  // VM_CONTEXT0 over our tables (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c): pages, root | valid.
  const std::uint64_t end = std::min<std::uint64_t>(va_base + va_bytes - 1, 0x7FFFFFFFFFFFull);
  r.write64(n("VM_CONTEXT0_PAGE_TABLE_START_ADDR_LO32"), n("VM_CONTEXT0_PAGE_TABLE_START_ADDR_HI32"), va_base >> 12);
  r.write64(n("VM_CONTEXT0_PAGE_TABLE_END_ADDR_LO32"), n("VM_CONTEXT0_PAGE_TABLE_END_ADDR_HI32"), end >> 12);
  r.write64(n("VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32"), n("VM_CONTEXT0_PAGE_TABLE_BASE_ADDR_HI32"), root.value | 1);
  std::uint32_t cntl = 0x01800000;  // the reference's raw base value (gc_11_0_0_sh_mask.h; gc_12_0_0_sh_mask.h)
  const std::string cntl_name = n("VM_CONTEXT0_CNTL");
  for (const char* f : {"RANGE", "DUMMY_PAGE", "PDE0", "VALID", "READ", "WRITE", "EXECUTE"})
    for (const char* kind : {"_PROTECTION_FAULT_ENABLE_INTERRUPT", "_PROTECTION_FAULT_ENABLE_DEFAULT"})
      cntl = r.field(cntl_name, std::string(f) + kind).set(cntl, 1);
  cntl = r.field(cntl_name, "ENABLE_CONTEXT").set(cntl, 1);
  cntl = r.field(cntl_name, "PAGE_TABLE_DEPTH").set(cntl, 3);  // 4 levels (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)
  cntl = r.field(cntl_name, "PAGE_TABLE_BLOCK_SIZE").set(cntl, 0);
  r.write(cntl_name, cntl);
  for (int e = 0; e <= 17; ++e) {
    const std::string eng = "VM_INVALIDATE_ENG" + std::to_string(e) + "_ADDR_RANGE_";
    r.write64(n((eng + "LO32").c_str()), n((eng + "HI32").c_str()), 0x1FFFFFFFFFull);
  }
}

void gmc_v11::invalidate_tlb(memory::gpu_va, std::uint64_t) {
  c_.io.flush_hdp();  // table writes made through BAR0 reach VRAM first (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)
  flush(hub::mm);
  if (gc_ready_) flush(hub::gc);
  ++flushes_;
}

void gmc_v11::flush(hub h) {
  ip_registers& r = regs(h);
  const hub_names n{h == hub::gc ? "GC" : "MM"};
  const bool mm = h == hub::mm;
  if (mm) r.poll(n("VM_INVALIDATE_ENG17_SEM"), "SEMAPHORE", 1, c_.opt.timeout, "MM hub invalidation semaphore");
  r.write(n("VM_INVALIDATE_ENG17_REQ"), invalidate_vmid0);
  r.poll(n("VM_INVALIDATE_ENG17_ACK"), "PER_VMID_INVALIDATE_ACK", 1, c_.opt.timeout,
         mm ? "MM hub TLB flush (invalidation ack)" : "GC hub TLB flush (invalidation ack)");
  if (!mm) return;
  r.write(n("VM_INVALIDATE_ENG17_SEM"), 0);
  // gfx11+: private invalidation of the reserved cache, then a read back (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
  r.update(n("VM_L2_BANK_SELECT_RESERVED_CID2"), {{"RESERVED_CACHE_PRIVATE_INVALIDATION", 1}});
  r.read(n("VM_L2_BANK_SELECT_RESERVED_CID2"));
}

}  // namespace tg::amd
