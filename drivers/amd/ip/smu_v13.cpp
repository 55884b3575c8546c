// smu_v13.cpp: the SMU mailbox (see smu_v13.hpp).
#include "drivers/amd/ip/smu_v13.hpp"

#include <thread>

#include <tg/core/error.hpp>

namespace tg::amd {

namespace {
// MP1 C2PMSG registers of the message mailbox and the debug mailbox (tinygrad/runtime/support/am/amdev.py: AMDev; Linux
// smu_v13_0_0_ppt.c: debug param 53, msg 75, resp 54).
constexpr unsigned msg_reg = 66, arg_reg = 82, resp_reg = 90, dbg_param = 53, dbg_resp = 54, dbg_msg = 75;
constexpr std::uint32_t debug_mode1_reset = 2;  // DEBUGSMC_MSG_Mode1Reset

const char* msg_name(std::uint32_t m) {
  switch (m) {
    case smu_msg::get_smu_version: return "GetSmuVersion";
    case smu_msg::enable_all_features: return "EnableAllSmuFeatures";
    case smu_msg::set_driver_dram_addr_high: return "SetDriverDramAddrHigh";
    case smu_msg::set_driver_dram_addr_low: return "SetDriverDramAddrLow";
    case smu_msg::mode1_reset: return "Mode1Reset";
    default: return "?";
  }
}
}  // namespace

std::uint32_t smu_v13::send(std::uint32_t msg, std::uint32_t arg, std::chrono::milliseconds timeout) {
  c_.set_mp1(resp_reg, 0);
  c_.set_mp1(arg_reg, arg);
  c_.set_mp1(msg_reg, msg);
  std::uint32_t resp = 0;
  if (!wait_until([&] { return (resp = c_.mp1(resp_reg)) != 0; }, timeout))
    throw device_error(str(c_.name(), ": SMU msg ", hex{msg}, " (", msg_name(msg), ") timeout after ",
                           timeout.count(), " ms (MP1 C2PMSG_90 = ", hex{resp}, ")"));
  if (resp != 1)
    throw device_error(str(c_.name(), ": SMU msg ", hex{msg}, " (", msg_name(msg), ", argument ",
                           hex{arg}, ") failed: response ", hex{resp}, " (1 is OK)"));
  return c_.mp1(arg_reg);
}

bool smu_v13::is_alive() {
  try {
    send(smu_msg::get_smu_version, 0, std::chrono::milliseconds(100));
  } catch (const device_error&) {
    return c_.mp1(resp_reg) != 0;
  }
  return true;
}

void smu_v13::mode1_reset() {
  const ip_version mp0 = c_.disc.version_of(hw_id::mp0);
  const bool debug = mp0.major >= 14 || (mp0.major == 13 && mp0.minor == 0 &&
                                         (mp0.revision == 0 || mp0.revision == 7 || mp0.revision == 10));
  if (debug) {
    c_.set_mp1(dbg_resp, 0);
    c_.set_mp1(dbg_param, 0);
    c_.set_mp1(dbg_msg, debug_mode1_reset);
  } else {
    c_.set_mp1(resp_reg, 0);
    c_.set_mp1(arg_reg, 0);
    c_.set_mp1(msg_reg, smu_msg::mode1_reset);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // settle (tinygrad/runtime/support/am/amdev.py)
}

void smu_v13::hw_init(std::uint64_t driver_table_mc) {
  send(smu_msg::set_driver_dram_addr_high, std::uint32_t(driver_table_mc >> 32));
  send(smu_msg::set_driver_dram_addr_low, std::uint32_t(driver_table_mc));
  send(smu_msg::enable_all_features, 0);
}

}  // namespace tg::amd
