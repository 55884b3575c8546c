// smu_model.hpp: the emulated SMU (MP1 power-management firmware) behind its mailboxes (tinygrad's mock GPU (test/mockgpu/amd),
// tinygrad/runtime/support/am/amdev.py: AMDev).
//
// Main mailbox: the driver writes 0 to the response register (C2PMSG_90), the argument to 82 and
// the message id to 66; the SMU answers at once with the result in 82 and PPSMC_Result_OK (1) in
// 90 (0xFF failed, 0xFE unknown message). Debug mailbox: argument 53, message 75, response 54.
// Both response registers read 1 at power-on (the firmware's last answer), so a driver that
// checks the mailbox is idle before its first message proceeds. On MP1 14.0.2 the same mailbox
// also answers at segment 1 (personality mp_registers::smu_alias_delta).
//
// Messages (SMU 13.0.0 / 14.0.2 ppsmc.h ids): GetSmuVersion, EnableAllSmuFeatures,
// SetDriverDramAddrHigh/Low, GetDpmFreqByIndex (arg clock << 16 | 0xFF gives the level count,
// | i the MHz of level i), SetSoftMin/MaxByFreq (clock << 16 | MHz), SetPptLimit, and the mode-1
// reset (Mode1Reset 0x2F on SMU 13.0.0; debug message 2 on both). Other known ids answer OK.
// A reset is only requested here (reset_requested()); the gpu carries it out once the register
// write returns, because it rebuilds the register file this model's behaviours live in.
//
// Fault injection: a silent SMU never writes a response.
//
// Not thread-safe: the gpu calls it under its lock.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "drivers/emu/gpu_core.hpp"

namespace tg::emu {

struct smu_message {
  bool debug = false;  // through the debug mailbox
  std::uint32_t id = 0, argument = 0;
  std::uint32_t response = 0;  // what the response register got (0: none, the SMU was silent)
  std::uint32_t result = 0;    // what the argument register got back
};

struct smu_status {
  bool features_enabled = false;
  std::uint64_t driver_dram_address = 0;  // SetDriverDramAddrHigh << 32 | Low
  std::array<std::uint32_t, 4> soft_min_mhz{}, soft_max_mhz{};  // by clock id (GFXCLK, SOCCLK, UCLK, FCLK)
  std::uint32_t ppt_limit = 0;  // SetPptLimit's argument
};

class smu_model {
 public:
  explicit smu_model(gpu_core& core) : core_(core) {}

  void install();  // behaviours on the mailbox registers, power-on values
  void reset();    // power-on values (log kept)

  // The DPM table the SMU reports: MHz by level for each clock id (fine for GetDpmFreqByIndex).
  static std::vector<std::uint32_t> dpm_levels(std::uint32_t clock);

  smu_status status() const { return status_; }
  const std::vector<smu_message>& log() const { return log_; }
  bool reset_requested() const { return reset_requested_; }
  void clear_reset_request() { reset_requested_ = false; }
  bool silent = false;  // fault injection

 private:
  void on_message(bool debug);
  smu_message handle(std::uint32_t id, std::uint32_t argument);
  smu_message handle_debug(std::uint32_t id, std::uint32_t argument);

  gpu_core& core_;
  smu_status status_;
  std::vector<smu_message> log_;
  bool reset_requested_ = false;
};

}  // namespace tg::emu
