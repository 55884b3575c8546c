// smu_model.cpp: the SMU mailboxes and the messages a driver's boot sends (see smu_model.hpp).
#include "drivers/emu/smu_model.hpp"

namespace tg::emu {

namespace {

// PPSMC ids of Linux 6.12 smu_v13_0_0_ppsmc.h and smu_v14_0_2_ppsmc.h (equal for these).
constexpr std::uint32_t result_ok = 0x1, result_failed = 0xFF, result_unknown = 0xFE;
constexpr std::uint32_t msg_test = 0x1, msg_get_smu_version = 0x2, msg_enable_all_features = 0x6,
                        msg_dram_addr_high = 0xE, msg_dram_addr_low = 0xF, msg_soft_min = 0x19, msg_soft_max = 0x1A,
                        msg_get_dpm_freq = 0x1F, msg_mode1_reset = 0x2F, msg_set_ppt_limit = 0x32;
constexpr std::uint32_t message_count_13 = 0x52, message_count_14 = 0x59;  // PPSMC_Message_Count
// Debug mailbox: smu_v13_0_0_ppt.c / smu_v14_0_2_ppt.c DEBUGSMC_MSG_Mode1Reset.
constexpr std::uint32_t debug_test = 0x1, debug_mode1_reset = 0x2;
constexpr std::uint32_t dpm_count_query = 0xFF;

}  // namespace

std::vector<std::uint32_t> smu_model::dpm_levels(std::uint32_t clock) {
  switch (clock) {
    case 0: return {500, 1500, 2500};       // GFXCLK
    case 1: return {480, 960, 1200};        // SOCCLK
    case 2: return {96, 456, 772, 1249};    // UCLK
    case 3: return {400, 1000, 1600, 2000};  // FCLK
    default: return {};
  }
}

void smu_model::install() {
  register_file& regs = core_.regs;
  const mp_registers& r = core_.chip.mp_reg;
  reset();
  regs.set_behaviour(r.smu_msg, {.on_write = [this](std::uint32_t) { on_message(false); }});
  regs.set_behaviour(r.smu_debug_msg, {.on_write = [this](std::uint32_t) { on_message(true); }});
  if (r.smu_alias_delta == 0) return;
  for (std::uint32_t i : {r.smu_msg, r.smu_arg, r.smu_resp, r.smu_debug_msg, r.smu_debug_arg, r.smu_debug_resp})
    regs.set_behaviour(i + r.smu_alias_delta, {.on_read = [this, i](std::uint32_t) { return core_.regs.read(i); },
                                               .on_write = [this, i](std::uint32_t v) { core_.regs.write(i, v); }});
}

void smu_model::reset() {
  const mp_registers& r = core_.chip.mp_reg;
  status_ = {};
  reset_requested_ = false;
  for (std::uint32_t i : {r.smu_msg, r.smu_arg, r.smu_debug_msg, r.smu_debug_arg}) core_.regs.poke(i, 0);
  core_.regs.poke(r.smu_resp, result_ok);
  core_.regs.poke(r.smu_debug_resp, result_ok);
}

void smu_model::on_message(bool debug) {
  const mp_registers& r = core_.chip.mp_reg;
  const std::uint32_t arg_reg = debug ? r.smu_debug_arg : r.smu_arg;
  const std::uint32_t id = core_.regs.peek(debug ? r.smu_debug_msg : r.smu_msg), arg = core_.regs.peek(arg_reg);
  if (silent) {
    log_.push_back({debug, id, arg, 0, 0});
    return;
  }
  smu_message m = debug ? handle_debug(id, arg) : handle(id, arg);
  core_.regs.poke(arg_reg, m.result);
  core_.regs.poke(debug ? r.smu_debug_resp : r.smu_resp, m.response);
  log_.push_back(m);
}

smu_message smu_model::handle(std::uint32_t id, std::uint32_t arg) {
  const bool smu13 = core_.chip.mp1.major == 13;
  smu_message m{false, id, arg, result_ok, 0};
  const std::uint32_t clock = arg >> 16, value = arg & 0xFFFF;
  const std::vector<std::uint32_t> levels = dpm_levels(clock);
  switch (id) {
    case msg_test: m.result = arg + 1; break;
    case msg_get_smu_version: m.result = smu13 ? 0x004E5700 : 0x00680F00; break;  // 78.87.0 / 104.15.0
    case msg_enable_all_features: status_.features_enabled = true; break;
    case msg_dram_addr_high: status_.driver_dram_address = std::uint64_t{arg} << 32 | (status_.driver_dram_address & 0xFFFFFFFF); break;
    case msg_dram_addr_low: status_.driver_dram_address = (status_.driver_dram_address >> 32 << 32) | arg; break;
    case msg_get_dpm_freq:
      if (levels.empty() || (value != dpm_count_query && value >= levels.size())) m.response = result_failed;
      else m.result = value == dpm_count_query ? std::uint32_t(levels.size()) : levels[value];
      break;
    case msg_soft_min:
    case msg_soft_max:
      if (levels.empty()) m.response = result_failed;
      else (id == msg_soft_min ? status_.soft_min_mhz : status_.soft_max_mhz)[clock] = value;
      break;
    case msg_set_ppt_limit: status_.ppt_limit = arg; break;
    case msg_mode1_reset:
      if (smu13) reset_requested_ = true;
      else m.response = result_unknown;  // SMU 14.0.2 resets through the debug mailbox only
      break;
    default:
      if (id == 0 || id >= (smu13 ? message_count_13 : message_count_14)) m.response = result_unknown;
      break;
  }
  return m;
}

smu_message smu_model::handle_debug(std::uint32_t id, std::uint32_t arg) {
  smu_message m{true, id, arg, result_ok, 0};
  if (id == debug_mode1_reset) reset_requested_ = true;
  else if (id == debug_test) m.result = arg + 1;
  else m.response = result_unknown;
  return m;
}

}  // namespace tg::emu
