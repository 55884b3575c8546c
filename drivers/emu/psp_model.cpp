// psp_model.cpp: the PSP mailbox, KM ring and command execution (see psp_model.hpp).
#include "drivers/emu/psp_model.hpp"

#include "drivers/emu/rlc_autoload.hpp"

namespace tg::emu {

namespace {

// Linux 6.12 amdgpu_psp.h enum psp_bootloader_cmd and psp_gfx_if.h.
constexpr std::uint32_t bl_load_sosdrv = 0x20000;
constexpr std::uint32_t bootloader_ready = 0x80000000u;  // C2PMSG_35 bit 31
constexpr std::uint32_t sos_ready = 0x80000000u;         // C2PMSG_64 bit 31, status 0 in 15:0
constexpr std::uint32_t ring_type_km = 2;                // C2PMSG_64 = type << 16 creates the ring
constexpr std::uint32_t ctrl_destroy_rings = 0x30000;    // GFX_CTRL_CMD_ID_DESTROY_RINGS
constexpr std::uint32_t ctrl_cmd_mask = 0x7FFF0000;
constexpr std::uint32_t cmd_load_ip_fw = 0x6, cmd_load_toc = 0x20, cmd_autoload_rlc = 0x21;
// struct psp_gfx_rb_frame (64 bytes) and struct psp_gfx_cmd_resp (1024 bytes) offsets.
constexpr std::uint32_t frame_dwords = 16;
constexpr std::uint64_t frame_cmd_lo = 0, frame_cmd_hi = 4, frame_fence_lo = 12, frame_fence_hi = 16,
                        frame_fence_value = 20;
constexpr std::uint64_t cmd_bytes = 1024, cmd_id_at = 8, cmd_union_at = 28, load_ip_fw_type_at = cmd_union_at + 12,
                        resp_status_at = 864, resp_tmr_size_at = 864 + 16;
constexpr std::uint32_t cmd_setup_tmr = 0x5;
// psp_gfx_if.h struct psp_gfx_cmd_setup_tmr, from the command union: buf_phy_addr_lo/hi, buf_size,
// tmr_flags (bit 1 virt_phy_addr), system_phy_addr_lo/hi.
constexpr std::uint64_t tmr_size_at = cmd_union_at + 8, tmr_flags_at = cmd_union_at + 12,
                        tmr_system_lo_at = cmd_union_at + 16, tmr_system_hi_at = cmd_union_at + 20;
constexpr std::uint32_t tmr_virt_phy_addr = 1u << 1;
// What the PSP answers a command whose parameters it refuses: TEE_ERROR_BAD_PARAMETERS of the
// GlobalPlatform TEE API, whose codes psp_gfx_if.h's enum tee_error_code follows.
constexpr std::uint32_t tee_error_bad_parameters = 0xFFFF0006u;
constexpr std::uint32_t toc_tmr_size = 0x1300000;  // what the TOC asks for: AM's 19 MiB TMR (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)

}  // namespace

void psp_model::install() {
  register_file& regs = core_.regs;
  const mp_registers& r = core_.chip.mp_reg;
  reset();
  regs.set_behaviour(r.psp_35, {.on_read = [this](std::uint32_t) { return faults.bootloader_silent ? 0 : bootloader_ready; },
                                .on_write = [this](std::uint32_t v) { on_bootloader(v); }});
  regs.set_behaviour(r.psp_81, {.read_only = true});
  regs.set_behaviour(r.psp_64, {.on_write = [this](std::uint32_t v) { on_ring_control(v); }});
  regs.set_behaviour(r.psp_67, {.on_write = [this](std::uint32_t v) { on_wptr(v); }});
}

void psp_model::reset() {
  const mp_registers& r = core_.chip.mp_reg;
  status_ = {};
  loaded_.clear();
  for (std::uint32_t i : {r.psp_35, r.psp_36, r.psp_64, r.psp_67, r.psp_69, r.psp_70, r.psp_71, r.psp_81})
    core_.regs.poke(i, 0);
}

void psp_model::on_bootloader(std::uint32_t command) {
  psp_command c{psp_command::channel::bootloader, command};
  if (faults.bootloader_silent) {
    c.problem = "the bootloader is silent (fault injection)";
  } else if (status_.sos_alive) {
    c.problem = "the sOS is already running; the bootloader takes no commands";
  } else if (command == bl_load_sosdrv) {
    status_.sos_alive = true;
    core_.regs.poke(core_.chip.mp_reg.psp_81, 1);
    core_.regs.poke(core_.chip.mp_reg.psp_64, sos_ready);
  }
  log_.push_back(std::move(c));
}

void psp_model::on_ring_control(std::uint32_t command) {
  const mp_registers& r = core_.chip.mp_reg;
  if (!status_.sos_alive) return;  // nobody answers: bit 31 stays as written
  const std::uint32_t id = command & ctrl_cmd_mask;
  if (id == ring_type_km << 16) {
    status_.ring_mc = std::uint64_t{core_.regs.peek(r.psp_70)} << 32 | core_.regs.peek(r.psp_69);
    status_.ring_bytes = core_.regs.peek(r.psp_71);
    status_.wptr = 0;
    core_.regs.poke(r.psp_67, 0);
  } else if (id == ctrl_destroy_rings) {
    status_.ring_mc.reset();
    status_.ring_bytes = 0;
    core_.regs.poke(r.psp_71, 0);  // no ring left over for the next session to destroy
  }
  core_.regs.poke(r.psp_64, sos_ready);
}

void psp_model::on_wptr(std::uint32_t wptr) {
  const std::uint32_t old = status_.wptr;
  status_.wptr = wptr;
  if (!status_.ring_mc || status_.ring_bytes < frame_dwords * 4) {
    log_.push_back({psp_command::channel::ring, 0, 0, "C2PMSG_67 written while no KM ring exists"});
    return;
  }
  // Pointers count dwords; a driver may wrap them at the ring size (Linux) or let them grow (AM).
  const std::uint32_t ring_dwords = status_.ring_bytes / 4;
  const std::uint32_t delta = (wptr % ring_dwords + ring_dwords - old % ring_dwords) % ring_dwords;
  for (std::uint32_t done = 0; done + frame_dwords <= delta; done += frame_dwords)
    run_frame((old + done) % ring_dwords);
}

void psp_model::run_frame(std::uint32_t at_dwords) {
  const std::optional<gpu_pa> frame = core_.mc_to_vram(*status_.ring_mc + std::uint64_t{at_dwords} * 4, 64);
  if (!frame) {
    log_.push_back({psp_command::channel::ring, 0, 0,
                    str("the KM ring at MC ", hex{*status_.ring_mc}, " is not in VRAM")});
    return;
  }
  auto word = [&](std::uint64_t offset) { return core_.memory.load32(*frame + offset); };
  const std::uint64_t cmd_mc = std::uint64_t{word(frame_cmd_hi)} << 32 | word(frame_cmd_lo);
  const std::uint64_t fence_mc = std::uint64_t{word(frame_fence_hi)} << 32 | word(frame_fence_lo);
  log_.push_back(execute(cmd_mc, word(frame_fence_value), fence_mc));
}

// MP0 13.0.x takes the TMR by its MC address and its VRAM physical address: Linux
// (amdgpu_psp.c: psp_prep_tmr_cmd_buf) sets virt_phy_addr and system_phy_addr = amdgpu_gmc_vram_pa,
// as tinygrad's AM_PSP._tmr_load_cmd does. The model refuses one without them.
std::string psp_model::check_setup_tmr(gpu_pa cmd) const {
  if (core_.chip.mp0.major != 13) return {};
  const std::uint64_t mc = std::uint64_t{core_.memory.load32(cmd + cmd_union_at + 4)} << 32 |
                           core_.memory.load32(cmd + cmd_union_at);
  const std::uint32_t size = core_.memory.load32(cmd + tmr_size_at), flags = core_.memory.load32(cmd + tmr_flags_at);
  const std::uint64_t pa = std::uint64_t{core_.memory.load32(cmd + tmr_system_hi_at)} << 32 |
                           core_.memory.load32(cmd + tmr_system_lo_at);
  const std::optional<gpu_pa> at = core_.mc_to_vram(mc, size);
  if (size == 0 || !at) return str("SETUP_TMR of ", size, " bytes at MC ", hex{mc}, " is not a range of VRAM");
  if ((flags & tmr_virt_phy_addr) == 0)
    return str("SETUP_TMR without virt_phy_addr (tmr_flags ", hex{flags}, "); MP0 ", int(core_.chip.mp0.major), ".",
               int(core_.chip.mp0.minor), ".", int(core_.chip.mp0.revision), " needs the TMR's physical address");
  if (pa != at->value)
    return str("SETUP_TMR system_phy_addr ", hex{pa}, " is not the TMR's VRAM address ", hex{at->value});
  return {};
}

// The command is taken (status 0) either way; the RLC only reports BOOTLOAD_COMPLETE once every
// part it needs was loaded (rlc_autoload.hpp), so a driver that skipped one times out waiting.
void psp_model::autoload(psp_command& c) {
  c.problem = autoload_problem(core_.chip.gen, loaded_);
  if (!c.problem.empty()) return;
  const std::uint32_t at = core_.chip.gc_reg.rlc_bootload_status;
  core_.regs.poke(at, core_.chip.field.bootload_complete.set(core_.regs.peek(at), 1));
}

psp_command psp_model::execute(std::uint64_t cmd_mc, std::uint32_t fence_value, std::uint64_t fence_mc) {
  psp_command c{psp_command::channel::ring};
  const std::optional<gpu_pa> cmd = core_.mc_to_vram(cmd_mc, cmd_bytes);
  const std::optional<gpu_pa> fence = core_.mc_to_vram(fence_mc, 4);
  if (!cmd || !fence) {
    c.problem = str("the frame names a command buffer (MC ", hex{cmd_mc}, ") or fence (MC ",
                    hex{fence_mc}, ") outside VRAM");
    return c;
  }
  c.id = core_.memory.load32(*cmd + cmd_id_at);
  if (c.id == cmd_load_ip_fw) c.fw_type = core_.memory.load32(*cmd + load_ip_fw_type_at);
  if (faults.ring_silent) {
    c.problem = "the ring is silent (fault injection)";
    return c;
  }
  std::uint32_t status = faults.command_status;
  if (c.id == cmd_setup_tmr && status == 0) {
    c.problem = check_setup_tmr(*cmd);
    if (!c.problem.empty()) status = tee_error_bad_parameters;
  }
  if (status == 0 && c.id == cmd_load_ip_fw) loaded_.push_back(c.fw_type);
  if (status == 0 && c.id == cmd_autoload_rlc) autoload(c);
  core_.memory.store32(*cmd + resp_status_at, status);
  if (c.id == cmd_load_toc) core_.memory.store32(*cmd + resp_tmr_size_at, toc_tmr_size);
  if (faults.command_status != 0)
    c.problem = str("failed with status ", hex{faults.command_status}, " (fault injection)");
  else if (!c.problem.empty()) c.problem += str(" (status ", hex{status}, ")");
  core_.memory.store32(*fence, fence_value);  // last: the driver reads the response after the fence
  ++status_.fences;
  return c;
}

}  // namespace tg::emu
