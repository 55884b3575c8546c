// ih_ring.cpp: IH ring 0 entries for GC hub faults (see ih_ring.hpp).
#include "drivers/emu/ih_ring.hpp"

#include <array>

namespace tg::emu {

namespace {

constexpr std::uint32_t write_fault_bit = 0x20;  // src_data[1] bit 5 (gmc_v11_0.c write_fault)

}  // namespace

void ih_ring::install() {
  const ih_registers& r = core_.chip.ih_reg;
  const register_fields& f = core_.chip.field;
  core_.regs.set_behaviour(r.rb_cntl, {.on_write = [this, r, f](std::uint32_t v) {
                             if (!f.ih_wptr_overflow_clear.get(v)) return;
                             const std::uint32_t wptr = f.ih_rb_overflow.set(core_.regs.peek(r.rb_wptr), 0);
                             core_.regs.poke(r.rb_wptr, wptr);
                             core_.regs.poke(r.rb_cntl, f.ih_wptr_overflow_clear.set(v, 0));
                             write_back(wptr);
                           }});
}

void ih_ring::write_back(std::uint32_t wptr) {
  const ih_registers& r = core_.chip.ih_reg;
  const std::uint64_t mc = std::uint64_t{core_.regs.peek(r.rb_wptr_addr_hi) & 0xFFFF} << 32 |
                           (core_.regs.peek(r.rb_wptr_addr_lo) & ~3u);
  if (mc == 0) return;
  if (std::optional<gpu_pa> at = core_.mc_to_vram(mc, 4)) core_.memory.store32(*at, wptr);
}

void ih_ring::post_fault(const fault_event& fault) {
  const ih_registers& r = core_.chip.ih_reg;
  const register_fields& f = core_.chip.field;
  const std::uint32_t cntl = core_.regs.peek(r.rb_cntl);
  if (!f.ih_rb_enable.get(cntl)) return;
  const std::uint64_t ring_mc = (std::uint64_t{core_.regs.peek(r.rb_base_hi) & 0xFF} << 32 | core_.regs.peek(r.rb_base)) << 8;
  const std::uint32_t ring_bytes = 4u << f.ih_rb_size.get(cntl);
  const std::optional<gpu_pa> ring = core_.mc_to_vram(ring_mc, ring_bytes);
  if (!ring || ring_bytes < 2 * entry_bytes) return;

  std::uint32_t wptr = core_.regs.peek(r.rb_wptr);
  const std::uint32_t offset = f.ih_offset.get(wptr) * 4 % ring_bytes;
  const std::uint32_t rptr = f.ih_offset.get(core_.regs.peek(r.rb_rptr)) * 4 % ring_bytes;
  const std::uint32_t next = (offset + entry_bytes) % ring_bytes;
  if (next == rptr) {  // full: hardware would overwrite unread entries; we keep them and flag it
    ++stats_.dropped;
    if (f.ih_wptr_overflow_enable.get(cntl)) {
      wptr = f.ih_rb_overflow.set(wptr, 1);
      core_.regs.poke(r.rb_wptr, wptr);
      write_back(wptr);
    }
    return;
  }
  const std::uint64_t clock = core_.gpu_clock();
  const std::array<std::uint32_t, 8> entry{
      client_gfx | source_utcl2_fault << 8,  // ring id 0, vmid 0, vmid type 0 (GFX hub)
      std::uint32_t(clock),
      std::uint32_t(clock >> 32) & 0xFFFF,
      0,  // pasid, node id
      std::uint32_t(fault.address.value >> 12),
      (std::uint32_t(fault.address.value >> 44) & 0xF) | (fault.access == access_kind::write ? write_fault_bit : 0),
      0,
      0};
  for (std::uint32_t i = 0; i < entry.size(); ++i) core_.memory.store32(*ring + offset + 4 * i, entry[i]);
  wptr = f.ih_offset.set(wptr, next / 4);
  core_.regs.poke(r.rb_wptr, wptr);
  write_back(wptr);
  ++stats_.entries;
}

}  // namespace tg::emu
