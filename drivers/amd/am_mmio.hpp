// am_mmio.hpp: register and early VRAM access of the AM driver over a device_transport.
//
// Registers are dword indices into BAR5; an index beyond the BAR goes through the RSMU window
// (BIF_BX_PF0_RSMU_INDEX / _DATA, tinygrad/runtime/support/am/ip.py; gfx_v11_0.c). Named registers come from the generated tables
// (drivers/amd/regs): index = discovery base of the register's segment + offset (the IP offset headers in drivers/gpu/drm/amd/include/asic_reg).
// VRAM before the memory manager exists (the discovery table) goes through BAR0 when it covers
// the range, else through MM_INDEX / MM_DATA one dword at a time (Linux Documentation/PCI/sysfs-pci.rst).
//
//   tg::amd::mmio io(transport);
//   tg::amd::ip_registers gc(io, tg::amd::regs::gc_11_0_0::table, discovery.require(hw_id::gc).bases);
//   gc.write_fields("regGRBM_GFX_CNTL", {{"MEID", 1}});
//   gc.poll("regCP_HQD_ACTIVE", "ACTIVE", 0, timeout, "HQD dequeue");
//
// Every poll has a timeout and a device_error naming the device, what it waited for, the
// register and the last value read. Not thread-safe.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/memory/address.hpp"
#include "runtime/queue/reg_table.hpp"
#include "runtime/transport/transport.hpp"

namespace tg::amd {

// NBIO / NBIF registers at fixed indices, the same on NBIO 4.3.0 and NBIF 6.3.1 (the IP offset headers in drivers/gpu/drm/amd/include/asic_reg; the
// emulator's personality.hpp uses the same numbers).
namespace nbio_reg {
inline constexpr std::uint32_t mm_index = 0x0, mm_data = 0x1, mm_index_hi = 0x6, rsmu_index = 0x14,
                               rsmu_data = 0x15, config_memsize = 0xDE3, doorbell_aper_en = 0xDE0,
                               doorbell_int_cntl = 0xE1E, hdp_flush_req = 0xE26, hdp_flush_done = 0xE27,
                               remap_hdp_mem_flush_cntl = 0xE4D;
}  // namespace nbio_reg

class mmio {
 public:
  explicit mmio(transport::device_transport& t);
  transport::device_transport& transport() { return t_; }
  const std::string& device() const { return name_; }

  std::uint32_t read(std::uint64_t index);
  void write(std::uint64_t index, std::uint32_t value);
  // Reads `index` until (value & mask) == expected; returns the value. device_error after `timeout`.
  std::uint32_t poll(std::uint64_t index, std::uint32_t mask, std::uint32_t expected, std::chrono::milliseconds timeout,
                     std::string_view what, std::string_view reg_name = {});
  // HDP flush: write 0 to the register BIF_BX0_REMAP_HDP_MEM_FLUSH_CNTL points at (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c).
  void flush_hdp();

 private:
  transport::device_transport& t_;
  std::string name_;
  std::uint64_t bar_dwords_;
  std::uint32_t hdp_flush_index_ = 0;
};

// Waits until `done()` or `timeout`; sleeps a little between tries. false on timeout.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout);

// The registers of one IP instance by their table names.
class ip_registers {
 public:
  ip_registers(mmio& io, const queue::reg_table& table, std::vector<std::uint64_t> bases);
  const queue::reg_table& table() const { return *table_; }
  std::uint64_t index(std::string_view name) const;
  const queue::reg_field& field(std::string_view reg, std::string_view field) const;

  std::uint32_t read(std::string_view name) { return io_->read(index(name)); }
  void write(std::string_view name, std::uint32_t value) { io_->write(index(name), value); }
  void write_fields(std::string_view name, std::initializer_list<queue::field_value> fields) {
    write(name, table_->encode(name, fields));
  }
  // Read-modify-write of the named fields only.
  void update(std::string_view name, std::initializer_list<queue::field_value> fields);
  void write64(std::string_view lo, std::string_view hi, std::uint64_t value) {
    write(lo, std::uint32_t(value));
    write(hi, std::uint32_t(value >> 32));
  }
  std::uint32_t poll(std::string_view reg, std::string_view field, std::uint32_t expected,
                     std::chrono::milliseconds timeout, std::string_view what);

 private:
  mmio* io_;
  const queue::reg_table* table_;
  std::vector<std::uint64_t> bases_;
};

// VRAM access that needs no memory manager: BAR0 when it covers [offset, offset + size), else the
// MM_INDEX / MM_DATA window. Offsets and sizes are multiples of 4.
void read_vram(transport::device_transport& t, std::uint64_t offset, std::span<std::byte> out);

}  // namespace tg::amd
