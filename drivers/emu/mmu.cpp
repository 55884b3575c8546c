// mmu.cpp: system aperture, VM_CONTEXT0 walks, the TLB and fault latching (see mmu.hpp).
#include "drivers/emu/mmu.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace tg::emu {

namespace {

constexpr std::array<unsigned, 4> level_shift{39, 30, 21, 12};  // PDB2, PDB1, PDB0, PTB (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)
constexpr std::size_t tlb_capacity = 64 * 1024;
constexpr std::uint64_t bounce_bytes = 1 << 20;  // per system-bus transfer of a copy or fill
constexpr std::uint64_t page_table_base_valid = 1;                  // bit 0 of PAGE_TABLE_BASE_ADDR (amdgpu_vm.h)
constexpr std::uint64_t page_table_base_mask = 0x0000'FFFF'FFFF'F000;  // bits 47:12 (tinygrad's mock GPU (test/mockgpu/amd))
constexpr unsigned system_aperture_shift = 18;                      // LOW/HIGH_ADDR hold address >> 18 (gc_11_0_0_sh_mask.h; gc_12_0_0_sh_mask.h)
constexpr unsigned fb_location_shift = 24;                          // FB_LOCATION_BASE holds address >> 24 (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)

// PERMISSION_FAULTS bits. Linux names the field but not its bits; kfd_int_process_v11.c decodes
// the same protection flags of a fault as valid, read, write (IH ring_id bits 3, 4, 5), and we
// take that order for the field [inferred].
constexpr std::uint32_t permission_valid = 1u << 0, permission_read = 1u << 1, permission_write = 1u << 2;

const char* client_name(utcl2_client c) { return c == utcl2_client::cpc ? "CPC" : "SDMA0"; }
const char* access_name(access_kind a) { return a == access_kind::read ? "read" : "write"; }

}  // namespace

mmu::mmu(const personality& chip, register_file& regs, vram& memory) : chip_(chip), regs_(regs), memory_(memory) {}

std::uint64_t mmu::reg64(std::uint32_t lo, std::uint32_t hi) const {
  return std::uint64_t{regs_.peek(hi)} << 32 | regs_.peek(lo);
}

void mmu::raise(gpu_va va, access_kind access, utcl2_client client, fault_bits bits, const std::string& why) {
  const register_fields& f = chip_.field;
  const gc_registers& r = chip_.gc_reg;
  std::uint32_t s = f.fault_permission.set(0, bits.permission);
  s = f.fault_mapping_error.set(s, bits.mapping_error ? 1 : 0);
  s = f.fault_walker_error.set(s, bits.walker_error ? 1 : 0);
  s = f.fault_cid.set(s, std::uint32_t(client));
  s = f.fault_rw.set(s, access == access_kind::write ? 1 : 0);
  s = f.fault_vmid.set(s, 0);
  const std::uint32_t latched = regs_.peek(r.vm_fault_status);
  if (latched != 0) {
    regs_.poke(r.vm_fault_status, f.fault_more.set(latched, 1));
  } else {
    regs_.poke(r.vm_fault_status, s);
    // FAULT_ADDR holds the page number: VA = value << 12 (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
    regs_.poke(r.vm_fault_addr_lo, std::uint32_t(va.value >> 12));
    regs_.poke(r.vm_fault_addr_hi, std::uint32_t(va.value >> 44));
  }
  if (listener_) listener_({va, access, client, s});
  throw page_fault(str("emu mmu: ", client_name(client), ' ', access_name(access), " of VA ", va, ": ", why), va,
                   access);
}

const memory::walked_leaf* mmu::lookup(gpu_va va) {
  if (last_ && va >= last_->va && va.value - last_->va.value < last_->size_bytes) return last_;
  for (unsigned level = 4; level-- > 0;) {
    auto it = tlb_[level].find(va.value >> level_shift[level]);
    if (it != tlb_[level].end() && va >= it->second.va && va.value - it->second.va.value < it->second.size_bytes)
      return last_ = &it->second;
  }
  return nullptr;
}

const memory::walked_leaf* mmu::walk(gpu_va va, gpu_va va_base, access_kind access, utcl2_client client) {
  const gc_registers& r = chip_.gc_reg;
  const std::uint64_t base = reg64(r.vm_pt_base_lo, r.vm_pt_base_hi);
  if ((base & page_table_base_valid) == 0)
    raise(va, access, client, {.permission = permission_valid},
          "GCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR has no valid bit: no page table is programmed");
  std::optional<memory::walked_leaf> leaf;
  try {
    leaf = memory::translate(chip_.gen, memory_, {base & page_table_base_mask}, va_base, va);
  } catch (const usage_error& e) {  // a directory entry pointing outside VRAM
    raise(va, access, client, {.walker_error = true}, str("the page-table walk left VRAM: ", e.what()));
  }
  if (!leaf) raise(va, access, client, {.permission = permission_valid}, "no valid page-table entry maps it");
  if (stats_.entries >= tlb_capacity) invalidate();
  auto [it, inserted] = tlb_[leaf->level].insert_or_assign(leaf->va.value >> level_shift[leaf->level], *leaf);
  if (inserted) ++stats_.entries;
  return last_ = &it->second;
}

mmu::run mmu::translate(gpu_va va, std::uint64_t bytes, access_kind access, utcl2_client client) {
  const gc_registers& r = chip_.gc_reg;
  const register_fields& f = chip_.field;
  if (bytes == 0) bytes = 1;

  // The system aperture: VMID 0 addresses inside it are MC addresses, fb_base + VRAM offset.
  const std::uint64_t low = f.system_aperture_addr.get(regs_.peek(r.system_aperture_low));
  const std::uint64_t high = f.system_aperture_addr.get(regs_.peek(r.system_aperture_high));
  if (high != 0 && high >= low) {
    const std::uint64_t first = low << system_aperture_shift;
    const std::uint64_t last = (high << system_aperture_shift) | ((1u << system_aperture_shift) - 1);
    if (va.value >= first && va.value <= last) {
      const std::uint64_t fb = std::uint64_t{f.fb_base.get(regs_.peek(r.fb_location_base))} << fb_location_shift;
      if (va.value < fb || !memory_.contains({va.value - fb}, 1))
        raise(va, access, client, {.mapping_error = true}, "inside the system aperture but outside VRAM");
      const gpu_pa pa{va.value - fb};
      return {pa, std::min({bytes, last + 1 - va.value, memory_.size_bytes() - pa.value})};
    }
  }

  const gpu_va start{reg64(r.vm_pt_start_lo, r.vm_pt_start_hi) << 12};
  const std::uint64_t end = reg64(r.vm_pt_end_lo, r.vm_pt_end_hi) << 12 | 0xFFF;
  if (va < start || va.value > end)
    raise(va, access, client, {.permission = permission_valid},
          str("outside VM_CONTEXT0 [", start, ", ", hex{end}, "]"));

  const memory::walked_leaf* leaf = lookup(va);
  if (leaf) ++stats_.hits;
  else {
    ++stats_.misses;
    leaf = walk(va, start, access, client);
  }
  if (access == access_kind::read && !leaf->readable)
    raise(va, access, client, {.permission = permission_read}, "the page is not readable");
  if (access == access_kind::write && !leaf->writable)
    raise(va, access, client, {.permission = permission_write}, "the page is not writable");
  const gpu_pa pa = leaf->pa + (va.value - leaf->va.value);
  const std::uint64_t n = std::min(bytes, leaf->va.value + leaf->size_bytes - va.value);
  if (leaf->system) {
    if (!bus_)
      raise(va, access, client, {.mapping_error = true},
            str("its page maps system memory (bus address ", hex{pa.value}, ") and no system bus is attached"));
    return {pa, n, true};
  }
  if (!memory_.contains(pa, n))
    raise(va, access, client, {.mapping_error = true}, str("its page maps ", pa, ", beyond VRAM"));
  return {pa, n};
}

void mmu::bus_read(gpu_va va, const run& r, std::span<std::byte> out, utcl2_client client) {
  try {
    bus_->read(r.pa.value, out);
  } catch (const std::exception& e) {
    raise(va, access_kind::read, client, {.mapping_error = true},
          str("the system bus failed a ", out.size(), "-byte read at ", hex{r.pa.value}, ": ", e.what()));
  }
}

void mmu::bus_write(gpu_va va, const run& r, std::span<const std::byte> in, utcl2_client client) {
  try {
    bus_->write(r.pa.value, in);
  } catch (const std::exception& e) {
    raise(va, access_kind::write, client, {.mapping_error = true},
          str("the system bus failed a ", in.size(), "-byte write at ", hex{r.pa.value}, ": ", e.what()));
  }
}

void mmu::read(gpu_va va, std::span<std::byte> out, utcl2_client client) {
  for (std::uint64_t done = 0; done < out.size();) {
    run r = translate(va + done, out.size() - done, access_kind::read, client);
    if (r.system) bus_read(va + done, r, out.subspan(done, r.bytes), client);
    else std::memcpy(out.data() + done, memory_.at(r.pa, r.bytes), r.bytes);
    done += r.bytes;
  }
}

void mmu::write(gpu_va va, std::span<const std::byte> in, utcl2_client client) {
  for (std::uint64_t done = 0; done < in.size();) {
    run r = translate(va + done, in.size() - done, access_kind::write, client);
    if (r.system) bus_write(va + done, r, in.subspan(done, r.bytes), client);
    else std::memcpy(memory_.at(r.pa, r.bytes), in.data() + done, r.bytes);
    done += r.bytes;
  }
}

void mmu::copy(gpu_va dst, gpu_va src, std::uint64_t bytes, utcl2_client client) {
  for (std::uint64_t done = 0; done < bytes;) {
    run s = translate(src + done, bytes - done, access_kind::read, client);
    if (s.system) s.bytes = std::min(s.bytes, bounce_bytes);
    run d = translate(dst + done, s.bytes, access_kind::write, client);
    if (!s.system && !d.system) {
      std::memmove(memory_.at(d.pa, d.bytes), memory_.at(s.pa, d.bytes), d.bytes);
    } else {  // through a bounce buffer: one side is on the system bus
      d.bytes = std::min(d.bytes, bounce_bytes);
      std::vector<std::byte> buffer(d.bytes);
      if (s.system) bus_read(src + done, s, buffer, client);
      else std::memcpy(buffer.data(), memory_.at(s.pa, d.bytes), d.bytes);
      if (d.system) bus_write(dst + done, d, buffer, client);
      else std::memcpy(memory_.at(d.pa, d.bytes), buffer.data(), d.bytes);
    }
    done += d.bytes;
  }
}

void mmu::fill(gpu_va dst, std::uint64_t bytes, std::uint32_t pattern, utcl2_client client) {
  for (std::uint64_t done = 0; done < bytes;) {
    run d = translate(dst + done, bytes - done, access_kind::write, client);
    if (d.system) d.bytes = std::min(d.bytes, bounce_bytes);
    std::vector<std::byte> bounce(d.system ? d.bytes : 0);
    std::byte* p = d.system ? bounce.data() : memory_.at(d.pa, d.bytes);
    // The 32-bit pattern repeats from the packet's first byte (little-endian, as the GPU stores
    // it); a tile of whole patterns, rotated to where this run starts, is copied along.
    std::array<std::byte, 256> tile;
    for (std::size_t i = 0; i < tile.size(); ++i) tile[i] = std::byte(pattern >> (8 * ((done + i) % 4)));
    for (std::uint64_t i = 0; i < d.bytes; i += tile.size())
      std::memcpy(p + i, tile.data(), std::min<std::uint64_t>(tile.size(), d.bytes - i));
    if (d.system) bus_write(dst + done, d, bounce, client);
    done += d.bytes;
  }
}

mmu::run mmu::word(gpu_va va, unsigned bytes, access_kind access, utcl2_client client) {
  if (va.value % bytes != 0)
    throw usage_error(str("emu: ", 8 * bytes, "-bit access at ", va, " is not ", bytes, "-byte aligned"));
  return translate(va, bytes, access, client);
}

// Words on system pages are little-endian bytes on the bus.
std::uint32_t mmu::load32(gpu_va va, utcl2_client client) {
  const run r = word(va, 4, access_kind::read, client);
  if (!r.system) return memory_.load32(r.pa);
  std::uint32_t v = 0;
  bus_read(va, r, std::as_writable_bytes(std::span(&v, 1)), client);
  return v;
}
void mmu::store32(gpu_va va, std::uint32_t value, utcl2_client client) {
  const run r = word(va, 4, access_kind::write, client);
  if (!r.system) return memory_.store32(r.pa, value);
  bus_write(va, r, std::as_bytes(std::span(&value, 1)), client);
}
std::uint64_t mmu::load64(gpu_va va, utcl2_client client) {
  const run r = word(va, 8, access_kind::read, client);
  if (!r.system) return memory_.load64(r.pa);
  std::uint64_t v = 0;
  bus_read(va, r, std::as_writable_bytes(std::span(&v, 1)), client);
  return v;
}
void mmu::store64(gpu_va va, std::uint64_t value, utcl2_client client) {
  const run r = word(va, 8, access_kind::write, client);
  if (!r.system) return memory_.store64(r.pa, value);
  bus_write(va, r, std::as_bytes(std::span(&value, 1)), client);
}

void mmu::invalidate() {
  for (auto& level : tlb_) level.clear();
  last_ = nullptr;
  stats_.entries = 0;
  ++stats_.invalidations;
}

tlb_stats mmu::stats() const { return stats_; }

}  // namespace tg::emu
