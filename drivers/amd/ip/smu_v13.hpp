// smu_v13.hpp: the SMU (MP1 13.x / 14.x) message mailbox: alive probe, mode-1 reset, driver table,
// EnableAllSmuFeatures (tinygrad/runtime/support/am/amdev.py: AMDev and "SMU mailbox"; message ids agree on SMU 13.0.0 and
// 14.0.2: Linux pm/swsmu/inc/pmfw_if/smu_v13_0_0_ppsmc.h, smu_v14_0_2_ppsmc.h).
//
//   tg::amd::smu_v13 smu(ctx);
//   if (smu.is_alive()) smu.mode1_reset();
//   smu.send(tg::amd::smu_msg::enable_all_features, 0);
//
// Every message waits for its response with the context's timeout and names the message in the
// device_error ("SMU msg 0x6 (EnableAllSmuFeatures) timeout", as seed 000 reported 0x1a).
#pragma once
#include <cstdint>

#include "drivers/amd/am_context.hpp"

namespace tg::amd {

namespace smu_msg {
inline constexpr std::uint32_t get_smu_version = 0x2, enable_all_features = 0x6, set_driver_dram_addr_high = 0xE,
                               set_driver_dram_addr_low = 0xF, mode1_reset = 0x2F;
}  // namespace smu_msg

class smu_v13 {
 public:
  explicit smu_v13(am_context& c) : c_(c) {}
  // Sends `msg` with `arg`; returns C2PMSG_82 (the result). device_error on timeout or a
  // response other than 1 (OK).
  std::uint32_t send(std::uint32_t msg, std::uint32_t arg, std::chrono::milliseconds timeout);
  std::uint32_t send(std::uint32_t msg, std::uint32_t arg) { return send(msg, arg, c_.opt.timeout); }
  // GetSmuVersion with a 100 ms timeout; alive when anything answered.
  bool is_alive();
  // Mode-1 reset of the whole GPU (tinygrad/runtime/support/am/amdev.py: AMDev); sleeps 500 ms afterwards.
  void mode1_reset();
  // SetDriverDramAddrHigh/Low of a 16 KiB boot table, then EnableAllSmuFeatures.
  void hw_init(std::uint64_t driver_table_mc);

 private:
  am_context& c_;
};

}  // namespace tg::amd
