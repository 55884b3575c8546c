// am_mmio.cpp: register access, polls and early VRAM reads (see am_mmio.hpp).
#include "drivers/amd/am_mmio.hpp"

#include <cstring>
#include <thread>

#include <tg/core/error.hpp>

namespace tg::amd {

mmio::mmio(transport::device_transport& t) : t_(t), name_(t.name()), bar_dwords_(t.bar(5).size() / 4) {}

std::uint32_t mmio::read(std::uint64_t index) {
  if (index < bar_dwords_) return t_.bar(5).read32(index * 4);
  t_.bar(5).write32(nbio_reg::rsmu_index * 4, std::uint32_t(index * 4));  // the window takes a byte address
  return t_.bar(5).read32(nbio_reg::rsmu_data * 4);
}

void mmio::write(std::uint64_t index, std::uint32_t value) {
  if (index < bar_dwords_) return t_.bar(5).write32(index * 4, value);
  t_.bar(5).write32(nbio_reg::rsmu_index * 4, std::uint32_t(index * 4));
  t_.bar(5).write32(nbio_reg::rsmu_data * 4, value);
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int tries = 0;; ++tries) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return done();
    // Spin briefly (registers usually answer within microseconds), then back off.
    if (tries > 100) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::uint32_t mmio::poll(std::uint64_t index, std::uint32_t mask, std::uint32_t expected,
                         std::chrono::milliseconds timeout, std::string_view what, std::string_view reg_name) {
  std::uint32_t last = 0;
  if (wait_until([&] { return ((last = read(index)) & mask) == expected; }, timeout)) return last;
  throw device_error(str(name_, ": ", what, " not done after ", timeout.count(), " ms (",
                         reg_name.empty() ? std::string("register") : std::string(reg_name), " ",
                         hex{index}, " = ", hex{last}, ", waiting for bits ", hex{mask},
                         " = ", hex{expected}, ")"));
}

void mmio::flush_hdp() {
  if (hdp_flush_index_ == 0) hdp_flush_index_ = read(nbio_reg::remap_hdp_mem_flush_cntl) / 4;
  write(hdp_flush_index_, 0);
}

ip_registers::ip_registers(mmio& io, const queue::reg_table& table, std::vector<std::uint64_t> bases)
    : io_(&io), table_(&table), bases_(std::move(bases)) {}

std::uint64_t ip_registers::index(std::string_view name) const {
  const queue::reg_info& r = table_->reg(name);
  if (r.base_index >= bases_.size())
    throw device_error(str(io_->device(), ": ", table_->ip, " register ", name, " is in segment ", int(r.base_index),
                           " but discovery gave ", bases_.size(), " base addresses"));
  return bases_[r.base_index] + r.offset;
}

const queue::reg_field& ip_registers::field(std::string_view reg, std::string_view name) const {
  const queue::reg_info& r = table_->reg(reg);
  if (const queue::reg_field* f = table_->find_field(r, name)) return *f;
  throw usage_error(str(table_->ip, ": register ", reg, " has no field ", name));
}

void ip_registers::update(std::string_view name, std::initializer_list<queue::field_value> fields) {
  std::uint32_t v = read(name);
  for (const queue::field_value& f : fields) v = field(name, f.field).set(v, f.value);
  write(name, v);
}

std::uint32_t ip_registers::poll(std::string_view reg, std::string_view name, std::uint32_t expected,
                                 std::chrono::milliseconds timeout, std::string_view what) {
  const queue::reg_field& f = field(reg, name);
  return io_->poll(index(reg), f.mask, expected << f.shift, timeout, what, reg);
}

void read_vram(transport::device_transport& t, std::uint64_t offset, std::span<std::byte> out) {
  if (offset % 4 || out.size() % 4)
    throw usage_error(str(t.name(), ": VRAM read at ", hex{offset}, " of ", out.size(),
                          " bytes is not dword aligned"));
  transport::bar_window& bar0 = t.bar(0);
  if (offset + out.size() <= bar0.size()) return bar0.read(offset, out);
  // Small BAR: MM_INDEX_HI = address >> 31, MM_INDEX = low 31 bits | bit 31 (the VRAM aperture).
  transport::bar_window& regs = t.bar(5);
  for (std::size_t i = 0; i < out.size(); i += 4) {
    const std::uint64_t a = offset + i;
    regs.write32(nbio_reg::mm_index_hi * 4, std::uint32_t(a >> 31));
    regs.write32(nbio_reg::mm_index * 4, std::uint32_t(a & 0x7FFFFFFF) | 0x80000000u);
    const std::uint32_t v = regs.read32(nbio_reg::mm_data * 4);
    std::memcpy(out.data() + i, &v, 4);
  }
}

}  // namespace tg::amd
