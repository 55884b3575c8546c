// psp_v13.hpp: the PSP (MP0 13.x / 14.x): bootloader components, the KM ring, and the ring
// commands a boot needs (tinygrad/runtime/support/am/amdev.py: AMDev; Linux psp_gfx_if.h, amdgpu_psp.c for the layouts).
//
// Firmware goes through the "msg1" buffer: 1 MiB of boot VRAM on PCI, bridge memory mapped into
// the GPU VA on USB (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c); the caller provides it. Every handshake polls with
// the context's timeout and names the register and its last value on failure.
//
//   tg::amd::psp_v13 psp(ctx, msg1);
//   psp.hw_init(firmware);  // bootloader if sOS is down, ring, TOC, SMU fw, TMR, IP fw, RLC autoload
//
// Not thread-safe.
#pragma once
#include <cstdint>
#include <functional>
#include <span>

#include "drivers/amd/am_context.hpp"
#include "drivers/amd/am_firmware.hpp"

namespace tg::amd {

// Where firmware is staged for the PSP: its address as the PSP sees it (1 MiB aligned), its size,
// and how the host fills it.
struct psp_msg1_buffer {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::function<void(std::span<const std::byte>)> fill;
};

class psp_v13 {
 public:
  psp_v13(am_context& c, psp_msg1_buffer msg1);

  bool is_sos_alive() { return c_.mp0(81) != 0; }
  void hw_init(const firmware_set& fw);

  // Ring commands (GFX_CMD_ID_*). Return the response's tmr_size word (LOAD_TOC) or 0.
  std::uint32_t load_toc(std::span<const std::byte> toc);
  void setup_tmr(std::uint64_t tmr_mc, std::uint64_t bytes, std::uint64_t tmr_pa);
  void load_ip_fw(const ip_firmware& f);
  void autoload_rlc();

 private:
  void bootload(const firmware_set& fw);
  void create_ring();
  std::uint32_t submit(std::uint32_t cmd_id, std::span<const std::uint32_t> args, const char* what);
  void wait_bootloader(const char* step);

  am_context& c_;
  psp_msg1_buffer msg1_;
  memory::gpu_pa cmd_, fence_, ring_;
  std::uint32_t fence_value_ = 0;
};

}  // namespace tg::amd
