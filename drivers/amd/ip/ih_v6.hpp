// ih_v6.hpp: the interrupt handler's ring 0 (OSSSYS 6 on gfx11, 7 on gfx12; tinygrad/runtime/support/am/ip.py; gfx_v11_0.c): set-up
// and draining. The driver drains it in the queues' wait hook to turn GPU page faults into
// errors that name the faulting address, long before a hang timeout.
//
// Pointers are treated as byte offsets in the OFFSET field (bits 17:2) of IH_RB_RPTR / WPTR, as
// Linux does (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c notes the reference wrote dword indices). Entries are 32 bytes.
//
//   tg::amd::ih_v6 ih(ctx);          // its ring and pointer page come from boot memory
//   ih.hw_init();
//   for (const tg::amd::ih_entry& e : ih.drain()) if (e.is_page_fault()) ...
//
// Not thread-safe.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "drivers/amd/am_context.hpp"

namespace tg::amd {

struct ih_entry {
  std::array<std::uint32_t, 8> dw{};
  std::uint32_t client_id() const { return dw[0] & 0xFF; }
  std::uint32_t source_id() const { return dw[0] >> 8 & 0xFF; }
  std::uint32_t vmid() const { return dw[0] >> 24 & 0xF; }
  // A GC hub (UTCL2) page fault: client SOC21_IH_CLIENTID_GFX (10), source 0 (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
  bool is_page_fault() const { return client_id() == 10 && source_id() == 0; }
  // VA bits 43:12 in DW4, 47:44 in DW5 bits 3:0 (gmc_v11_0_process_interrupt).
  std::uint64_t fault_address() const { return std::uint64_t{dw[4]} << 12 | std::uint64_t{dw[5] & 0xF} << 44; }
  bool is_write_fault() const { return dw[5] & 0x20; }
};

class ih_v6 {
 public:
  static constexpr std::uint64_t ring_bytes = 256 << 10;  // tinygrad/runtime/support/am/ip.py; gfx_v11_0.c

  explicit ih_v6(am_context& c);
  void hw_init();
  // Everything written since the last drain; moves IH_RB_RPTR and clears an overflow.
  std::vector<ih_entry> drain();
  std::uint64_t overflows() const { return overflows_; }

 private:
  am_context& c_;
  memory::gpu_pa ring_, pointers_;
  std::uint32_t rptr_ = 0;  // bytes
  std::uint64_t overflows_ = 0;
};

}  // namespace tg::amd
