// sram.cpp: 0xF2 SRAM writes and armed reads (tinygrad/runtime/support/usb.py:
// CustomASM24Controller.scsi_write, scsi_read_arm, scsi_read).
//
//   sram_write(dev, 16 * 1024, bytes);
//
// Not thread-safe.
#include "runtime/transport/usb/sram.hpp"

#include <vector>

#include "runtime/transport/usb/bridge_requests.hpp"
#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

namespace tg::transport::usb {
namespace {

constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

void check_sram_range(const usb_device& dev, const char* what, std::uint64_t offset, std::uint64_t bytes) {
  if (offset % sram_slot_bytes != 0 || bytes == 0 || offset > sram_bytes || bytes > sram_bytes - offset)
    throw usage_error(str(dev.name(), ": SRAM ", what, " of ", bytes, " bytes at offset ", upper_hex(offset),
                          ": needs a start on a 16 KiB slot and 1..", sram_bytes, " bytes inside the SRAM"));
}

}  // namespace

sram_setup sram_setup_fields(std::uint64_t offset, std::uint64_t bytes, bool read) {
  std::uint64_t sectors = round_up(bytes, sram_sector_bytes) / sram_sector_bytes;
  std::uint64_t slots = round_up(bytes, sram_slot_bytes) / sram_slot_bytes;
  return {std::uint16_t(sectors | (read ? 0x8000u : 0u)), std::uint16_t(offset / sram_slot_bytes | slots << 8)};
}

void sram_write(usb_device& dev, std::uint64_t offset, std::span<const std::byte> in) {
  check_sram_range(dev, "write", offset, in.size());
  sram_setup s = sram_setup_fields(offset, in.size(), false);
  dev.control_out(bridge_request::sram, s.value, s.index, {}, sram_setup_timeout);
  std::uint64_t wire = round_up(in.size(), sram_sector_bytes);
  if (wire == in.size()) {
    dev.bulk_out(in, sram_bulk_timeout);
    return;
  }
  std::vector<std::byte> padded(wire);
  std::copy(in.begin(), in.end(), padded.begin());
  dev.bulk_out(padded, sram_bulk_timeout);
}

void sram_arm_read(usb_device& dev, std::uint64_t offset, std::uint64_t bytes) {
  check_sram_range(dev, "armed read", offset, bytes);
  sram_setup s = sram_setup_fields(offset, bytes, true);
  dev.control_out(bridge_request::sram, s.value, s.index, {}, sram_setup_timeout);
}

void sram_finish_read(usb_device& dev, std::span<std::byte> out) {
  std::vector<std::byte> wire(round_up(out.size(), sram_sector_bytes));
  dev.bulk_in(wire, sram_bulk_timeout);
  std::copy(wire.begin(), wire.begin() + std::ptrdiff_t(out.size()), out.begin());
}

}  // namespace tg::transport::usb
