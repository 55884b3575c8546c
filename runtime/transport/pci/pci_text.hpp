// pci_text.hpp: reading the text sysfs gives for a PCI device: hex numbers ("0x1002\n") and the
// `resource` table (one "start end flags" line per BAR, as tinygrad/runtime/support/system.py:
// PCIDevice.bar_info reads it); messages print numbers with tg::hex.
//
//   std::optional<std::uint64_t> vendor = parse_hex(os.read_text(bus, "vendor"));  // 0x1002
//   std::vector<bar_region> bars = parse_resource(os.read_text(bus, "resource"));
//   throw device_error(str("pci: at ", hex{address}));
//
// Pure functions; thread-safe.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>
#include <vector>

#include <tg/core/hex.hpp>

#include "runtime/transport/transport.hpp"

namespace tg::transport::pci {

// A hex number with or without "0x", surrounded by optional whitespace; nullopt otherwise.
std::optional<std::uint64_t> parse_hex(std::string_view text);

// Linux resource flags (include/linux/ioport.h, 6.12: IORESOURCE_PREFETCH, IORESOURCE_MEM_64).
constexpr std::uint64_t ioresource_prefetch = 0x0000'2000;
constexpr std::uint64_t ioresource_mem_64 = 0x0010'0000;

// One entry per line of `resource`; an all-zero line is an unimplemented BAR (size 0). Lines that
// do not parse as three hex numbers give nullopt.
std::optional<std::vector<bar_region>> parse_resource(std::string_view text);

}  // namespace tg::transport::pci
