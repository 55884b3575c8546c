// am_bringup_test.cpp: the bring-up steps a real card needs and the emulator enforces, each checked
// after a full boot (and a warm one, and one after a mode-1 reset) of emulated gfx11 and gfx12,
// over PCI and behind the USB bridge.
// Every TEST_CASE names the upstream function it follows; each fails against the emulator when the
// driver skips that step.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <tg/core/error.hpp>

#include "drivers/amd/am_device.hpp"
#include "drivers/amd/am_scratch.hpp"
#include "drivers/amd/ip/nbio_doorbell.hpp"
#include "drivers/amd/regs/gc_11_0_0.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"
#include "drivers/emu/rlc_autoload.hpp"
#include "runtime/queue/pm4.hpp"
#include "tests/drivers/amd/am_dispatch.hpp"

using namespace tg;
using namespace std::chrono_literals;

namespace {

struct gfx11_pci {
  static constexpr emu::gfx_gen gen = emu::gfx_gen::gfx11;
  static constexpr emu::emulated_bus bus = emu::emulated_bus::pci;
};
struct gfx12_usb {
  static constexpr emu::gfx_gen gen = emu::gfx_gen::gfx12;
  static constexpr emu::emulated_bus bus = emu::emulated_bus::usb;
};
struct gfx11_usb {
  static constexpr emu::gfx_gen gen = emu::gfx_gen::gfx11;
  static constexpr emu::emulated_bus bus = emu::emulated_bus::usb;
};
struct gfx12_pci {
  static constexpr emu::gfx_gen gen = emu::gfx_gen::gfx12;
  static constexpr emu::emulated_bus bus = emu::emulated_bus::pci;
};

using test::options_for;

// A RELEASE_MEM round trip on the compute queue: the CP saw the doorbell.
void check_compute_runs(amd::am_device& dev) {
  amd::allocation target = dev.allocate(4096);
  queue::cmd_buffer cb;
  queue::pm4::emit_release_mem(cb, {.gcr = queue::pm4::release_gcr_flush,
                                    .data = queue::pm4::data_sel::value32,
                                    .address = target.va,
                                    .value = 0xB007});
  dev.compute().submit(cb);
  dev.synchronize(5000ms);
  std::uint32_t seen = 0;
  dev.copy_out(std::as_writable_bytes(std::span(&seen, 1)), target, 0);
  CHECK(seen == 0xB007u);
  dev.release(target);
}

}  // namespace

TEST_CASE_TEMPLATE("the boot routes the CP and SDMA doorbells through the S2A entries as nbio_v4_3_gc_doorbell_init "
                   "and nbif_v6_3_1_sdma_doorbell_range do",
                   M, gfx11_pci, gfx12_usb, gfx11_usb, gfx12_pci) {
  emu::emulated_machine m({.gen = M::gen, .vram_bytes = 512ull << 20, .bus = M::bus});
  for (int session = 0; session < 2; ++session) {  // full, then warm
    std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
    amd::am_device dev(*t, options_for(m));
    CHECK(dev.info().warm_boot == (session == 1));
    const emu::nbio_registers& nb = m.device().chip().nbio_reg;
    CHECK(amd::nbio_s2a_entry(dev.context(), 0) == nb.s2a_entry[0]);
    CHECK(m.device().read_register(nb.s2a_entry[0]) == 0x30000007u);
    CHECK(m.device().read_register(nb.s2a_entry[3]) == 0x3000000Du);
    // Port 2: enable, AWID 0xE, offset 0x200 (the 0x800 doorbell in dwords), 20 dwords, AWADDR 3.
    CHECK(m.device().read_register(nb.s2a_entry[2]) == (1u | 0xEu << 1 | 0x200u << 7 | 20u << 17 | 3u << 28));
    check_compute_runs(dev);
    std::vector<std::byte> in(4096, std::byte{0x5A}), out(4096);
    amd::allocation a = dev.allocate(4096);
    dev.copy_in(a, 0, in);
    dev.copy_out(out, a, 0);
    CHECK(out == in);
    CHECK(m.device().stats().dropped_doorbells == 0);
  }
}

TEST_CASE("SETUP_TMR on MP0 13.0.0 carries virt_phy_addr and the TMR's VRAM address (amdgpu_psp.c: "
          "psp_prep_tmr_cmd_buf)") {
  emu::emulated_machine m({.gen = emu::gfx_gen::gfx11, .vram_bytes = 512ull << 20, .bus = emu::emulated_bus::pci});
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  bool saw_tmr = false;
  for (const emu::psp_command& c : m.device().psp_log()) {
    CHECK_MESSAGE(c.problem.empty(), c.problem);
    saw_tmr |= c.via == emu::psp_command::channel::ring && c.id == 5;
  }
  CHECK(saw_tmr);
}

TEST_CASE("a GC 12 boot points PFP and ME at their ucode start addresses with a pipe reset (gfx_v12_0.c: "
          "gfx_v12_0_config_gfx_rs64)") {
  emu::emulated_machine m({.gen = emu::gfx_gen::gfx12, .vram_bytes = 512ull << 20, .bus = emu::emulated_bus::usb});
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  const emu::gc_registers& r = m.device().chip().gc_reg;
  // The emulator's gc_12_0_0_pfp.bin / _me.bin give ucode_start_addr_lo 0x3000 / 0x3400 (bytes).
  CHECK(m.device().read_register(r.cp_pfp_start) == 0x3000u >> 2);
  CHECK(m.device().read_register(r.cp_me_start) == 0x3400u >> 2);
  CHECK(m.device().compute_queue().has_value());
  check_compute_runs(dev);
}

// amdgpu_rlc.c: amdgpu_gfx_rlc_init_microcode_v2_1 / _v2_2 / _v2_3: the restore lists, RLC_IRAM,
// RLC_DRAM_BOOT (and RLC_P, RLC_V on v2.3) go through the PSP before AUTOLOAD_RLC; the emulated RLC
// completes its autoload only then.
TEST_CASE_TEMPLATE("the full boot loads every RLC part before AUTOLOAD_RLC and the autoload completes", M, gfx11_pci,
                   gfx12_usb) {
  emu::emulated_machine m({.gen = M::gen, .vram_bytes = 512ull << 20, .bus = M::bus});
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  std::vector<std::uint32_t> loaded;
  for (const emu::psp_command& c : m.device().psp_log()) {
    CHECK_MESSAGE(c.problem.empty(), c.problem);
    if (c.via == emu::psp_command::channel::ring && c.id == 6) loaded.push_back(c.fw_type);
  }
  for (std::uint32_t part : emu::autoload_required(M::gen))
    CHECK_MESSAGE(std::find(loaded.begin(), loaded.end(), part) != loaded.end(), "fw type ", part, " never loaded");
  const emu::gc_registers& r = m.device().chip().gc_reg;
  CHECK(m.device().chip().field.bootload_complete.get(m.device().read_register(r.rlc_bootload_status)) == 1);
}

// tinygrad's AM_GFX.init_hw (gfx_v11_0.c: gfx_v11_0_rlc_enable_srm, gfx_v11_0_rlc_start, the
// TCP_CNTL golden bit): the GFX writes of a full boot.
TEST_CASE_TEMPLATE("a full boot makes the GFX init writes: TCP_CNTL, RLC_CNTL, RLC_SRM_CNTL, RLC_SPM_MC_CNTL", M,
                   gfx11_pci, gfx12_usb) {
  emu::emulated_machine m({.gen = M::gen, .vram_bytes = 512ull << 20, .bus = M::bus});
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  amd::ip_registers& gc = *dev.context().gc;
  CHECK((gc.read("regTCP_CNTL") & 0x20000000u) != 0);
  CHECK(gc.read("regRLC_CNTL") == 1);
  CHECK(gc.read("regRLC_SRM_CNTL") == gc.table().encode("regRLC_SRM_CNTL", {{"SRM_ENABLE", 1}, {"AUTO_INCR_ADDR", 1}}));
  CHECK(gc.read("regRLC_SPM_MC_CNTL") == 0xF);
}

TEST_CASE("the warm-boot marker is tg's own: a card tinygrad's AM left (SCRATCH_REG7 = 0xA0000008) boots fully") {
  emu::emulated_machine m({.gen = emu::gfx_gen::gfx11, .vram_bytes = 512ull << 20, .bus = emu::emulated_bus::pci});
  const std::uint32_t reg7 = m.device().chip().gc_reg.scratch_reg7;
  {
    std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
    amd::am_device dev(*t, options_for(m));
  }
  CHECK(m.device().read_register(reg7) == amd::am_boot_marker);
  CHECK(amd::am_boot_marker != 0xA0000008u);
  m.device().write_register(reg7, 0xA0000008u);  // tinygrad's AMDev.Version, SCRATCH_REG6 still 0
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  CHECK_FALSE(dev.info().warm_boot);
  check_compute_runs(dev);
}

// tinygrad's AMDDevice._ensure_has_local_memory (ops_amd.py), with its own worked example: an
// RX 7900 XTX (96 CUs, 32 scratch slots per CU, 6 SEs) at 128 bytes per lane.
TEST_CASE("scratch is sized per lane x 64 lanes x scratch slots x CUs, and TMPRING holds WAVES and WAVESIZE") {
  amd::gc_info navi31;
  navi31.num_se = 6, navi31.sh_per_se = 2, navi31.cu_per_sh = 8, navi31.max_scratch_slots_per_cu = 32;
  const amd::scratch_size s = amd::size_scratch(navi31, 128);
  CHECK(s.bytes == 24ull << 20);
  CHECK(s.wavesize == 32);
  CHECK(s.waves == 512);
  CHECK(s.tmpring(amd::regs::gc_11_0_0::table) == (512u | 32u << 12));
  CHECK(amd::size_scratch(navi31, 4).lane_bytes == 128);   // never below tinygrad's 128 bytes
  CHECK(amd::size_scratch(navi31, 130).lane_bytes == 132);  // dword-rounded
  CHECK(amd::size_scratch(navi31, 130).wavesize == 33);     // 64 x 132 / 256, rounded up
  amd::gc_info none;
  CHECK_THROWS_AS(amd::size_scratch(none, 128), usage_error);
}

TEST_CASE_TEMPLATE("a kernel with a private segment grows the device's scratch and its dispatch programs TMPRING "
                   "and the scratch base",
                   M, gfx11_pci, gfx12_usb) {
  emu::emulated_machine m({.gen = M::gen, .vram_bytes = 512ull << 20, .bus = M::bus});
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  CHECK(dev.tmpring_size() == 0);  // no kernel asked: no scratch waves
  const memory::gpu_va placeholder = dev.scratch();
  dev.ensure_scratch(300);
  const amd::scratch_size want = amd::size_scratch(*dev.context().disc.gc, 300);
  CHECK(dev.tmpring_size() == want.tmpring(dev.context().gc->table()));
  CHECK(dev.tmpring_size() != 0);
  CHECK(dev.scratch() != placeholder);
  CHECK(dev.scratch().value % 256 == 0);
  const memory::gpu_va grown = dev.scratch();
  dev.ensure_scratch(200);  // fits: nothing changes
  CHECK(dev.scratch() == grown);
  dev.ensure_scratch(1000);
  CHECK(dev.tmpring_size() == amd::size_scratch(*dev.context().disc.gc, 1000).tmpring(dev.context().gc->table()));

  // The dispatch carries them: COMPUTE_TMPRING_SIZE and COMPUTE_DISPATCH_SCRATCH_BASE as the CP saw them.
  const std::optional<test::am_kernel> k = test::load_kernel(dev, "scratch", "private_array");
  if (!k) return;
  amd::allocation out = dev.allocate(4096), args = dev.allocate(4096);
  const std::uint64_t kernargs[2] = {out.va.value, 5};
  dev.copy_in(args, 0, std::as_bytes(std::span(kernargs)));
  dev.compute().submit(test::one_group_dispatch(dev, *k, args));
  dev.synchronize(5000ms);
  amd::ip_registers& gc = *dev.context().gc;
  CHECK(m.device().read_register(std::uint32_t(gc.index("regCOMPUTE_TMPRING_SIZE"))) == dev.tmpring_size());
  CHECK(m.device().read_register(std::uint32_t(gc.index("regCOMPUTE_DISPATCH_SCRATCH_BASE_LO"))) ==
        std::uint32_t(dev.scratch().value >> 8));
}

// kernels/scratch.ll keeps a 512-byte private array indexed by a kernel argument in scratch:
// every lane writes its own copy through the scratch base and TMPRING_SIZE the driver programmed
// (the interpreter places each wave there, drivers/emu/shader/exec_memory.cpp), and reads one
// element back. A dispatch whose TMPRING gives fewer bytes per lane than the kernel touches ends
// in a scratch fault the emulator records, and the queue works again after recovery.
TEST_CASE_TEMPLATE("a kernel with a private segment runs in the scratch the AM driver programs; beyond it is a fault",
                   M, gfx11_pci, gfx12_usb) {
  emu::emulated_machine m({.gen = M::gen, .vram_bytes = 512ull << 20, .bus = M::bus});
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_options o = options_for(m);
  o.queue_timeout = 2000ms;
  amd::am_device dev(*t, o);
  const std::optional<test::am_kernel> k = test::load_kernel(dev, "scratch", "private_array");
  if (!k) return;
  const std::uint32_t private_bytes = k->co.kernel("private_array").descriptor.private_segment_fixed_size;
  REQUIRE(private_bytes >= 512);
  CHECK(dev.tmpring_size() ==
        amd::size_scratch(*dev.context().disc.gc, private_bytes).tmpring(dev.context().gc->table()));
  amd::allocation out = dev.allocate(4096), args = dev.allocate(4096);
  auto run = [&](std::uint32_t n) {
    const std::uint64_t kernargs[2] = {out.va.value, n};
    dev.copy_in(args, 0, std::as_bytes(std::span(kernargs)));
    dev.compute().submit(test::one_group_dispatch(dev, *k, args));
    dev.synchronize(5000ms);
    std::vector<std::uint32_t> seen(64);
    dev.copy_out(std::as_writable_bytes(std::span(seen)), out, 0);
    bool all = true;
    for (std::uint32_t tid = 0; tid < 64; ++tid) all &= seen[tid] == (n % 128) * tid;  // arr[i] = i * tid
    return all;
  };
  CHECK(run(300));
  CHECK(run(127));

  // The same kernel with TMPRING sized for tinygrad's smallest 128 bytes per lane: its fill loop
  // leaves the lane's slot at byte 128.
  namespace pm4 = queue::pm4;
  queue::cmd_buffer cb;
  pm4::emit_acquire_mem(cb, pm4::gcr_full_invalidate);
  pm4::emit_dispatch(cb, k->summary, {.gfx = dev.gfx(), .workgroups = {1, 1, 1}, .workgroup_size = {64, 1, 1},
                                      .kernargs = args.va, .scratch = dev.scratch(),
                                      .tmpring_size = amd::size_scratch(*dev.context().disc.gc, 128)
                                                          .tmpring(dev.context().gc->table())});
  dev.compute().submit(cb);
  CHECK_THROWS_AS(dev.synchronize(500ms), device_error);  // the queue halted at the fault
  const std::vector<emu::fault_record> faults = m.device().faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == emu::fault_kind::shader_error);
  CHECK(faults[0].message.find("scratch fault") != std::string::npos);
  CHECK(faults[0].message.find("at 0x80 outside the 128 bytes per lane") != std::string::npos);
  m.device().clear_faults();
  dev.recover_compute();
  CHECK(run(42));
}

// amdgpu_device_mode1_reset: the PCI state restored, then RCC_CONFIG_MEMSIZE polled until the card
// answers. The emulated card stays off the bus 700 ms after the reset (emulated_machine_config),
// longer than the SMU's 500 ms settle: a driver that touches MMIO earlier loses its writes.
TEST_CASE_TEMPLATE("a forced full boot waits for the card to come back from its mode-1 reset before touching MMIO", M,
                   gfx11_pci, gfx12_usb, gfx11_usb, gfx12_pci) {
  emu::emulated_machine m({.gen = M::gen, .vram_bytes = 512ull << 20, .bus = M::bus});
  REQUIRE(m.config().mode1_reset_latency.count() > 500);
  std::uint32_t command = 0;
  {
    std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
    amd::am_device dev(*t, options_for(m));
    command = t->config_read(4, 2);
  }
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_options o = options_for(m);
  o.force_full_boot = true;
  amd::am_device dev(*t, o);
  CHECK(m.device().mode1_resets() == 1);
  CHECK(m.device().stats().writes_lost_in_reset == 0);
  CHECK(t->config_read(4, 2) == command);  // bus mastering back with the restored header
  check_compute_runs(dev);
}

// The bridge firmware has never been seen to take GPU writes into the SRAM window the host streams
// into, nor a chunk split over separate slots: each chunk is one wire image (payload, then its
// sentinel) from slot 0 or 16, and SDMA writes only the fence in sys_buf.
TEST_CASE("USB copy-in sends each chunk as one contiguous image and the GPU never writes the SRAM data area") {
  emu::emulated_machine m({.gen = emu::gfx_gen::gfx12, .vram_bytes = 512ull << 20, .bus = emu::emulated_bus::usb});
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  amd::allocation a = dev.allocate(2 << 20);
  std::vector<std::byte> in(3 * ((256 << 10) - 4) + 1000);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i * 13 + 5);
  dev.copy_in(a, 0, std::span(in).first(4096));  // the first pipelined copy after boot also zeroes the sentinel slots
  const emu::usb::bridge_stats before = m.bridge()->stats();
  dev.copy_in(a, 0, in);  // four chunks: three full, one short
  const emu::usb::bridge_stats after = m.bridge()->stats();
  CHECK(after.sram_write_arms - before.sram_write_arms == 4);
  CHECK(after.gpu_sram_write_bytes == before.gpu_sram_write_bytes);
  CHECK(after.gpu_write_bytes - before.gpu_write_bytes == 4 * 8);  // the four 64-bit fences
  std::vector<std::byte> out(in.size());
  dev.copy_out(out, a, 0);
  CHECK(out == in);
}

// A copy of a few hundred bytes (a decode step's token and RoPE rows) is one streamed BAR0 write
// and an HDP flush: no SRAM window, no SDMA job, a handful of bridge requests.
TEST_CASE("a small USB copy-in goes through BAR0, not the SRAM window") {
  emu::emulated_machine m({.gen = emu::gfx_gen::gfx12, .vram_bytes = 512ull << 20, .bus = emu::emulated_bus::usb});
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  amd::allocation a = dev.allocate(1 << 20);
  std::vector<std::byte> in(256);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::byte(i * 7 + 3);
  const emu::usb::bridge_stats before = m.bridge()->stats();
  const auto link_before = t->link_traffic();
  dev.copy_in(a, 4096, in);
  const emu::usb::bridge_stats after = m.bridge()->stats();
  CHECK(after.sram_write_arms == before.sram_write_arms);
  REQUIRE(link_before);
  CHECK(t->link_traffic()->transfers - link_before->transfers <= 6);  // the stream write and the HDP flush's
  std::vector<std::byte> out(in.size());
  dev.copy_out(out, a, 4096);
  CHECK(out == in);
  // Unaligned sizes keep the window path.
  std::vector<std::byte> odd(in.begin(), in.begin() + 101);
  dev.copy_in(a, 8192, odd);
  CHECK(m.bridge()->stats().sram_write_arms > after.sram_write_arms);
  std::vector<std::byte> odd_out(odd.size());
  dev.copy_out(odd_out, a, 8192);
  CHECK(odd_out == odd);
}
