// am_firmware.cpp: reading firmware files and splitting them by their headers (see am_firmware.hpp).
#include "drivers/amd/am_firmware.hpp"

#include <cstring>
#include <fstream>

#include <zstd.h>

#include <tg/core/error.hpp>
#include <tg/log.hpp>

namespace tg::amd {

namespace {

constexpr std::size_t common_header_bytes = 32;

std::vector<std::byte> read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw device_error(str("firmware: cannot open ", p.string()));
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(raw.size());
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

std::vector<std::byte> unzstd(const std::vector<std::byte>& in, const std::filesystem::path& p) {
  const unsigned long long size = ZSTD_getFrameContentSize(in.data(), in.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > (256ull << 20))
    throw usage_error(str("firmware ", p.string(), ": not a zstd frame with a known content size"));
  std::vector<std::byte> out(size);
  const std::size_t got = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
  if (ZSTD_isError(got) || got != size)
    throw usage_error(str("firmware ", p.string(), ": zstd decompression failed (",
                          ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short output", ")"));
  return out;
}

// Little-endian u32 at `at`, or a usage_error naming file, field and offset.
std::uint32_t u32(std::span<const std::byte> b, std::size_t at, const std::string& what, const char* field) {
  if (at + 4 > b.size())
    throw usage_error(str("firmware ", what, ": header field ", field, " at byte ", at, " lies beyond the ",
                          b.size(), "-byte file"));
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

// [offset, offset + size) of the file, checked.
std::vector<std::byte> payload(std::span<const std::byte> b, std::uint64_t offset, std::uint64_t size,
                               const std::string& what, const char* field, std::size_t field_at) {
  if (offset > b.size() || size > b.size() - offset)
    throw usage_error(str("firmware ", what, ": ", field, " (header byte ", field_at, ") points at [", offset, ", ",
                          offset + size, ") beyond the ", b.size(), "-byte file"));
  return {b.begin() + std::ptrdiff_t(offset), b.begin() + std::ptrdiff_t(offset + size)};
}

}  // namespace

firmware_header parse_firmware_header(std::span<const std::byte> b, const std::string& what) {
  if (b.size() < common_header_bytes)
    throw usage_error(str("firmware ", what, ": ", b.size(), " bytes, shorter than the 32-byte common header"));
  firmware_header h;
  h.size_bytes = u32(b, 0, what, "size_bytes");
  h.header_size_bytes = u32(b, 4, what, "header_size_bytes");
  const std::uint32_t v = u32(b, 8, what, "header_version"), ip = u32(b, 12, what, "ip_version");
  h.header_version_major = std::uint16_t(v), h.header_version_minor = std::uint16_t(v >> 16);
  h.ip_version_major = std::uint16_t(ip), h.ip_version_minor = std::uint16_t(ip >> 16);
  h.ucode_version = u32(b, 16, what, "ucode_version");
  h.ucode_size_bytes = u32(b, 20, what, "ucode_size_bytes");
  h.ucode_array_offset_bytes = u32(b, 24, what, "ucode_array_offset_bytes");
  h.crc32 = u32(b, 28, what, "crc32");
  if (h.size_bytes > b.size() || h.size_bytes < common_header_bytes)
    throw usage_error(str("firmware ", what, ": header field size_bytes at byte 0 is ", h.size_bytes,
                          " but the file has ", b.size(), " bytes (truncated or not an amdgpu firmware file)"));
  if (h.header_size_bytes < common_header_bytes || h.header_size_bytes > h.size_bytes)
    throw usage_error(str("firmware ", what, ": header field header_size_bytes at byte 4 is ", h.header_size_bytes,
                          "; it must lie in [32, size_bytes = ", h.size_bytes, "]"));
  if (h.header_version_major == 0 || h.header_version_major > 3)
    throw usage_error(str("firmware ", what, ": header field header_version_major at byte 8 is ",
                          h.header_version_major, "; known versions are 1..3"));
  payload(b, h.ucode_array_offset_bytes, 0, what, "ucode_array_offset_bytes", 24);
  return h;
}

firmware_file read_firmware_file(const std::filesystem::path& dir, const std::string& name) {
  const std::filesystem::path plain = dir / name, packed = dir / (name + ".zst");
  firmware_file f;
  if (std::filesystem::exists(plain)) {
    f.path = plain;
    f.bytes = read_all(plain);
  } else if (std::filesystem::exists(packed)) {
    f.path = packed;
    f.bytes = unzstd(read_all(packed), packed);
  } else {
    throw device_error(str("firmware: neither ", plain.string(), " nor ", packed.string(),
                           " exists; install Debian's firmware-amd-graphics (non-free-firmware) or point the "
                           "firmware_dir option at a folder that has it"));
  }
  f.header = parse_firmware_header(f.bytes, f.path.string());
  return f;
}

std::vector<psp_component> parse_psp_sos(const firmware_file& f) {
  const std::string what = f.path.string();
  const std::span<const std::byte> b = f.bytes;
  const std::uint64_t base = f.header.ucode_array_offset_bytes;
  std::vector<psp_component> out;
  if (f.header.header_version_major == 1) {
    // v1.0: SYS_DRV from the ucode array up to the SOS, whose {version, offset, size} is at byte 32.
    const std::uint32_t sos_off = u32(b, 36, what, "sos.offset_bytes"), sos_size = u32(b, 40, what, "sos.size_bytes");
    out.push_back({psp_component_type::sys_drv, 0, payload(b, base, sos_off, what, "sos.offset_bytes", 36)});
    out.push_back({psp_component_type::sos, u32(b, 32, what, "sos.fw_version"),
                   payload(b, base + sos_off, sos_size, what, "sos.size_bytes", 40)});
    return out;
  }
  // v2.0: a count at byte 32, then {fw_type, fw_version, offset_bytes, size_bytes} descriptors whose
  // offsets count from the ucode array.
  const std::uint32_t count = u32(b, 32, what, "psp_fw_bin_count");
  if (count > 64)
    throw usage_error(str("firmware ", what, ": header field psp_fw_bin_count at byte 32 is ", count,
                          " (corrupt; real files have a dozen at most)"));
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t at = 36 + 16 * std::size_t(i);
    const std::uint32_t type = u32(b, at, what, "psp_fw_bin.fw_type");
    if (type == 0 || type > std::uint32_t(psp_component_type::ipkeymgr_drv)) {
      // A component newer firmware carries that this driver does not load: Linux warns and goes on
      // (amdgpu_psp.c: parse_sos_bin_descriptor, "Unsupported PSP FW type").
      tg::log(log_level::warning, str("am: firmware ", what, ": psp_fw_bin[", i, "].fw_type ", type,
                                      " (header byte ", at, ") is not a component this driver loads; skipped"));
      continue;
    }
    out.push_back({psp_component_type(type), u32(b, at + 4, what, "psp_fw_bin.fw_version"),
                   payload(b, base + u32(b, at + 8, what, "psp_fw_bin.offset_bytes"),
                           u32(b, at + 12, what, "psp_fw_bin.size_bytes"), what, "psp_fw_bin.offset_bytes", at + 8)});
  }
  return out;
}

firmware_versions firmware_versions_of(const discovery& d) {
  return {d.version_of(hw_id::mp0), d.version_of(hw_id::mp1), d.version_of(hw_id::sdma0), d.version_of(hw_id::gc)};
}

const psp_component* firmware_set::find(psp_component_type t) const {
  for (const psp_component& c : psp)
    if (c.type == t) return &c;
  return nullptr;
}

}  // namespace tg::amd
