// discovery_test.cpp: the IP discovery table the emulated GPU leaves at VRAM end - 64 KiB, read
// back with a minimal parser written here from Linux include/discovery.h (not the emulator's
// writer), as a driver would read it (tinygrad/runtime/support/am/amdev.py: AMDev._run_discovery).
#include <doctest/doctest.h>

#include <cstring>
#include <map>

#include "drivers/emu/gpu.hpp"
#include "tests/drivers/emu/emu_rig.hpp"

using namespace tg::emu;
using tg::emu::test::gfx11;
using tg::emu::test::gfx12;

namespace {

std::uint16_t u16(const std::vector<std::byte>& b, std::size_t at) {
  return std::uint16_t(std::to_integer<unsigned>(b.at(at)) | std::to_integer<unsigned>(b.at(at + 1)) << 8);
}
std::uint32_t u32(const std::vector<std::byte>& b, std::size_t at) { return u16(b, at) | std::uint32_t{u16(b, at + 2)} << 16; }

std::uint16_t byte_sum(const std::vector<std::byte>& b, std::size_t from, std::size_t n) {
  unsigned sum = 0;
  for (std::size_t i = from; i < from + n; ++i) sum += std::to_integer<unsigned>(b.at(i));
  return std::uint16_t(sum);
}

struct parsed_ip {
  unsigned major, minor, revision, instance;
  std::vector<std::uint32_t> bases;
};

struct parsed {
  std::map<unsigned, parsed_ip> ips;  // by hw id
  std::vector<std::uint32_t> gc;      // gc_info v2.1 fields after the header
  unsigned harvest_version = 0;
};

// binary_header: signature u32, version u16 x2, checksum u16 @8, size u16 @10, table_info[6] @12
// of {offset, checksum, size, padding}; tables IP_DISCOVERY 0, GC 1, HARVEST_INFO 2.
parsed parse(const std::vector<std::byte>& b) {
  parsed out;
  REQUIRE(u32(b, 0) == 0x28211407u);
  const std::size_t size = u16(b, 10);
  REQUIRE(size <= b.size());
  CHECK(byte_sum(b, 10, size - 10) == u16(b, 8));
  auto table = [&](unsigned t) { return std::array<std::size_t, 3>{u16(b, 12 + 8 * t), u16(b, 14 + 8 * t), u16(b, 16 + 8 * t)}; };

  const auto [ip_at, ip_sum, ip_size_listed] = table(0);
  REQUIRE(u32(b, ip_at) == 0x53445049u);
  CHECK(u16(b, ip_at + 4) == 4);  // version
  const std::size_t ip_size = u16(b, ip_at + 6);
  CHECK(ip_size == ip_size_listed);
  CHECK(byte_sum(b, ip_at, ip_size) == ip_sum);
  REQUIRE(u16(b, ip_at + 12) == 1);  // num_dies
  const std::size_t die = u16(b, ip_at + 16);  // die_info[0].die_offset
  CHECK((std::to_integer<unsigned>(b.at(ip_at + 78)) & 1) == 0);  // 32-bit bases
  const unsigned num_ips = u16(b, die + 2);
  std::size_t at = die + 4;
  for (unsigned i = 0; i < num_ips; ++i) {  // ip_v4: hw_id u16, instance, nbases, major, minor, rev, sub/variant
    parsed_ip ip{std::to_integer<unsigned>(b.at(at + 4)), std::to_integer<unsigned>(b.at(at + 5)),
                 std::to_integer<unsigned>(b.at(at + 6)), std::to_integer<unsigned>(b.at(at + 2)), {}};
    const unsigned nbases = std::to_integer<unsigned>(b.at(at + 3));
    for (unsigned k = 0; k < nbases; ++k) ip.bases.push_back(u32(b, at + 8 + 4 * k));
    out.ips[u16(b, at)] = ip;
    at += 8 + 4 * nbases;
  }
  CHECK(at == ip_at + ip_size);

  const auto [gc_at, gc_sum, gc_size_listed] = table(1);
  REQUIRE(u32(b, gc_at) == 0x4347u);
  CHECK(u16(b, gc_at + 4) == 2);
  CHECK(u16(b, gc_at + 6) == 1);
  const std::size_t gc_size = u32(b, gc_at + 8);
  CHECK(gc_size == gc_size_listed);
  CHECK(gc_size == 12 + 24 * 4);  // sizeof(struct gc_info_v2_1)
  CHECK(byte_sum(b, gc_at, gc_size) == gc_sum);
  for (std::size_t f = gc_at + 12; f < gc_at + gc_size; f += 4) out.gc.push_back(u32(b, f));

  const auto [hv_at, hv_sum, hv_size] = table(2);
  if (hv_at != 0) {
    REQUIRE(u32(b, hv_at) == 0x56524148u);
    out.harvest_version = u32(b, hv_at + 4);
    CHECK(byte_sum(b, hv_at, 8 + 32 * 4) == hv_sum);
    CHECK(u16(b, hv_at + 8) == 0);  // first entry's hw_id: nothing harvested
  }
  return out;
}

std::vector<std::byte> table_in_vram(gpu& g) {
  std::vector<std::byte> b(10 * 1024);  // what a driver reads (tinygrad's AMDev._run_discovery)
  g.vram().read({g.vram().size_bytes() - 64 * 1024}, b);
  return b;
}

}  // namespace

TEST_CASE_TEMPLATE("the discovery table parses back with the chip's IPs, versions and bases", G, gfx11, gfx12) {
  gpu g({.gen = G::gen, .vram_bytes = 64ull << 20});
  CHECK(g.discovery_table_offset().value == (64ull << 20) - 64 * 1024);
  const parsed p = parse(table_in_vram(g));
  const bool g12 = G::gen == gfx_gen::gfx12;

  // hw ids of Linux soc15_hw_ip.h; versions of tinygrad's mock (amgpu.py: IP_VERSIONS) and the task's gfx11 list.
  struct want {
    unsigned hw_id, major, minor, revision;
  };
  const std::vector<want> wants =
      g12 ? std::vector<want>{{11, 12, 0, 0}, {42, 7, 0, 0}, {34, 4, 1, 0}, {108, 6, 3, 1},
                              {255, 14, 0, 2}, {1, 14, 0, 2}, {41, 7, 0, 0}, {40, 7, 0, 0}}
          : std::vector<want>{{11, 11, 0, 0}, {42, 6, 0, 0}, {34, 3, 0, 0}, {108, 4, 3, 0},
                              {255, 13, 0, 0}, {1, 13, 0, 0}, {41, 6, 0, 0}, {40, 6, 0, 0}};
  REQUIRE(p.ips.size() == wants.size());
  for (const want& w : wants) {
    CAPTURE(w.hw_id);
    REQUIRE(p.ips.count(w.hw_id) == 1);
    const parsed_ip& ip = p.ips.at(w.hw_id);
    CHECK(ip.major == w.major);
    CHECK(ip.minor == w.minor);
    CHECK(ip.revision == w.revision);
    CHECK(ip.instance == 0);
  }
  // Bases of tinygrad's test/mockgpu/am/amgpu.py (IP_BASES), zero-padded to 10 entries.
  const auto& gc = p.ips.at(11).bases;
  REQUIRE(gc.size() == 10);
  CHECK(gc[0] == 0x1260u);
  CHECK(gc[1] == 0xA000u);
  CHECK(gc[3] == 0x2402C00u);
  CHECK(gc[4] == 0u);
  CHECK(p.ips.at(42).bases == gc);
  CHECK(p.ips.at(34).bases[0] == 0x1A000u);
  CHECK(p.ips.at(108).bases[2] == 0xD20u);
  CHECK(p.ips.at(255).bases[0] == 0x16000u);
  CHECK(p.ips.at(1).bases[1] == 0xDC0000u);
  CHECK(p.ips.at(41).bases[0] == 0xF20u);
  CHECK(p.ips.at(40).bases[0] == 0x10A0u);

  // The registers the emulator models sit at base[segment] + offset of the published bases.
  const personality& c = g.chip();
  CHECK(c.gc_reg.scratch_reg7 == gc[1] + 0x2047);        // regSCRATCH_REG7: offset 0x2047, segment 1
  CHECK(c.gc_reg.grbm_soft_reset == gc[0] + 0x0DA8);     // regGRBM_SOFT_RESET: offset 0xDA8, segment 0
  CHECK(c.ih_reg.rb_cntl == p.ips.at(40).bases[0] + 0x80);  // regIH_RB_CNTL: offset 0x80
  CHECK(c.mp_reg.psp_35 == p.ips.at(255).bases[0] + 0x63);  // C2PMSG_35
  CHECK(c.nbio_reg.config_memsize == p.ips.at(108).bases[2] + 0xC3);
  CHECK(g.read_register(0xDE3) == 64u);  // RCC_CONFIG_MEMSIZE in MiB

  // gc_info v2.1: SE, CU per SH, SH per SE, ... wave size (index 11), waves/SIMD, scratch slots, LDS.
  REQUIRE(p.gc.size() == 24);
  CHECK(p.gc[0] == (g12 ? 2u : 6u));
  CHECK(p.gc[1] == 8u);
  CHECK(p.gc[2] == 2u);
  CHECK(p.gc[11] == 32u);
  CHECK(p.gc[12] == 16u);
  CHECK(p.gc[13] == 32u);
  CHECK(p.gc[14] == 64u);
  CHECK(p.harvest_version == 1);
}

TEST_CASE("the discovery table comes back after a mode-1 reset") {
  gpu g({.gen = gfx_gen::gfx12, .vram_bytes = 32ull << 20});
  const std::vector<std::byte> before = table_in_vram(g);
  std::vector<std::byte> junk(10 * 1024, std::byte{0x5A});
  g.vram().write(g.discovery_table_offset(), junk);
  g.mode1_reset();
  const std::vector<std::byte> after = table_in_vram(g);
  const std::size_t size = u16(before, 10);
  CHECK(std::equal(after.begin(), after.begin() + size, before.begin()));
  parse(after);
  CHECK(g.mode1_resets() == 1);
}
