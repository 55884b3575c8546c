// discovery_bytes.hpp: hand-built IP discovery tables for the parser tests, laid out from Linux
// include/discovery.h field by field (binary_header, ip_discovery_header, die_header, ip_v4,
// harvest_table, gc_info_v2_1), with the byte-sum checksums amdgpu_discovery.c verifies.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tg::test {

struct fake_ip {
  std::uint16_t hw_id;
  std::uint8_t instance, major, minor, revision;
  std::vector<std::uint64_t> bases;
};

struct discovery_bytes {
  std::vector<std::byte> b = std::vector<std::byte>(4096);
  void put(std::size_t at, std::uint64_t v, std::size_t n) { std::memcpy(b.data() + at, &v, n); }
  std::uint16_t sum(std::size_t at, std::size_t n) const {
    std::uint16_t s = 0;
    for (std::size_t i = at; i < at + n; ++i) s = std::uint16_t(s + std::to_integer<std::uint8_t>(b[i]));
    return s;
  }
};

// Binary header at 0, IP table at 0x100 (one die at 0x150), harvest at 0x800, GC info at 0x900.
inline std::vector<std::byte> build_discovery(const std::vector<fake_ip>& ips, bool wide_bases,
                                              std::vector<std::pair<std::uint16_t, std::uint8_t>> harvest = {}) {
  discovery_bytes d;
  const std::size_t ip_at = 0x100, die_at = 0x150, harvest_at = 0x800, gc_at = 0x900;
  // ip_discovery_header: signature "IPDS", version 4, size, id, num_dies 1, die_info[0], flags.
  d.put(ip_at, 0x53445049, 4);
  d.put(ip_at + 4, 4, 2);
  d.put(ip_at + 12, 1, 2);
  d.put(ip_at + 14, 0, 2);
  d.put(ip_at + 16, die_at, 2);
  d.put(ip_at + 78, wide_bases ? 1 : 0, 1);
  d.put(die_at + 2, ips.size(), 2);
  std::size_t at = die_at + 4;
  for (const fake_ip& ip : ips) {
    d.put(at, ip.hw_id, 2);
    d.put(at + 2, ip.instance, 1);
    d.put(at + 3, ip.bases.size(), 1);
    d.put(at + 4, ip.major, 1);
    d.put(at + 5, ip.minor, 1);
    d.put(at + 6, ip.revision, 1);
    at += 8;
    for (std::uint64_t base : ip.bases) {
      d.put(at, base, wide_bases ? 8 : 4);
      at += wide_bases ? 8 : 4;
    }
  }
  const std::size_t ip_size = at - ip_at;
  d.put(ip_at + 6, ip_size, 2);
  // harvest_table: "HARV" signature, version, then {hw_id, instance, reserved} entries.
  d.put(harvest_at, 0x56524148, 4);
  for (std::size_t i = 0; i < harvest.size(); ++i) {
    d.put(harvest_at + 8 + 4 * i, harvest[i].first, 2);
    d.put(harvest_at + 8 + 4 * i + 2, harvest[i].second, 1);
  }
  // gc_info_v2_1: id "GC", 2.1, size 96; 2 SE, 8 CU/SH, 2 SH/SE, wave 32, 16 waves, 32 slots, LDS 64.
  d.put(gc_at, 0x4347, 4);
  d.put(gc_at + 4, 2, 2);
  d.put(gc_at + 6, 1, 2);
  d.put(gc_at + 8, 96, 4);
  const std::uint32_t gc_fields[] = {2, 8, 2, 4, 16, 1024, 0, 0, 0, 0, 0, 32, 16, 32, 64};
  for (std::size_t i = 0; i < std::size(gc_fields); ++i) d.put(gc_at + 12 + 4 * i, gc_fields[i], 4);
  // binary_header: signature, version 1.0, checksum, size, table_list.
  const std::size_t binary_size = 0x1000;
  d.put(0, 0x28211407, 4);
  d.put(4, 1, 2);
  d.put(12 + 0 * 8, ip_at, 2);
  d.put(12 + 0 * 8 + 2, d.sum(ip_at, ip_size), 2);
  d.put(12 + 1 * 8, gc_at, 2);
  d.put(12 + 1 * 8 + 2, d.sum(gc_at, 96), 2);
  d.put(12 + 2 * 8, harvest_at, 2);
  d.put(12 + 2 * 8 + 2, d.sum(harvest_at, 136), 2);
  d.put(10, binary_size, 2);
  d.put(8, d.sum(10, binary_size - 10), 2);
  return d.b;
}

// The navi-family bases (navi10_ip_offset.h) the emulator uses.
inline std::vector<fake_ip> gfx11_ips() {
  return {{11, 0, 11, 0, 0, {0x1260, 0xA000}},         {1, 0, 13, 0, 0, {0x16000}},   {255, 0, 13, 0, 0, {0x16000}},
          {42, 0, 6, 0, 0, {0x1260, 0xA000}},          {34, 0, 3, 0, 0, {0x1A000}},   {40, 0, 6, 0, 0, {0x10A0}},
          {41, 0, 6, 0, 0, {0xF20}},                   {108, 0, 4, 3, 0, {0x0, 0x14, 0xD20, 0x10400, 0x241B000}}};
}

}  // namespace tg::test
