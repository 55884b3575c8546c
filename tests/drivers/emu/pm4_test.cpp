// pm4_test.cpp: the compute queue of the emulated GPU, fed with runtime/queue's PM4 encoders
// through a ring in emulated VRAM that the driver's page tables map. Its dispatches run code
// objects built from tests/drivers/amd/kernels at test time (add_kernel.hpp: llc-19 + ld.lld-19)
// as machine code; without LLVM's tools those cases say so and check nothing more. The emulator has
// no way to run a host function in a kernel's place: every dispatch is interpreted.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "drivers/amd/code_object.hpp"
#include "tests/drivers/amd/add_kernel.hpp"
#include "tests/drivers/emu/emu_rig.hpp"
#include "runtime/queue/pm4.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace pm4 = tg::queue::pm4;
using tg::queue::cmd_buffer;
using tg::queue::compare;

namespace {

pm4::gfx_version gfx_of(gfx_gen g) { return g == gfx_gen::gfx11 ? pm4::gfx_version::gfx11 : pm4::gfx_version::gfx12; }

void emit_signal(cmd_buffer& cb, gpu_va at, std::uint32_t value) {
  pm4::release_mem r;
  r.gcr = pm4::release_gcr_flush;
  r.address = at;
  r.value = value;
  pm4::emit_release_mem(cb, r);  // the reference's signal (tinygrad's AMDComputeQueue.signal)
}

// A kernel with only the kernarg pointer as user SGPRs (AMDGPUUsage.rst, Initial Kernel Execution State) at `code`,
// and LLVM's FLOAT_MODE for kernels: round to nearest even, denormals kept (0xF0).
pm4::kernel_summary kernel_at(const tg::queue::reg_table& gc, gpu_va code) {
  return {code, 0, 32, gc.encode("regCOMPUTE_PGM_RSRC1", {{"FLOAT_MODE", 0xF0}}),
          gc.encode("regCOMPUTE_PGM_RSRC2", {{"USER_SGPR", 2}}), 0,
          std::uint16_t(pm4::kcp_kernarg_segment_ptr | pm4::kcp_wavefront_size32)};
}

pm4::dispatch_args args_for(gfx_gen gen, std::uint32_t groups, gpu_va kernargs, gpu_va scratch,
                            std::uint32_t group_size = 256) {
  return {gfx_of(gen), {groups, 1, 1}, {group_size, 1, 1}, kernargs, scratch};
}

// kernels/<file>.ll's `kernel` for the rig's generation, copied into `code`; nullopt without LLVM's tools.
std::optional<pm4::kernel_summary> load_kernel(emu_rig& rig, const buffer& code, const std::string& file,
                                               const std::string& kernel) {
  const std::vector<std::byte> elf = tg::test::build_kernel(file, rig.g.gen() == gfx_gen::gfx11 ? "gfx1100" : "gfx1200");
  if (elf.empty()) {
    MESSAGE("llc-19 / ld.lld-19 (TG_LLC, TG_LLD) or TG_AMD_KERNELS missing: the dispatch is not checked");
    return std::nullopt;
  }
  const tg::amd::code_object co(elf);
  REQUIRE(co.image_bytes() <= code.bytes);
  rig.write(code, 0, co.image_at(code.va));
  return co.summary(kernel, code.va);
}

}  // namespace

TEST_CASE_TEMPLATE("RELEASE_MEM writes 32-bit values, 64-bit values and timestamps at end of pipe", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  rig.store64(sig, 0, 0xFFFF'FFFF'0000'0000ull);
  cmd_buffer cb;
  emit_signal(cb, sig.va, 7);
  pm4::release_mem r64;
  r64.data = pm4::data_sel::value64;
  r64.address = sig.va + 8;
  r64.value = 0x1122'3344'5566'7788ull;
  pm4::emit_release_mem(cb, r64);
  pm4::release_mem ts;
  ts.data = pm4::data_sel::gpu_clock;
  ts.address = sig.va + 16;
  pm4::emit_release_mem(cb, ts);
  pm4::release_mem irq;
  irq.data = pm4::data_sel::none;
  irq.interrupt = pm4::int_sel::interrupt_after_write;
  irq.int_ctx_id = 42;
  pm4::emit_release_mem(cb, irq);
  q.submit(cb);
  rig.g.step_until_idle();

  REQUIRE(rig.g.faults().empty());
  CHECK(rig.load64(sig, 0) == 0xFFFF'FFFF'0000'0007ull);  // DATA_SEL 1 writes the low dword only
  CHECK(rig.load64(sig, 8) == 0x1122'3344'5566'7788ull);
  CHECK(rig.load64(sig, 16) > 0);
  const auto irqs = rig.g.interrupts();
  REQUIRE(irqs.size() == 1);
  CHECK(irqs[0].source == interrupt_source::cp_end_of_pipe);
  CHECK(irqs[0].context == 42);
  CHECK(rig.g.stats().release_mems == 4);
  CHECK(q.rptr() == q.put());  // written back in dwords (as AMDComputeQueue._submit counts)
}

TEST_CASE_TEMPLATE("SET_SH_REG and SET_UCONFIG_REG land in the register file", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);
  const auto gfx = gfx_of(G::gen);
  const std::uint32_t rsrc1 = pm4::reg_index(gfx, "regCOMPUTE_PGM_RSRC1");
  const std::uint32_t index = pm4::reg_index(gfx, "regGRBM_GFX_INDEX");
  cmd_buffer cb;
  pm4::emit_set_sh_reg(cb, rsrc1, std::vector<std::uint32_t>{0x11, 0x22});
  pm4::emit_set_uconfig_reg(cb, index, std::vector<std::uint32_t>{0xE000'0000u});
  q.submit(cb);
  rig.g.step_until_idle();
  CHECK(rig.g.read_register(rsrc1) == 0x11);
  CHECK(rig.g.read_register(rsrc1 + 1) == 0x22);
  CHECK(rig.g.read_register(index) == 0xE000'0000u);
}

TEST_CASE_TEMPLATE("WAIT_REG_MEM holds the queue until memory satisfies it; the HDP flush form passes", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  const nbio_registers& nb = rig.g.chip().nbio_reg;
  cmd_buffer cb;
  pm4::emit_write_wait_reg(cb, nb.hdp_flush_req, nb.hdp_flush_done, compare::greater_equal, 0xFFFF'FFFFu);
  pm4::emit_wait_mem(cb, sig.va, compare::greater_equal, 3);
  emit_signal(cb, sig.va + 8, 1);
  q.submit(cb);
  const std::uint64_t flushes = rig.g.stats().hdp_flushes;

  CHECK(rig.g.step_until_idle().waiting);
  CHECK(rig.g.stats().hdp_flushes == flushes + 1);
  CHECK(rig.g.compute_queue()->waiting);
  CHECK(rig.load32(sig, 8) == 0);
  rig.store32(sig, 0, 3);
  CHECK_FALSE(rig.g.step_until_idle().waiting);
  CHECK(rig.load32(sig, 8) == 1);
}

TEST_CASE_TEMPLATE("a dispatch runs the kernel's machine code, which adds two buffers through the MMU", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);
  constexpr std::uint32_t groups = 47, n = groups * 64;  // about three pages per buffer
  buffer a = rig.alloc(4 * n), b = rig.alloc(4 * n), c = rig.alloc(4 * n);
  buffer code = rig.alloc(16 * KiB), kargs = rig.alloc(4 * KiB), scratch = rig.alloc(4 * KiB), sig = rig.alloc(4 * KiB);
  const std::optional<pm4::kernel_summary> add = load_kernel(rig, code, "add", "add");
  if (!add) return;
  std::vector<float> va(n), vb(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    va[i] = float(i) * 0.5f;
    vb[i] = 1000.0f - float(i);
  }
  rig.write(a, 0, std::as_bytes(std::span(va)));
  rig.write(b, 0, std::as_bytes(std::span(vb)));
  rig.store64(kargs, 0, c.va.value);  // add(out, a, b)
  rig.store64(kargs, 8, a.va.value);
  rig.store64(kargs, 16, b.va.value);

  cmd_buffer cb;
  pm4::emit_dispatch(cb, *add, args_for(G::gen, groups, kargs.va, scratch.va, 64));
  emit_signal(cb, sig.va, 1);
  q.submit(cb);
  std::vector<shader::dispatch_counters> observed;
  std::string observed_target;
  rig.g.observe_dispatches([&](const shader::launch& l, const shader::dispatch_counters& k) {
    observed.push_back(k);
    observed_target = std::string(l.target);
  });
  rig.g.step_until_idle();
  rig.g.observe_dispatches({});

  REQUIRE(rig.g.faults().empty());
  CHECK(rig.load32(sig, 0) == 1);
  const shader::dispatch_counters k = rig.g.last_dispatch();
  CHECK(k.workgroups == groups);
  CHECK(k.waves == 2 * groups);  // 64 threads: two wave32s
  CHECK(k.global_bytes_written == 4 * n);
  // Each buffer is 4n bytes (page aligned), read or written once: its lines, plus the kernel
  // arguments' line (and at most one more for a buffer the lanes leave unaligned).
  const std::uint64_t lines = 3 * (4 * n / 128);
  CHECK(k.global_lines >= lines);
  CHECK(k.global_lines <= lines + 4);
  REQUIRE(observed.size() == 1);
  CHECK(observed[0].instructions == k.instructions);
  CHECK(observed[0].global_lines == k.global_lines);
  CHECK(observed_target == (G::gen == gfx_gen::gfx11 ? "gfx1100" : "gfx1200"));
  std::vector<float> vc(n);
  rig.g.vram().read(c.pa, std::as_writable_bytes(std::span(vc)));
  bool exact = true;
  for (std::uint32_t i = 0; i < n; ++i) exact &= vc[i] == va[i] + vb[i];
  CHECK(exact);
  CHECK(rig.g.stats().dispatches == 1);
}

TEST_CASE_TEMPLATE("an IB runs 1,000 times, patched between runs as a graph replay does", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);  // 4,000 dwords of IB packets wrap this ring four times
  buffer ib = rig.alloc(4 * KiB), code = rig.alloc(16 * KiB), kargs = rig.alloc(4 * KiB);
  buffer scratch = rig.alloc(4 * KiB), counter = rig.alloc(4 * KiB), sig = rig.alloc(4 * KiB);
  const std::optional<pm4::kernel_summary> inc = load_kernel(rig, code, "increment", "increment");
  if (!inc) return;
  rig.store64(kargs, 0, counter.va.value);
  cmd_buffer body;
  pm4::emit_dispatch(body, *inc, args_for(G::gen, 1, kargs.va, scratch.va, 64));
  const std::size_t value_dword = body.size() + 5;  // RELEASE_MEM DW5: data low (AMDComputeQueue.release_mem)
  emit_signal(body, sig.va, 0);
  for (std::size_t i = 0; i < body.size(); ++i) rig.store32(ib, 4 * i, body[i]);

  for (std::uint32_t run = 1; run <= 1000; ++run) {
    rig.store32(ib, 4 * value_dword, run);  // patch, then replay
    cmd_buffer cb;
    pm4::emit_indirect_buffer(cb, ib.va, std::uint32_t(body.size()));
    q.submit(cb);
    rig.g.step_until_idle();
    REQUIRE(rig.load32(sig, 0) == run);
  }
  CHECK(rig.load32(counter, 0) == 1000);
  CHECK(rig.g.stats().indirect_buffers == 1000);
  CHECK(rig.g.stats().dispatches == 1000);
  CHECK(rig.g.faults().empty());
  CHECK(q.rptr() == 4000);
}

TEST_CASE_TEMPLATE("PM4 packets may wrap around the end of the compute ring", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 1 * KiB);  // 256 dwords; 11-dword submissions cross the end at every offset
  buffer sig = rig.alloc(4 * KiB);
  for (std::uint32_t i = 1; i <= 200; ++i) {
    cmd_buffer cb;
    emit_signal(cb, sig.va, i);
    pm4::emit_nop(cb, 3);
    q.submit(cb);
    rig.g.step_until_idle();
    REQUIRE(rig.load32(sig, 0) == i);
  }
  CHECK(rig.g.faults().empty());
  CHECK(q.rptr() == 2200);
  CHECK(rig.g.compute_queue()->rptr == 2200);
}

TEST_CASE_TEMPLATE("an unknown PM4 opcode is reported with its ring offset and halts the queue", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);
  buffer sig = rig.alloc(4 * KiB);
  cmd_buffer cb;
  emit_signal(cb, sig.va, 1);
  cb.insert(cb.end(), {pm4::type3_header(pm4::PACKET3_WRITE_DATA, 3), 0, 0, 0});
  emit_signal(cb, sig.va, 2);
  q.submit(cb);
  rig.g.step_until_idle();

  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::bad_packet);
  CHECK(faults[0].engine == engine_id::compute);
  CHECK(faults[0].stream_offset == 32);
  CHECK(faults[0].header == pm4::type3_header(pm4::PACKET3_WRITE_DATA, 3));
  CHECK(faults[0].message.find("WRITE_DATA") != std::string::npos);
  CHECK(rig.load32(sig, 0) == 1);
  CHECK(rig.g.compute_queue()->halted);
  CHECK(q.rptr() == 8);
}

TEST_CASE_TEMPLATE("a bad packet inside an IB is reported at its IB offset", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);
  buffer ib = rig.alloc(4 * KiB), sig = rig.alloc(4 * KiB);
  cmd_buffer body;
  emit_signal(body, sig.va, 1);
  body.insert(body.end(), {pm4::type3_header(0xEE, 1), 0});
  for (std::size_t i = 0; i < body.size(); ++i) rig.store32(ib, 4 * i, body[i]);
  cmd_buffer cb;
  pm4::emit_indirect_buffer(cb, ib.va, std::uint32_t(body.size()));
  q.submit(cb);
  rig.g.step_until_idle();
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].in_ib);
  CHECK(faults[0].stream_offset == 32);
  CHECK(faults[0].packet_va == ib.va + 32);
  CHECK(faults[0].message.find("not in nvd.h") != std::string::npos);
  CHECK(rig.load32(sig, 0) == 1);
  CHECK(rig.g.compute_queue()->ib_depth == 1);
}

TEST_CASE("a packet longer than the whole ring is a fault, not an endless wait") {
  emu_rig rig(gfx_gen::gfx11);
  pm4_ring q(rig, 1 * KiB);
  cmd_buffer cb{pm4::type3_header(pm4::PACKET3_NOP, 300)};
  q.submit(cb);
  rig.g.step_until_idle();
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].message.find("cannot fit the 1024-byte ring") != std::string::npos);
}

TEST_CASE("a PM4 header of type 0 or 1 is a bad packet; type 2 is a one-dword filler") {
  emu_rig rig(gfx_gen::gfx12);
  pm4_ring q(rig, 4 * KiB);
  cmd_buffer cb{0x8000'0000u, 0x8000'0000u, 0x4000'0000u};
  q.submit(cb);
  rig.g.step_until_idle();
  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].stream_offset == 8);
  CHECK(faults[0].message.find("PM4 type-1 header") != std::string::npos);
}

TEST_CASE_TEMPLATE("every program is interpreted; code it cannot run is a fault naming the PC", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);
  buffer code = rig.alloc(4 * KiB), kargs = rig.alloc(4 * KiB), scratch = rig.alloc(4 * KiB), sig = rig.alloc(4 * KiB);
  rig.g.vram().write(code.pa, std::vector<std::byte>(64));  // VOP2 opcode 0: undefined on gfx11 and gfx12
  cmd_buffer cb;
  pm4::emit_dispatch(cb, kernel_at(*rig.g.chip().gc_table, code.va), args_for(G::gen, 1, kargs.va, scratch.va));
  emit_signal(cb, sig.va, 1);
  q.submit(cb);
  rig.g.step_until_idle();

  auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::shader_error);
  CHECK(faults[0].address == code.va);
  CHECK(faults[0].message.find("VOP2 opcode 0 (00000000) at PC") != std::string::npos);
  CHECK(rig.load32(sig, 0) == 0);
  CHECK(rig.g.compute_queue()->halted);

  SUBCASE("the driver sets the queue up again and it runs") {
    rig.g.clear_faults();
    pm4_ring again(rig, 4 * KiB);
    cmd_buffer ok;
    emit_signal(ok, sig.va, 2);
    again.submit(ok);
    rig.g.step_until_idle();
    CHECK(rig.load32(sig, 0) == 2);
    CHECK(rig.g.faults().empty());
    CHECK_FALSE(rig.g.compute_queue()->halted);
  }
}

TEST_CASE_TEMPLATE("a kernel that touches unmapped memory faults and halts its queue", G, gfx11, gfx12) {
  emu_rig rig(G::gen);
  pm4_ring q(rig, 4 * KiB);
  buffer code = rig.alloc(16 * KiB), kargs = rig.alloc(4 * KiB), scratch = rig.alloc(4 * KiB), sig = rig.alloc(4 * KiB);
  const std::optional<pm4::kernel_summary> inc = load_kernel(rig, code, "increment", "increment");
  if (!inc) return;
  const gpu_va wild = va_base + (std::uint64_t{3} << 40) + 0x1230;
  rig.store64(kargs, 0, wild.value);  // the counter increment.ll loads, then stores
  cmd_buffer cb;
  pm4::emit_dispatch(cb, *inc, args_for(G::gen, 1, kargs.va, scratch.va, 64));
  emit_signal(cb, sig.va, 1);
  q.submit(cb);
  rig.g.step_until_idle();

  const auto faults = rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::page_fault);
  CHECK(faults[0].address == wild);
  CHECK_FALSE(faults[0].write);
  CHECK(rig.load32(sig, 0) == 0);
}

