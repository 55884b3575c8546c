// bridge_requests.hpp: the ASM2464 custom firmware's USB vocabulary: endpoints, vendor requests,
// their timeouts and the names error messages use (tinygrad/runtime/support/usb.py: USB3,
// CustomASM24Controller).
//
//   dev.control_in(bridge_request::read_xdata, 0xB450, 0, one_byte, xdata_timeout);
//   request_name(0xF0)  // "PCIe TLP"
//
// Constants only; thread-safe.
#pragma once
#include <chrono>
#include <cstdint>

namespace tg::transport::usb {

// bmRequestType: vendor request to the device (OUT) / from the device (IN) (USB3.control_write /
// control_read), and the standard device-to-host request used for GET_DESCRIPTOR (USB 2.0 spec 9.4).
inline constexpr std::uint8_t request_type_vendor_out = 0x40;
inline constexpr std::uint8_t request_type_vendor_in = 0xC0;
inline constexpr std::uint8_t request_type_standard_in = 0x80;

// Custom-firmware endpoints (USB3.bulk_write / bulk_read).
inline constexpr std::uint8_t endpoint_bulk_out = 0x02;
inline constexpr std::uint8_t endpoint_bulk_in = 0x81;

namespace bridge_request {
inline constexpr std::uint8_t get_descriptor = 0x06;  // standard request
inline constexpr std::uint8_t read_xdata = 0xE4;      // wValue = XDATA address, IN up to 255 bytes
inline constexpr std::uint8_t write_xdata = 0xE5;     // wValue = address, wIndex = the one byte
inline constexpr std::uint8_t tlp = 0xF0;             // OUT: issue a TLP; IN: its completion
inline constexpr std::uint8_t sram = 0xF2;            // prepare an SRAM bulk write or armed read
inline constexpr std::uint8_t power = 0xF3;           // wValue 1: PCIe power on, 0: off
}  // namespace bridge_request

// What each request is, for messages: "control 0xF0 (PCIe TLP) ...".
constexpr const char* request_name(std::uint8_t request) {
  switch (request) {
    case bridge_request::get_descriptor: return "GET_DESCRIPTOR";
    case bridge_request::read_xdata: return "read XDATA";
    case bridge_request::write_xdata: return "write XDATA byte";
    case bridge_request::tlp: return "PCIe TLP";
    case bridge_request::sram: return "SRAM bulk setup";
    case bridge_request::power: return "PCIe power";
    default: return "unknown request";
  }
}

// Timeouts of the reference (the defaults in USB3 and CustomASM24Controller). Bulk data timeouts
// scale with size instead (tg's choice: see bulk_timeout in pcie_stream.hpp).
inline constexpr std::chrono::milliseconds descriptor_timeout{1000};
inline constexpr std::chrono::milliseconds xdata_timeout{1000};
inline constexpr std::chrono::milliseconds tlp_timeout{5000};
inline constexpr std::chrono::milliseconds sram_setup_timeout{1000};
inline constexpr std::chrono::milliseconds power_timeout{10000};
// SRAM bulk transfers, both ways (the reference: 10 s for 0xF2 reads and async copy-in writes).
inline constexpr std::chrono::milliseconds sram_bulk_timeout{10000};

// Bridge memory map (tinygrad/runtime/ops_amd.py: USBIface.__init__; the LTSSM byte:
// CustomASM24Controller.__init__).
inline constexpr std::uint16_t xdata_ltssm = 0xB450;      // PCIe LTSSM state byte
inline constexpr std::uint8_t ltssm_link_up = 0x78;       // L0
inline constexpr std::uint16_t xdata_sram = 0xF000;       // the SRAM window as XDATA sees it
inline constexpr std::uint64_t sram_bus_address = 0x200000;
inline constexpr std::uint64_t sram_bytes = 512 * 1024;
inline constexpr std::uint64_t sram_slot_bytes = 16 * 1024;  // 0xF2 start slots
inline constexpr std::uint64_t sram_sector_bytes = 512;      // 0xF2 transfer unit
inline constexpr std::uint64_t sram_release_bus_address = 0x822000 + 12;  // cq_buf + 12 (AMDAllocator._copyout)

}  // namespace tg::transport::usb
