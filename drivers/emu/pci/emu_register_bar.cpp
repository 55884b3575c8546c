// emu_register_bar.cpp: BAR2 and BAR5 accesses routed to the emulated GPU (see emu_register_bar.hpp).
#include "drivers/emu/pci/emu_register_bar.hpp"

#include <cstring>

#include "runtime/transport/pci/mapped_bar.hpp"

namespace tg::emu {

using transport::pci::check_bar_access;

std::uint32_t emu_register_bar::read32(std::uint64_t offset) {
  check_bar_access(what_, size_, offset, 4, 4, "read32");
  if (kind_ == kind::mmio) return gpu_.mmio_read32(offset);
  return std::uint32_t(gpu_.read_doorbell64(offset & ~7ull) >> (offset & 4 ? 32 : 0));
}

void emu_register_bar::write32(std::uint64_t offset, std::uint32_t value) {
  check_bar_access(what_, size_, offset, 4, 4, "write32");
  if (kind_ == kind::mmio) return gpu_.mmio_write32(offset, value);
  // The gpu models doorbells as 64-bit slots; a dword store updates its half of the slot (the
  // read-modify-write is not atomic against the GPU, which never writes doorbells).
  const std::uint64_t slot = offset & ~7ull, old = gpu_.read_doorbell64(slot);
  const unsigned shift = offset & 4 ? 32 : 0;
  gpu_.write_doorbell64(slot, (old & ~(0xFFFF'FFFFull << shift)) | std::uint64_t(value) << shift);
}

void emu_register_bar::write64(std::uint64_t offset, std::uint64_t value) {
  check_bar_access(what_, size_, offset, 8, 8, "write64");
  if (kind_ == kind::doorbell) return gpu_.write_doorbell64(offset, value);
  gpu_.mmio_write32(offset, std::uint32_t(value));  // a 64-bit register store lands low dword first
  gpu_.mmio_write32(offset + 4, std::uint32_t(value >> 32));
}

void emu_register_bar::read(std::uint64_t offset, std::span<std::byte> out) {
  check_bar_access(what_, size_, offset, out.size(), 4, "read");
  for (std::size_t i = 0; i < out.size(); i += 4) {
    const std::uint32_t v = read32(offset + i);
    std::memcpy(out.data() + i, &v, 4);
  }
}

void emu_register_bar::write(std::uint64_t offset, std::span<const std::byte> in) {
  check_bar_access(what_, size_, offset, in.size(), 4, "write");
  for (std::size_t i = 0; i < in.size(); i += 4) {
    std::uint32_t v;
    std::memcpy(&v, in.data() + i, 4);
    write32(offset + i, v);
  }
}

}  // namespace tg::emu
