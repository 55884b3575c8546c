// am_discovery.cpp: parsing and reading the IP discovery table (see am_discovery.hpp).
#include "drivers/amd/am_discovery.hpp"

#include <cstring>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

#include "drivers/amd/am_mmio.hpp"

namespace tg::amd {

namespace {

// Signatures and table ids (Linux include/discovery.h).
constexpr std::uint32_t binary_signature = 0x28211407, ip_discovery_signature = 0x53445049,
                        harvest_signature = 0x56524148, gc_table_id = 0x4347;
// binary_header: table_list[6] of {offset, checksum, size, padding} from byte 12; IP_DISCOVERY = 0,
// GC = 1, HARVEST_INFO = 2.
constexpr std::size_t table_list_at = 12, ip_table = 0, gc_table = 1, harvest_table = 2;
constexpr std::size_t checksum_start = 10;       // the binary checksum covers bytes after its own field
constexpr std::size_t harvest_table_bytes = 136;  // header 8 + 32 entries of 4
constexpr std::size_t max_dies = 16;

// Bounds-checked little-endian reads that name the field and offset when the table is short.
struct reader {
  std::span<const std::byte> bytes;
  std::string_view where;

  std::uint64_t get(std::size_t at, std::size_t n, std::string_view field) const {
    if (at > bytes.size() || bytes.size() - at < n)
      throw usage_error(str(where, ": discovery table truncated: ", field, " at byte ", at, " needs ", n,
                            " bytes but the table has ", bytes.size()));
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + at, n);  // little-endian host, as the GPU writes it
    return v;
  }
  std::uint8_t u8(std::size_t at, std::string_view f) const { return std::uint8_t(get(at, 1, f)); }
  std::uint16_t u16(std::size_t at, std::string_view f) const { return std::uint16_t(get(at, 2, f)); }
  std::uint32_t u32(std::size_t at, std::string_view f) const { return std::uint32_t(get(at, 4, f)); }
  std::uint64_t u64(std::size_t at, std::string_view f) const { return get(at, 8, f); }

  void check_sum(std::size_t at, std::size_t n, std::uint16_t expected, std::string_view what) const {
    if (at > bytes.size() || bytes.size() - at < n)
      throw usage_error(str(where, ": discovery table truncated: the ", what, " at byte ", at, " is ", n,
                            " bytes but the table has ", bytes.size()));
    std::uint16_t sum = 0;  // the byte sum, truncated to 16 bits (amdgpu_discovery_calculate_checksum)
    for (std::size_t i = at; i < at + n; ++i) sum = std::uint16_t(sum + std::to_integer<std::uint8_t>(bytes[i]));
    if (sum != expected)
      throw usage_error(str(where, ": discovery ", what, " checksum mismatch: bytes [", at, ", ", at + n, ") sum to ",
                            hex{sum}, ", the header says ", hex{expected}));
  }
  void check_signature(std::size_t at, std::uint32_t expected, std::string_view what) const {
    const std::uint32_t got = u32(at, what);
    if (got != expected)
      throw usage_error(str(where, ": bad ", what, " signature at byte ", at, ": ", hex{got}, ", expected ",
                            hex{expected}, " (not a discovery table, or read from the wrong VRAM offset?)"));
  }
};

void parse_ips(const reader& r, std::size_t at, discovery& d) {
  r.check_signature(at, ip_discovery_signature, "IP discovery table");
  d.table_version = r.u16(at + 4, "ip_discovery_header.version");
  const std::uint16_t dies = r.u16(at + 12, "ip_discovery_header.num_dies");
  if (dies > max_dies)
    throw usage_error(str(r.where, ": discovery lists ", dies, " dies at byte ", at + 12, "; at most 16 fit"));
  // ip_v4 with base_addr_64_bit: the flag byte after die_info[16] (byte 78 of the header).
  const bool wide = d.table_version >= 4 && (r.u8(at + 78, "ip_discovery_header.base_addr_64_bit") & 1);
  for (std::size_t die = 0; die < dies; ++die) {
    std::size_t ip_at = r.u16(at + 14 + 4 * die + 2, "die_info.die_offset");
    const std::uint16_t count = r.u16(ip_at + 2, "die_header.num_ips");
    ip_at += 4;
    for (std::uint16_t i = 0; i < count; ++i) {
      ip_block b;
      b.hw_id = r.u16(ip_at, "ip.hw_id");
      b.instance = r.u8(ip_at + 2, "ip.instance_number");
      const std::uint8_t nbases = r.u8(ip_at + 3, "ip.num_base_address");
      b.version = {r.u8(ip_at + 4, "ip.major"), r.u8(ip_at + 5, "ip.minor"), r.u8(ip_at + 6, "ip.revision")};
      // Versions 1 and 2 keep a harvest nibble in byte 7; later ones a sub-revision there.
      if (d.table_version < 3) b.harvested = (r.u8(ip_at + 7, "ip.harvest") & 0xF) != 0;
      ip_at += 8;
      for (std::uint8_t k = 0; k < nbases; ++k) {
        // 64-bit bases carry flags above bit 30 (Linux masks them with 0x3FFFFFFF).
        b.bases.push_back(wide ? r.u64(ip_at, "ip.base_address_64") & 0x3FFFFFFF : r.u32(ip_at, "ip.base_address"));
        ip_at += wide ? 8 : 4;
      }
      d.ips.push_back(std::move(b));
    }
  }
}

void parse_harvest(const reader& r, std::size_t at, discovery& d) {
  r.check_signature(at, harvest_signature, "harvest table");
  for (std::size_t i = 0; i < 32; ++i) {
    const std::size_t e = at + 8 + 4 * i;
    const std::uint16_t hw = r.u16(e, "harvest_info.hw_id");
    if (hw == 0) break;
    const std::uint8_t inst = r.u8(e + 2, "harvest_info.number_instance");
    for (ip_block& b : d.ips)
      if (b.hw_id == hw && b.instance == inst) b.harvested = true;
  }
}

gc_info parse_gc(const reader& r, std::size_t at) {
  if (std::uint32_t id = r.u32(at, "gpu_info_header.table_id"); id != gc_table_id)
    throw usage_error(str(r.where, ": bad GC info table id at byte ", at, ": ", hex{id}, ", expected ",
                          hex{gc_table_id}));
  gc_info g;
  g.version_major = r.u16(at + 4, "gc_info.version_major");
  g.version_minor = r.u16(at + 6, "gc_info.version_minor");
  auto field = [&](std::size_t index, std::string_view name) { return r.u32(at + 12 + 4 * index, name); };
  g.num_se = field(0, "gc_num_se");
  if (g.version_major >= 2) {
    g.cu_per_sh = field(1, "gc_num_cu_per_sh");
    g.sh_per_se = field(2, "gc_num_sh_per_se");
  } else {  // v1: CUs are 2 per WGP (llvm/docs/AMDGPUUsage.rst); gc_num_sa_per_se is field 16
    g.cu_per_sh = 2 * (field(1, "gc_num_wgp0_per_sa") + field(2, "gc_num_wgp1_per_sa"));
    g.sh_per_se = field(16, "gc_num_sa_per_se");
  }
  g.wave_size = field(11, "gc_wave_size");
  g.max_waves_per_simd = field(12, "gc_max_waves_per_simd");
  g.max_scratch_slots_per_cu = field(13, "gc_max_scratch_slots_per_cu");
  g.lds_size_kb = field(14, "gc_lds_size");
  return g;
}

}  // namespace

std::string ip_version::file_tag() const { return str(int(major), '_', int(minor), '_', int(revision)); }
std::string ip_version::text() const { return str(int(major), '.', int(minor), '.', int(revision)); }

std::string_view hw_name(std::uint16_t hw) {
  switch (hw) {
    case hw_id::mp1: return "MP1";
    case hw_id::gc: return "GC";
    case hw_id::mmhub: return "MMHUB";
    case hw_id::athub: return "ATHUB";
    case hw_id::osssys: return "OSSSYS";
    case hw_id::hdp: return "HDP";
    case hw_id::sdma0: return "SDMA0";
    case hw_id::nbif: return "NBIF";
    case hw_id::mp0: return "MP0";
    default: return "";
  }
}

const ip_block* discovery::find(std::uint16_t hw, std::uint8_t instance) const {
  for (const ip_block& b : ips)
    if (b.hw_id == hw && b.instance == instance && !b.harvested) return &b;
  return nullptr;
}

const ip_block& discovery::require(std::uint16_t hw, std::uint8_t instance) const {
  if (const ip_block* b = find(hw, instance)) return *b;
  throw device_error(str(device, ": the IP discovery table lists no usable ", hw_name(hw), " (hw id ", hw,
                         ") instance ", int(instance), "; is this an AMD gfx11/gfx12 GPU?"));
}

std::string discovery::gfx_target() const {
  const ip_version v = version_of(hw_id::gc);
  // The compiler's processor is not always the GC version: amdkfd/kfd_device.c (kgd2kfd_probe)
  // gives GC 11.0.3 (Navi 32) gfx_target_version 110001 ("Compiler version is 11.0.1 while HW
  // version is 11.0.3") and GC 11.0.1 / 11.0.4 (Phoenix) 110003. Others are "gfx%d%x%x".
  if (v == ip_version{11, 0, 3}) return "gfx1101";
  if (v == ip_version{11, 0, 1} || v == ip_version{11, 0, 4}) return "gfx1103";
  return str("gfx", int(v.major), std::hex, int(v.minor), int(v.revision));
}

discovery parse_discovery(std::span<const std::byte> table, std::string_view where) {
  const reader r{table, where};
  discovery d;
  d.device = std::string(where);
  r.check_signature(0, binary_signature, "binary");
  d.binary_version_major = r.u16(4, "binary_header.version_major");
  d.binary_version_minor = r.u16(6, "binary_header.version_minor");
  const std::uint16_t size = r.u16(10, "binary_header.binary_size");
  if (size < checksum_start)
    throw usage_error(str(where, ": discovery binary_size ", size, " at byte 10 is smaller than its header"));
  r.check_sum(checksum_start, size - checksum_start, r.u16(8, "binary_header.binary_checksum"), "binary");
  auto entry = [&](std::size_t t) { return table_list_at + 8 * t; };
  if (std::size_t at = r.u16(entry(ip_table), "table_list[IP_DISCOVERY].offset")) {
    r.check_sum(at, r.u16(at + 6, "ip_discovery_header.size"), r.u16(entry(ip_table) + 2, "checksum"),
                "IP discovery table");
    parse_ips(r, at, d);
  }
  if (std::size_t at = r.u16(entry(harvest_table), "table_list[HARVEST_INFO].offset")) {
    r.check_sum(at, harvest_table_bytes, r.u16(entry(harvest_table) + 2, "checksum"), "harvest table");
    parse_harvest(r, at, d);
  }
  if (std::size_t at = r.u16(entry(gc_table), "table_list[GC].offset")) {
    r.check_sum(at, r.u32(at + 8, "gpu_info_header.size"), r.u16(entry(gc_table) + 2, "checksum"), "GC info table");
    d.gc = parse_gc(r, at);
  }
  return d;
}

discovery read_discovery(transport::device_transport& t) {
  mmio regs(t);
  const std::uint64_t vram = std::uint64_t{regs.read(nbio_reg::config_memsize)} << 20;
  if (vram < discovery_offset_from_end)
    throw device_error(str(t.name(), ": RCC_CONFIG_MEMSIZE (register ", hex{nbio_reg::config_memsize},
                           ") reads ", vram >> 20, " MiB; the GPU is not answering (link down, or in reset?)"));
  std::vector<std::byte> bytes(discovery_max_bytes);
  read_vram(t, vram - discovery_offset_from_end, bytes);
  discovery d = parse_discovery(bytes, str(t.name(), " (VRAM ", hex{vram - discovery_offset_from_end}, ")"));
  d.device = t.name();
  d.vram_bytes = vram;
  d.bar0 = t.bar_info(0);
  d.bar2 = t.bar_info(2);
  d.bar5 = t.bar_info(5);
  d.large_bar = d.bar0.size >= vram;
  return d;
}

}  // namespace tg::amd
