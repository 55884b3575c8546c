// pm4_engine.cpp: PM4 type-3 packet execution (see pm4_engine.hpp). Field positions come from
// pm4_gen.hpp (nvd.h) where nvd.h names them, widths from the packets tinygrad/runtime/ops_amd.py: AMDComputeQueue builds.
#include "drivers/emu/pm4_engine.hpp"

#include "drivers/emu/gpu.hpp"

#include <cstdlib>
#include <string_view>

#include "drivers/emu/wait_condition.hpp"
#include "runtime/queue/pm4.hpp"

namespace tg::emu {

namespace pm4 = tg::queue::pm4;

namespace {

constexpr std::uint32_t bits(std::uint32_t word, unsigned shift, unsigned width) {
  return (word >> shift) & ((1u << width) - 1);
}

std::string_view opcode_name(std::uint32_t op) {
  for (const pm4::named_value& nv : pm4::packet3_opcodes)
    if (nv.value == op) return nv.name;
  return "not in nvd.h";
}

// SET_UCONFIG_REG reaches up to 0xC000 + 0xFFFF in tinygrad/runtime/ops_amd.py: AMDComputeQueue, further than
// nvd.h's PACKET3_SET_UCONFIG_REG_END, which tg's encoder enforces.
constexpr std::uint32_t uconfig_window_end = 0x10000;
// The IB chain: ring -> IB -> IB. The reference and tg use one level (tinygrad/runtime/ops_amd.py: AMDComputeQueue.indirect_buffer).
constexpr unsigned max_ib_depth = 2;
constexpr std::uint32_t ib_size_mask = 0xFFFFF;  // IB_SIZE, bits 19:0 (nvd.h: INDIRECT_BUFFER_VALID and the IB packet of gfx_v11_0_ring_emit_ib_compute)

}  // namespace

pm4_engine::pm4_engine(gpu_core& core, std::uint32_t bank, const ring_config& ring)
    : queue_engine(core, engine_id::compute, bank, utcl2_client::cpc, 4, max_ib_depth, ring) {}

void pm4_engine::publish_pointers(std::uint64_t rptr, std::uint64_t wptr) {
  const gc_registers& r = core_.chip.gc_reg;
  core_.regs.poke_bank(queue_, r.hqd_pq_rptr, std::uint32_t(rptr));
  core_.regs.poke_bank(queue_, r.hqd_pq_wptr_lo, std::uint32_t(wptr));
  core_.regs.poke_bank(queue_, r.hqd_pq_wptr_hi, std::uint32_t(wptr >> 32));
}

std::uint32_t pm4_engine::sh(std::uint32_t index) const {
  auto it = sh_.find(index);
  return it != sh_.end() ? it->second : core_.regs.peek(index);
}

queue_engine::outcome pm4_engine::execute(packet& p) {
  if (!p.need(1)) return {outcome::not_ready};
  const std::uint32_t header = p[0];
  const std::uint32_t type = header >> 30;
  if (type == 2) return {outcome::done, 4};  // the one-dword type-2 filler
  if (type != 3)
    bad_packet(str("PM4 type-", type, " header ", hex{header}, "; a compute queue runs type-3 packets (gfx_v11_0.c)"));
  if (header == pm4::nop_single_dword) return {outcome::done, 4};
  const std::uint32_t op = bits(header, 8, 8);
  const std::size_t dwords = bits(header, 16, 14) + 2;
  if (!p.need(dwords)) return {outcome::not_ready};
  auto require_dwords = [&](std::size_t want) {
    if (dwords != want)
      bad_packet(str("PM4 ", opcode_name(op), " with ", dwords - 1, " payload dwords; it has ", want - 1,
                     " (gfx_v11_0.c)"));
  };

  switch (op) {
    case pm4::PACKET3_NOP:
      return {outcome::done, 4 * dwords};
    case pm4::PACKET3_SET_SH_REG:
      return set_registers(p, dwords, pm4::PACKET3_SET_SH_REG_START, pm4::PACKET3_SET_SH_REG_END, "SET_SH_REG");
    case pm4::PACKET3_SET_UCONFIG_REG:
      return set_registers(p, dwords, pm4::PACKET3_SET_UCONFIG_REG_START, uconfig_window_end, "SET_UCONFIG_REG");
    case pm4::PACKET3_WAIT_REG_MEM:
      require_dwords(pm4::wait_reg_mem_dwords);
      return wait_reg_mem(p);
    case pm4::PACKET3_ACQUIRE_MEM:
      // The data caches are coherent here and the TLB is not a cache ACQUIRE_MEM touches (GCR_CNTL
      // names the GL caches only, gfx_v11_0.c: gfx_v11_0_emit_mem_sync). The instruction cache is
      // modelled (shader/instruction_cache.hpp): GCR_CNTL (dword 7) with GLI_INV, the invalidate of
      // gfx_v11_0_emit_mem_sync / gfx_v12_0_emit_mem_sync, drops it.
      require_dwords(pm4::acquire_mem_dwords);
      ++core_.stats.acquire_mems;
      if (p[7] & pm4::PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV(1)) {
        ++core_.stats.icache_invalidates;
        core_.icache.invalidate();
      }
      return {outcome::done, 4 * dwords};
    case pm4::PACKET3_RELEASE_MEM:
      require_dwords(pm4::release_mem_dwords);
      return release_mem(p);
    case pm4::PACKET3_EVENT_WRITE:
      // CS_PARTIAL_FLUSH and the other events: every earlier dispatch has already finished.
      if (dwords != pm4::event_write_dwords && dwords != 4) require_dwords(pm4::event_write_dwords);
      ++core_.stats.event_writes;
      return {outcome::done, 4 * dwords};
    case pm4::PACKET3_INDIRECT_BUFFER:
      require_dwords(pm4::indirect_buffer_dwords);
      return indirect_buffer(p);
    case pm4::PACKET3_DISPATCH_DIRECT:
      require_dwords(pm4::dispatch_direct_dwords);
      return dispatch_direct(p);
    default:
      bad_packet(str("PM4 opcode ", hex{op}, " (", opcode_name(op), ") is not emulated"));
  }
}

queue_engine::outcome pm4_engine::set_registers(packet& p, std::size_t dwords, std::uint32_t window_first,
                                                std::uint32_t window_end, const char* name) {
  if (dwords < 3) bad_packet(str("PM4 ", name, " without a value"));
  const std::uint32_t first = window_first + bits(p[1], 0, 16);  // DW1: register - window start (gfx_v11_0.c: gfx_v11_0_ring_emit_wreg)
  const std::size_t count = dwords - 2;
  if (first + count > window_end)
    bad_packet(str("PM4 ", name, " of registers ", hex{first}, "..", hex{first + count - 1},
                   " leaves its window [", hex{window_first}, ", ", hex{window_end}, ")"));
  for (std::size_t i = 0; i < count; ++i) {
    sh_[first + std::uint32_t(i)] = p[2 + i];
    core_.regs.write(first + std::uint32_t(i), p[2 + i]);
  }
  return {outcome::done, 4 * dwords};
}

queue_engine::outcome pm4_engine::wait_reg_mem(packet& p) {
  const std::uint32_t control = p[1];
  const std::uint32_t func = bits(control, pm4::WAIT_REG_MEM_FUNCTION.shift, 3);
  const std::uint32_t mem_space = bits(control, pm4::WAIT_REG_MEM_MEM_SPACE.shift, 2);
  const std::uint32_t operation = bits(control, pm4::WAIT_REG_MEM_OPERATION.shift, 2);
  const std::uint32_t reference = p[4], mask = p[5];
  if (func == 7) bad_packet("WAIT_REG_MEM compare function 7 is reserved");
  std::uint32_t value = 0;
  if (mem_space == 1 && operation == 0) {
    value = core_.gmmu.load32({(p[2] & ~3u) | std::uint64_t{p[3]} << 32}, client_);
  } else if (mem_space == 0 && operation == 0) {
    value = core_.regs.read(p[2]);
  } else if (mem_space == 0 && operation == 1) {
    // WR_WAIT_WR_REG: write the reference to DW2's register once, then poll DW3's (gfx_v11_0.c: gfx_v11_0_ring_emit_reg_write_reg_wait).
    if (!p.retrying()) core_.regs.write(p[2], reference);
    value = core_.regs.read(p[3]);
  } else {
    bad_packet(str("WAIT_REG_MEM with mem_space ", mem_space, " and operation ", operation, " is not emulated"));
  }
  if (!wait_condition_holds(func, value, mask, reference)) return {outcome::wait};
  return {outcome::done, 4 * pm4::wait_reg_mem_dwords};
}

queue_engine::outcome pm4_engine::release_mem(packet& p) {
  const std::uint32_t dst_sel = bits(p[2], pm4::PACKET3_RELEASE_MEM_DST_SEL.shift, 2);
  const std::uint32_t int_sel = bits(p[2], pm4::PACKET3_RELEASE_MEM_INT_SEL.shift, 3);
  const std::uint32_t data_sel = bits(p[2], pm4::PACKET3_RELEASE_MEM_DATA_SEL.shift, 3);
  const gpu_va address{p[3] | std::uint64_t{p[4]} << 32};
  const std::uint64_t data = p[5] | std::uint64_t{p[6]} << 32;
  if (dst_sel > 1) bad_packet(str("RELEASE_MEM DST_SEL ", dst_sel, "; only memory (0, or 1 through L2) is emulated"));
  switch (pm4::data_sel(data_sel)) {
    case pm4::data_sel::none: break;
    case pm4::data_sel::value32: core_.gmmu.store32(address, std::uint32_t(data), client_); break;
    case pm4::data_sel::value64: core_.gmmu.store64(address, data, client_); break;
    case pm4::data_sel::gpu_clock:
    case pm4::data_sel::sys_clock: core_.gmmu.store64(address, core_.gpu_clock(), client_); break;
    default: bad_packet(str("RELEASE_MEM DATA_SEL ", data_sel, " (GDS or reserved) is not emulated"));
  }
  if (int_sel != 0) core_.interrupts.push_back({interrupt_source::cp_end_of_pipe, p[7]});
  ++core_.stats.release_mems;
  return {outcome::done, 4 * pm4::release_mem_dwords};
}

queue_engine::outcome pm4_engine::indirect_buffer(packet& p) {
  if ((p[3] & pm4::INDIRECT_BUFFER_VALID) == 0)
    bad_packet("INDIRECT_BUFFER without INDIRECT_BUFFER_VALID (bit 23)");
  const std::uint32_t size_dwords = p[3] & ib_size_mask;
  if (size_dwords == 0) bad_packet("INDIRECT_BUFFER of 0 dwords");
  ++core_.stats.indirect_buffers;
  return {outcome::enter_ib, 4 * pm4::indirect_buffer_dwords, {(p[1] & ~3u) | std::uint64_t{p[2]} << 32},
          4 * std::uint64_t{size_dwords}};
}

queue_engine::outcome pm4_engine::dispatch_direct(packet& p) {
  const gc_registers& r = core_.chip.gc_reg;
  const register_fields& f = core_.chip.field;
  const std::array<std::uint32_t, 3> groups{p[1], p[2], p[3]};
  for (std::uint32_t i = 0; i < 3; ++i) core_.regs.poke(r.compute_dim_x + i, groups[i]);
  core_.regs.poke(r.compute_dispatch_initiator, p[4]);

  // COMPUTE_PGM_LO/HI hold the program address >> 8 (gc_11_0_0_sh_mask.h: COMPUTE_PGM_LO__DATA).
  const gpu_va program{(std::uint64_t{f.pgm_hi_data.get(sh(r.compute_pgm_hi))} << 32 | sh(r.compute_pgm_lo)) << 8};
  core_.gmmu.translate(program, 4, access_kind::read, client_);  // the CP fetches the code: it must be mapped
  return interpret(program, groups);
}

queue_engine::outcome pm4_engine::interpret(gpu_va program, std::array<std::uint32_t, 3> groups) {
  const gc_registers& r = core_.chip.gc_reg;
  const register_fields& f = core_.chip.field;
  // The SH registers the interpreter reads beyond those personality.hpp names, by their offset from
  // COMPUTE_PGM_RSRC2 in the generated table (all in its segment, gc_11_0_0_offset.h / gc_12_0_0_offset.h).
  const queue::reg_table& t = *core_.chip.gc_table;
  const std::uint32_t rsrc2_offset = t.reg("regCOMPUTE_PGM_RSRC2").offset;
  auto index = [&](std::string_view name) { return r.compute_pgm_rsrc2 + t.reg(name).offset - rsrc2_offset; };
  shader::launch l;
  l.gen = core_.chip.gen == gfx_gen::gfx12 ? shader::isa_gen::gfx12 : shader::isa_gen::gfx11;
  l.target = core_.chip.target;
  l.program = program;
  l.workgroups = groups;
  for (std::uint32_t i = 0; i < 3; ++i) l.workgroup_size[i] = f.num_thread_full.get(sh(r.compute_num_thread_x + i));
  for (std::uint32_t i = 0; i < 16; ++i) l.user_data[i] = sh(r.compute_user_data_0 + i);
  l.rsrc1 = sh(index("regCOMPUTE_PGM_RSRC1"));
  l.rsrc2 = sh(r.compute_pgm_rsrc2);
  l.rsrc3 = sh(index("regCOMPUTE_PGM_RSRC3"));
  l.dispatch_initiator = core_.regs.peek(r.compute_dispatch_initiator);
  l.tmpring_size = sh(index("regCOMPUTE_TMPRING_SIZE"));
  // COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI: the scratch base >> 8 (gc_11_0_0_sh_mask.h).
  l.scratch_base = gpu_va{(std::uint64_t{sh(index("regCOMPUTE_DISPATCH_SCRATCH_BASE_HI"))} << 32 |
                           sh(index("regCOMPUTE_DISPATCH_SCRATCH_BASE_LO"))) << 8};
  // TG_EMU_PERTURB_TRANSCENDENTALS=1: the interpreter's test mode (drivers/emu/shader/transcendental.hpp).
  const char* perturb = std::getenv("TG_EMU_PERTURB_TRANSCENDENTALS");
  l.perturb_transcendentals = perturb && *perturb && *perturb != '0';
  ++core_.stats.dispatches;
  core_.last_dispatch = {};
  if (groups[0] == 0 || groups[1] == 0 || groups[2] == 0) return {outcome::done, 4 * pm4::dispatch_direct_dwords};
  auto report = [&] {  // the observer sees faulted dispatches too
    if (core_.dispatch_observer) core_.dispatch_observer(l, core_.last_dispatch);
  };
  try {
    shader::run_dispatch(core_.gmmu, l, core_.last_dispatch, core_.icache, core_.shader_threads);
  } catch (const shader::shader_fault& e) {
    report();
    throw queue_fault(fault_kind::shader_error, e.what(), e.pc);
  } catch (...) {  // a page fault
    report();
    throw;
  }
  report();
  return {outcome::done, 4 * pm4::dispatch_direct_dwords};
}

}  // namespace tg::emu
