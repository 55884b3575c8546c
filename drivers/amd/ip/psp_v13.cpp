// psp_v13.cpp: PSP bootloader, KM ring and commands (see psp_v13.hpp).
#include "drivers/amd/ip/psp_v13.hpp"

#include <cstring>
#include <thread>
#include <vector>

#include <tg/core/error.hpp>

namespace tg::amd {

namespace {

constexpr std::uint64_t ring_bytes = 64 << 10;        // tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c
constexpr std::uint32_t cmd_bytes = 1024;             // struct psp_gfx_cmd_resp
constexpr std::size_t cmd_id_at = 8, cmd_union_at = 28, resp_status_at = 864, resp_tmr_size_at = 880;
constexpr std::uint32_t km_ring_type = 2, destroy_rings = 0x30000;  // GFX_CTRL_CMD_ID_DESTROY_RINGS
constexpr std::uint32_t cmd_setup_tmr = 5, cmd_load_ip_fw = 6, cmd_load_toc = 0x20, cmd_autoload_rlc = 0x21;
constexpr std::uint32_t bootloader_ready = 0x80000000u;
const auto handshake_sleep = std::chrono::milliseconds(20);  // tinygrad/runtime/support/am/amdev.py

// psp_bootloader_cmd ids (amdgpu_psp.h) of each component, in the order they load.
struct bl_step {
  psp_component_type type;
  std::uint32_t command;
  const char* name;
};

bool boot_time_tmr(ip_version mp0) {  // tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c: these MP0s set the TMR up themselves
  return (mp0.major == 13 && mp0.minor == 0 && (mp0.revision == 6 || mp0.revision == 14)) ||
         (mp0.major == 14 && mp0.minor == 0 && (mp0.revision == 2 || mp0.revision == 3));
}

}  // namespace

psp_v13::psp_v13(am_context& c, psp_msg1_buffer msg1) : c_(c), msg1_(std::move(msg1)) {
  cmd_ = c_.boot_alloc(4096);
  fence_ = c_.boot_alloc(4096);
  ring_ = c_.boot_alloc(ring_bytes);
}

void psp_v13::wait_bootloader(const char* step) {
  c_.io.poll(c_.mp0_base + mp0_c2pmsg(35), bootloader_ready, bootloader_ready, c_.opt.timeout,
             str("PSP bootloader ready (", step, ")"), "C2PMSG_35");
}

void psp_v13::bootload(const firmware_set& fw) {
  const bool spl = c_.disc.version_of(hw_id::mp0).major >= 14;
  const bl_step steps[] = {
      {psp_component_type::kdb, 0x80000, "key database"},
      {spl ? psp_component_type::spl : psp_component_type::kdb, 0x10000000, "TOS SPL table"},
      {psp_component_type::sys_drv, 0x10000, "sys driver"},
      {psp_component_type::soc_drv, 0xB0000, "soc driver"},
      {psp_component_type::intf_drv, 0xD0000, "intf driver"},
      {psp_component_type::dbg_drv, 0xC0000, "dbg driver"},
      {psp_component_type::ras_drv, 0xE0000, "ras driver"},
      {psp_component_type::sos, 0x20000, "sOS"},
  };
  for (const bl_step& s : steps) {
    const psp_component* comp = fw.find(s.type);
    if (!comp) continue;
    c_.progress(str("psp: load ", s.name));
    wait_bootloader(s.name);
    std::vector<std::byte> padded(comp->bytes);
    padded.resize((padded.size() + 15) / 16 * 16);
    if (padded.size() > msg1_.size)
      throw usage_error(str(c_.name(), ": PSP ", s.name, " is ", padded.size(), " bytes; the msg1 buffer holds ",
                            msg1_.size));
    msg1_.fill(padded);
    c_.set_mp0(36, std::uint32_t(msg1_.address >> 20));
    c_.set_mp0(35, s.command);
    if (s.type != psp_component_type::sos) wait_bootloader(s.name);
  }
  if (!wait_until([&] { return is_sos_alive(); }, c_.opt.timeout))
    throw device_error(str(c_.name(), ": PSP sOS not alive after ", c_.opt.timeout.count(),
                           " ms (C2PMSG_81 = 0x00000000)"));
}

void psp_v13::create_ring() {
  if (c_.mp0(71) != 0) {  // a ring from an earlier session
    c_.set_mp0(64, destroy_rings);
    std::this_thread::sleep_for(handshake_sleep);
  }
  c_.io.poll(c_.mp0_base + mp0_c2pmsg(64), 0x80000000u, 0x80000000u, c_.opt.timeout, "PSP ready for a ring",
             "C2PMSG_64");
  const std::uint64_t mc = c_.mc(ring_);
  c_.set_mp0(69, std::uint32_t(mc));
  c_.set_mp0(70, std::uint32_t(mc >> 32));
  c_.set_mp0(71, std::uint32_t(ring_bytes));
  c_.set_mp0(64, km_ring_type << 16);
  std::this_thread::sleep_for(handshake_sleep);
  c_.io.poll(c_.mp0_base + mp0_c2pmsg(64), 0x8000FFFFu, 0x80000000u, c_.opt.timeout, "PSP KM ring creation",
             "C2PMSG_64");
}

std::uint32_t psp_v13::submit(std::uint32_t cmd_id, std::span<const std::uint32_t> args, const char* what) {
  std::vector<std::byte> cmd(cmd_bytes);
  std::memcpy(cmd.data(), &cmd_bytes, 4);
  std::memcpy(cmd.data() + cmd_id_at, &cmd_id, 4);
  std::memcpy(cmd.data() + cmd_union_at, args.data(), args.size_bytes());
  c_.write_vram(cmd_, cmd);
  // The 64-byte frame at the write pointer (dwords), then the pointer moves by one frame.
  const std::uint32_t wptr = c_.mp0(67), value = ++fence_value_;
  const std::uint64_t cmd_mc = c_.mc(cmd_), fence_mc = c_.mc(fence_);
  std::uint32_t frame[16] = {std::uint32_t(cmd_mc), std::uint32_t(cmd_mc >> 32), cmd_bytes, std::uint32_t(fence_mc),
                             std::uint32_t(fence_mc >> 32), value};
  c_.write_vram(ring_ + (wptr * 4ull) % ring_bytes, std::as_bytes(std::span(frame)));
  c_.io.flush_hdp();
  c_.set_mp0(67, wptr + 16);
  std::uint32_t seen = 0;
  if (!wait_until([&] {
        c_.read_vram(fence_, std::as_writable_bytes(std::span(&seen, 1)));
        return seen == value;
      }, c_.opt.timeout))
    throw device_error(str(c_.name(), ": PSP command ", what, " (id ", hex{cmd_id}, ") not done after ",
                           c_.opt.timeout.count(), " ms (fence ", seen, ", waiting for ", value, ")"));
  std::uint32_t resp[5] = {};
  c_.read_vram(cmd_ + resp_status_at, std::as_writable_bytes(std::span(resp)));
  if (resp[0] != 0)
    throw device_error(str(c_.name(), ": PSP command failed: ", what, " (id ", hex{cmd_id}, ") status ",
                           hex{resp[0]}));
  return resp[(resp_tmr_size_at - resp_status_at) / 4];
}

std::uint32_t psp_v13::load_toc(std::span<const std::byte> toc) {
  msg1_.fill(toc);
  const std::uint32_t args[] = {std::uint32_t(msg1_.address), std::uint32_t(msg1_.address >> 32),
                                std::uint32_t(toc.size())};
  return submit(cmd_load_toc, args, "LOAD_TOC");
}

// psp_gfx_cmd_setup_tmr as amdgpu_psp.c: psp_prep_tmr_cmd_buf fills it: the MC address, the size,
// tmr_flags.virt_phy_addr (bit 1) and the TMR's VRAM physical address (amdgpu_gmc_vram_pa), which
// MP0 13.0.x needs (tinygrad's AM_PSP._tmr_load_cmd sends the same).
void psp_v13::setup_tmr(std::uint64_t tmr_mc, std::uint64_t bytes, std::uint64_t tmr_pa) {
  constexpr std::uint32_t virt_phy_addr = 1u << 1;
  const std::uint32_t args[] = {std::uint32_t(tmr_mc), std::uint32_t(tmr_mc >> 32), std::uint32_t(bytes),
                                virt_phy_addr,        std::uint32_t(tmr_pa), std::uint32_t(tmr_pa >> 32)};
  submit(cmd_setup_tmr, args, "SETUP_TMR");
}

void psp_v13::load_ip_fw(const ip_firmware& f) {
  if (f.bytes.size() > msg1_.size)
    throw usage_error(str(c_.name(), ": ", f.what, " is ", f.bytes.size(), " bytes; the msg1 buffer holds ", msg1_.size));
  msg1_.fill(f.bytes);
  const std::uint32_t args[] = {std::uint32_t(msg1_.address), std::uint32_t(msg1_.address >> 32),
                                std::uint32_t(f.bytes.size()), f.fw_type};
  submit(cmd_load_ip_fw, args, f.what.c_str());
}

void psp_v13::autoload_rlc() { submit(cmd_autoload_rlc, {}, "AUTOLOAD_RLC"); }

void psp_v13::hw_init(const firmware_set& fw) {
  if (!is_sos_alive()) bootload(fw);
  c_.progress("psp: ring");
  create_ring();
  std::uint32_t tmr_bytes = 0x1300000;  // 19 MiB unless the TOC says otherwise (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)
  if (const psp_component* toc = fw.find(psp_component_type::toc)) {
    c_.progress("psp: load toc");
    if (std::uint32_t s = load_toc(toc->bytes); s != 0 && s <= tmr_bytes) tmr_bytes = s;
  }
  c_.progress("psp: load smu firmware");
  load_ip_fw(fw.ip.front());  // the SMU image comes first (am_firmware.hpp)
  if (!boot_time_tmr(c_.disc.version_of(hw_id::mp0))) {
    const memory::gpu_pa tmr = c_.boot.allocate((tmr_bytes + 0xFFFFF) / 0x100000 * 0x100000, 1 << 20);
    setup_tmr(c_.mc(tmr), tmr_bytes, tmr.value);  // a single GPU: no xGMI offset on the physical address
  }
  for (std::size_t i = 1; i < fw.ip.size(); ++i) {
    c_.progress(str("psp: load ", fw.ip[i].what));
    load_ip_fw(fw.ip[i]);
  }
  c_.progress("psp: autoload rlc");
  autoload_rlc();
}

}  // namespace tg::amd
