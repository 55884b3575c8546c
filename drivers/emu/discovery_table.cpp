// discovery_table.cpp: builds the IP discovery binary (see discovery_table.hpp).
#include "drivers/emu/discovery_table.hpp"

#include <cstring>

#include "drivers/amd/regs/gc_11_0_0.hpp"
#include "drivers/amd/regs/gc_11_0_3.hpp"
#include "drivers/amd/regs/gc_12_0_0.hpp"
#include "drivers/amd/regs/mmhub_3_0_0.hpp"
#include "drivers/amd/regs/mmhub_4_1_0.hpp"
#include "drivers/amd/regs/osssys_6_0_0.hpp"
#include "drivers/amd/regs/osssys_7_0_0.hpp"
#include <tg/core/error.hpp>

namespace tg::emu {

namespace {

namespace regs = tg::amd::regs;

// Signatures, ids and versions of include/discovery.h.
constexpr std::uint32_t binary_signature = 0x28211407, ip_discovery_signature = 0x53445049,
                        harvest_signature = 0x56524148, gc_table_id = 0x4347;
constexpr std::size_t total_tables = 6;  // IP_DISCOVERY, GC, HARVEST_INFO, VCN_INFO, MALL_INFO, NPS_INFO
constexpr std::size_t table_ip_discovery = 0, table_gc = 1, table_harvest = 2;
constexpr std::size_t binary_header_bytes = 12 + total_tables * 8;      // 60
constexpr std::size_t ip_discovery_header_bytes = 4 + 2 + 2 + 4 + 2 + 16 * 4 + 2;  // 80
constexpr std::size_t gc_info_header_bytes = 12;
constexpr std::size_t harvest_table_bytes = 8 + 32 * 4;
constexpr std::size_t padded_bases = 10;  // the reference mock's base list length (tinygrad's mock GPU (test/mockgpu/amd))

// The navi-family bases (tinygrad's mock GPU (test/mockgpu/amd)). The first segments must be those the register indices
// were built from (personality.cpp takes them from the generated tables).
constexpr std::uint32_t gc_bases[] = {0x1260, 0xA000, 0x1C000, 0x2402C00};
constexpr std::uint32_t mmhub_bases[] = {0x1A000, 0x2408800};
constexpr std::uint32_t nbio_bases[] = {0x0, 0x14, 0xD20, 0x10400, 0x241B000, 0x4040000};
constexpr std::uint32_t mp_bases[] = {0x16000, 0xDC0000, 0xE00000, 0xE40000, 0x243FC00};
constexpr std::uint32_t hdp_bases[] = {0xF20, 0x240A400};
constexpr std::uint32_t osssys_bases[] = {0x10A0, 0x240A000};

template <std::size_t N>
constexpr bool starts_with(const std::uint32_t (&published)[N], std::span<const std::uint32_t> used) {
  for (std::size_t i = 0; i < used.size(); ++i)
    if (i >= N || published[i] != used[i]) return false;
  return true;
}
static_assert(starts_with(gc_bases, regs::gc_11_0_0::navi10_bases) && starts_with(gc_bases, regs::gc_11_0_3::navi10_bases) &&
              starts_with(gc_bases, regs::gc_12_0_0::navi10_bases));
static_assert(starts_with(mmhub_bases, regs::mmhub_3_0_0::navi10_bases) &&
              starts_with(mmhub_bases, regs::mmhub_4_1_0::navi10_bases));
static_assert(starts_with(osssys_bases, regs::osssys_6_0_0::navi10_bases) &&
              starts_with(osssys_bases, regs::osssys_7_0_0::navi10_bases));

template <std::size_t N>
std::vector<std::uint32_t> list(const std::uint32_t (&b)[N]) {
  return {b, b + N};
}

// Little-endian fields into a growing byte buffer.
class writer {
 public:
  std::size_t size() const { return bytes_.size(); }
  void u8(std::uint8_t v) { bytes_.push_back(std::byte(v)); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void align(std::size_t a) {
    while (bytes_.size() % a) u8(0);
  }
  void patch16(std::size_t at, std::uint16_t v) {
    for (unsigned i = 0; i < 2; ++i) bytes_[at + i] = std::byte(v >> (8 * i));
  }
  std::span<const std::byte> range(std::size_t from, std::size_t n) const { return std::span(bytes_).subspan(from, n); }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  void put(std::uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) u8(std::uint8_t(v >> (8 * i)));
  }
  std::vector<std::byte> bytes_;
};

// The IP discovery table (header, one die, ip_v4 records); returns its size.
std::size_t write_ip_discovery(writer& w, const personality& chip) {
  const std::size_t start = w.size();
  const std::vector<discovery_ip> ips = discovery_ips(chip);
  w.u32(ip_discovery_signature);
  w.u16(4);  // version
  const std::size_t size_at = w.size();
  w.u16(0);  // size, patched below
  w.u32(0);  // id
  w.u16(1);  // num_dies
  const std::size_t die_offset = start + ip_discovery_header_bytes;
  w.u16(0);  // die_info[0].die_id
  w.u16(std::uint16_t(die_offset));
  for (int i = 1; i < 16; ++i) w.u32(0);
  w.u8(0);  // base_addr_64_bit = 0: 32-bit bases
  w.u8(0);
  w.u16(0);  // die_header.die_id
  w.u16(std::uint16_t(ips.size()));
  for (const discovery_ip& ip : ips) {
    w.u16(ip.hw_id);
    w.u8(0);  // instance_number
    w.u8(std::uint8_t(padded_bases));
    w.u8(ip.version.major);
    w.u8(ip.version.minor);
    w.u8(ip.version.revision);
    w.u8(0);  // sub_revision, variant
    for (std::size_t i = 0; i < padded_bases; ++i) w.u32(i < ip.bases.size() ? ip.bases[i] : 0);
  }
  const std::size_t size = w.size() - start;
  w.patch16(size_at, std::uint16_t(size));
  return size;
}

std::size_t write_gc_info(writer& w, const personality& chip) {
  const gc_info g = discovery_gc_info(chip);
  std::uint32_t fields[sizeof(gc_info) / 4];
  std::memcpy(fields, &g, sizeof g);
  const std::size_t size = gc_info_header_bytes + sizeof fields;
  w.u32(gc_table_id);
  w.u16(2);  // version 2.1
  w.u16(1);
  w.u32(std::uint32_t(size));
  for (std::uint32_t f : fields) w.u32(f);
  return size;
}

std::size_t write_harvest(writer& w) {
  w.u32(harvest_signature);
  w.u32(1);  // version
  for (int i = 0; i < 32; ++i) w.u32(0);  // hw_id 0 ends the list: nothing harvested
  return harvest_table_bytes;
}

}  // namespace

std::vector<discovery_ip> discovery_ips(const personality& chip) {
  return {{hw_id::gc, chip.gc, list(gc_bases)},       {hw_id::sdma0, chip.sdma, list(gc_bases)},
          {hw_id::mmhub, chip.mmhub, list(mmhub_bases)}, {hw_id::nbif, chip.nbio, list(nbio_bases)},
          {hw_id::mp0, chip.mp0, list(mp_bases)},       {hw_id::mp1, chip.mp1, list(mp_bases)},
          {hw_id::hdp, chip.hdp, list(hdp_bases)},       {hw_id::osssys, chip.osssys, list(osssys_bases)}};
}

gc_info discovery_gc_info(const personality& chip) {
  // gfx1100: a Navi31 (96 CUs: 6 SE x 2 SH x 8 CU); gfx1101: a Navi32 (60 CUs: 3 x 2 x 10); gfx1200:
  // the mock's Navi44 (32 CUs: 2 x 2 x 8); gfx1201: a Navi48 (64 CUs: 4 x 2 x 8; AMD's published CU
  // and shader-engine counts; llvm/docs/AMDGPUUsage.rst).
  const bool g12 = chip.gen == gfx_gen::gfx12;
  gc_info g{};
  g.num_se = chip.target == "gfx1101" ? 3 : chip.target == "gfx1201" ? 4 : g12 ? 2 : 6;
  g.num_cu_per_sh = chip.target == "gfx1101" ? 10 : 8;
  g.num_sh_per_se = 2;
  g.num_rb_per_se = 4;
  g.num_tccs = g12 ? 8 : 24;
  g.num_gprs = 1536;
  g.num_max_gs_thds = 32;
  g.gs_table_depth = 32;
  g.gsprim_buff_depth = 1792;
  g.parameter_cache_depth = 1024;
  g.double_offchip_lds_buffer = 1;
  g.wave_size = 32;
  g.max_waves_per_simd = 16;
  g.max_scratch_slots_per_cu = 32;
  g.lds_size = 64;  // KiB (llvm/docs/AMDGPUUsage.rst)
  g.num_sc_per_se = 2;
  g.num_packer_per_sc = 4;
  g.num_tcp_per_sh = 8;
  g.tcp_size_per_cu = 32;
  g.num_sdp_interface = g12 ? 8 : 16;
  g.num_cu_per_sqc = 2;
  g.instruction_cache_size_per_sqc = 64;
  g.scalar_data_cache_size_per_sqc = 16;
  g.tcc_size = g12 ? 4096 : 6144;  // KiB
  return g;
}

std::uint16_t discovery_checksum(std::span<const std::byte> bytes) {
  std::uint16_t sum = 0;
  for (std::byte b : bytes) sum = std::uint16_t(sum + std::uint8_t(b));
  return sum;
}

std::vector<std::byte> build_discovery_table(const personality& chip) {
  writer w;
  w.u32(binary_signature);
  w.u16(2);  // version_major
  w.u16(0);
  w.u16(0);  // binary_checksum, patched below
  w.u16(0);  // binary_size, patched below
  for (std::size_t i = 0; i < total_tables * 4; ++i) w.u16(0);  // table_list, patched below
  w.align(16);

  struct placed {
    std::size_t offset, size;
  } tables[3];
  tables[table_ip_discovery].offset = w.size();
  tables[table_ip_discovery].size = write_ip_discovery(w, chip);
  w.align(16);
  tables[table_gc].offset = w.size();
  tables[table_gc].size = write_gc_info(w, chip);
  w.align(16);
  tables[table_harvest].offset = w.size();
  tables[table_harvest].size = write_harvest(w);
  if (w.size() > discovery_max_bytes)
    throw usage_error(str("emu: the discovery table is ", w.size(), " bytes; a driver reads ", discovery_max_bytes));

  for (std::size_t t = 0; t < 3; ++t) {  // table_info {offset, checksum, size, padding}
    const std::size_t at = 12 + t * 8;
    w.patch16(at, std::uint16_t(tables[t].offset));
    w.patch16(at + 2, discovery_checksum(w.range(tables[t].offset, tables[t].size)));
    w.patch16(at + 4, std::uint16_t(tables[t].size));
  }
  const std::size_t total = w.size();
  w.patch16(10, std::uint16_t(total));
  w.patch16(8, discovery_checksum(w.range(10, total - 10)));  // everything after binary_checksum
  static_assert(binary_header_bytes == 60);
  return w.take();
}

}  // namespace tg::emu
