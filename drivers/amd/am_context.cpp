// am_context.cpp: register tables per IP version, early VRAM access (see am_context.hpp).
#include "drivers/amd/am_context.hpp"

#include <algorithm>
#include <vector>

#include <tg/core/error.hpp>

#include "drivers/amd/regs/gc_11_0_0.hpp"
#include "drivers/amd/regs/gc_11_0_3.hpp"
#include "drivers/amd/regs/gc_12_0_0.hpp"
#include "drivers/amd/regs/mmhub_3_0_0.hpp"
#include "drivers/amd/regs/mmhub_4_1_0.hpp"
#include "drivers/amd/regs/osssys_6_0_0.hpp"
#include "drivers/amd/regs/osssys_7_0_0.hpp"

namespace tg::amd {

namespace {

constexpr std::uint64_t boot_region_bytes = 32ull << 20;  // tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c
constexpr std::uint64_t max_chunk = 1ull << 20;

memory::gfx_gen gen_of(const discovery& d) {
  const ip_version gc = d.version_of(hw_id::gc);
  if (gc.major == 11) return memory::gfx_gen::gfx11;
  if (gc.major == 12) return memory::gfx_gen::gfx12;
  throw device_error(str(d.device, ": GC ", gc.text(), " (", d.gfx_target(),
                         ") is not supported; the AM driver handles gfx11 (RDNA3) and gfx12 (RDNA4)"));
}

const queue::reg_table& table_for(const discovery& d, std::uint16_t hw) {
  const ip_version v = d.version_of(hw);
  if (hw == hw_id::gc) {
    // GC 11.0.3 (Navi 32) has its own GC hub layout (gmc_v11_0.c: gmc_v11_0_set_gfxhub_funcs picks
    // gfxhub_v3_0_3.c, which reads gc_11_0_3_offset.h); its CP, RLC and SDMA registers are 11.0.0's
    // (gfx_v11_0.c reads gc_11_0_0_offset.h for every GC 11.0.x), and the generated 11.0.3 table
    // carries both. GC 12.0.1 shares 12.0.0's header (gfx_v12_0.c, gmc_v12_0.c: gfxhub_v12_0).
    if (v.major == 11) return v == ip_version{11, 0, 3} ? regs::gc_11_0_3::table : regs::gc_11_0_0::table;
    return regs::gc_12_0_0::table;
  }
  if (hw == hw_id::mmhub) {
    if (v.major == 3) return regs::mmhub_3_0_0::table;
    if (v.major == 4) return regs::mmhub_4_1_0::table;
  }
  if (hw == hw_id::osssys) {
    if (v.major == 6) return regs::osssys_6_0_0::table;
    if (v.major == 7) return regs::osssys_7_0_0::table;
  }
  throw device_error(str(d.device, ": no register table for ", hw_name(hw), " ", v.text()));
}

}  // namespace

am_context::am_context(transport::device_transport& transport, const am_options& o)
    : t(transport), opt(o), io(transport), disc(read_discovery(transport)), gen(gen_of(disc)),
      boot(memory::gpu_pa{0}, boot_region_bytes) {
  for (auto [hw, slot] : {std::pair{hw_id::gc, &gc}, {hw_id::mmhub, &mmhub}, {hw_id::osssys, &osssys}})
    *slot = std::make_unique<ip_registers>(io, table_for(disc, hw), disc.require(hw).bases);
  mp0_base = disc.require(hw_id::mp0).bases.at(0);
  mp1_base = disc.require(hw_id::mp1).bases.at(0);
  // FB_LOCATION_BASE holds MC address bits 47:24 (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
  fb_base = std::uint64_t(mmhub->read("regMMMC_VM_FB_LOCATION_BASE") & 0xFFFFFF) << 24;
}

void am_context::write_vram(memory::gpu_pa at, std::span<const std::byte> bytes) {
  transport::bar_window& bar0 = t.bar(0);
  if (std::byte* p = bar0.mapping(); p && at.value + bytes.size() <= bar0.size()) {
    std::copy(bytes.begin(), bytes.end(), p + at.value);
    return;
  }
  const std::uint64_t limit = t.limits().max_write_chunk, chunk = limit ? std::min(limit, max_chunk) : max_chunk;
  for (std::size_t done = 0; done < bytes.size(); done += chunk)
    bar0.write(at.value + done, bytes.subspan(done, std::min<std::size_t>(chunk, bytes.size() - done)));
}

void am_context::read_vram(memory::gpu_pa at, std::span<std::byte> bytes) {
  transport::bar_window& bar0 = t.bar(0);
  if (std::byte* p = bar0.mapping(); p && at.value + bytes.size() <= bar0.size()) {
    std::copy(p + at.value, p + at.value + bytes.size(), bytes.begin());
    return;
  }
  const std::uint64_t limit = t.limits().max_read_chunk, chunk = limit ? std::min(limit, max_chunk) : max_chunk;
  for (std::size_t done = 0; done < bytes.size(); done += chunk)
    bar0.read(at.value + done, bytes.subspan(done, std::min<std::size_t>(chunk, bytes.size() - done)));
}

void am_context::zero_vram(memory::gpu_pa at, std::uint64_t bytes) {
  const std::vector<std::byte> zeros(std::min(bytes, max_chunk));
  for (std::uint64_t done = 0; done < bytes; done += zeros.size())
    write_vram(at + done, std::span(zeros).first(std::min<std::uint64_t>(zeros.size(), bytes - done)));
}

memory::gpu_pa am_context::boot_alloc(std::uint64_t bytes, std::uint64_t align) {
  bytes = (bytes + 4095) / 4096 * 4096;
  const memory::gpu_pa pa = boot.allocate(bytes, align);
  zero_vram(pa, bytes);
  return pa;
}

std::uint64_t bar_vram_access::read64(memory::gpu_pa at) {
  std::uint64_t w = 0;
  c_.read_vram(at, std::as_writable_bytes(std::span(&w, 1)));
  return w;
}
void bar_vram_access::write64(memory::gpu_pa at, std::uint64_t word) {
  c_.write_vram(at, std::as_bytes(std::span(&word, 1)));
}
void bar_vram_access::write_words(memory::gpu_pa first, std::span<const std::uint64_t> words) {
  c_.write_vram(first, std::as_bytes(words));
}
void bar_vram_access::read_words(memory::gpu_pa first, std::span<std::uint64_t> words) {
  c_.read_vram(first, std::as_writable_bytes(words));
}

}  // namespace tg::amd
