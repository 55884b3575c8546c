// sdma_engine.cpp: SDMA packet execution, every field read through its sdma_gen.hpp descriptor.
#include "drivers/emu/sdma_engine.hpp"

#include "drivers/emu/wait_condition.hpp"
#include "runtime/queue/sdma_gen.hpp"

namespace tg::emu {

using namespace tg::queue::sdma;

namespace {

constexpr unsigned max_ib_depth = 1;          // ring -> INDIRECT (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c)
constexpr std::size_t dummy_trap_dwords = 1;  // sdma_v7_0.c; sdma_v6_0_0_pkt_open.h

gpu_va address(std::uint32_t lo, std::uint32_t hi) { return {lo | std::uint64_t{hi} << 32}; }

// The fixed length in dwords of (op, sub_op), or 0 when the emulator does not run it.
std::size_t fixed_dwords(std::uint32_t op, std::uint32_t sub_op) {
  switch (op) {
    case SDMA_OP_NOP: return SDMA_PKT_NOP_dwords;
    case SDMA_OP_COPY: return sub_op == SDMA_SUBOP_COPY_LINEAR ? SDMA_PKT_COPY_LINEAR_dwords : 0;
    case SDMA_OP_WRITE: return sub_op == SDMA_SUBOP_WRITE_LINEAR ? SDMA_PKT_WRITE_UNTILED_dwords : 0;
    case SDMA_OP_INDIRECT: return SDMA_PKT_INDIRECT_dwords;
    case SDMA_OP_FENCE: return SDMA_PKT_FENCE_dwords;
    case SDMA_OP_TRAP: return SDMA_PKT_TRAP_dwords;
    case SDMA_OP_POLL_REGMEM: return sub_op == 0 ? SDMA_PKT_POLL_REGMEM_dwords : 0;
    case SDMA_OP_CONST_FILL: return SDMA_PKT_CONSTANT_FILL_dwords;
    case SDMA_OP_TIMESTAMP: return sub_op <= SDMA_SUBOP_TIMESTAMP_GET_GLOBAL ? SDMA_PKT_TIMESTAMP_GET_GLOBAL_dwords : 0;
    case SDMA_OP_GCR_REQ: return SDMA_PKT_GCR_REQ_dwords;
    case SDMA_OP_DUMMY_TRAP: return dummy_trap_dwords;
    default: return 0;
  }
}

}  // namespace

sdma_engine::sdma_engine(gpu_core& core, const ring_config& ring)
    : queue_engine(core, engine_id::sdma, 0, utcl2_client::sdma0, 1, max_ib_depth, ring) {}

void sdma_engine::publish_pointers(std::uint64_t rptr, std::uint64_t wptr) {
  const sdma_registers& r = core_.chip.sdma_reg;
  core_.regs.poke(r.rb_rptr, std::uint32_t(rptr));
  core_.regs.poke(r.rb_rptr_hi, std::uint32_t(rptr >> 32));
  core_.regs.poke(r.rb_wptr, std::uint32_t(wptr));
  core_.regs.poke(r.rb_wptr_hi, std::uint32_t(wptr >> 32));
}

queue_engine::outcome sdma_engine::execute(packet& p) {
  if (!p.need(1)) return {outcome::not_ready};
  const std::uint32_t header = p[0];
  const std::uint32_t op = SDMA_PKT_NOP_HEADER_op.get(header), sub_op = SDMA_PKT_NOP_HEADER_sub_op.get(header);
  std::size_t dwords = fixed_dwords(op, sub_op);
  if (dwords == 0) bad_packet(str("SDMA opcode ", op, " sub-op ", sub_op, " is not emulated"));
  if (op == SDMA_OP_NOP) dwords += SDMA_PKT_NOP_HEADER_count.get(header);  // a burst NOP covers `count` more
  auto check_contiguous = [&] {
    if (!p.in_ib() && 4 * dwords > p.bytes_to_end())
      bad_packet(str("a ", 4 * dwords, "-byte SDMA packet straddles the ring end; the host must pad the tail with "
                     "NOPs and start it at offset 0 (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c)"));
  };
  check_contiguous();
  if (!p.need(dwords)) return {outcome::not_ready};
  if (op == SDMA_OP_WRITE) {
    dwords += SDMA_PKT_WRITE_UNTILED_DW_3_count.get(p[3]) + 1;
    check_contiguous();
    if (!p.need(dwords)) return {outcome::not_ready};
  }
  const outcome done{outcome::done, 4 * dwords};

  switch (op) {
    case SDMA_OP_COPY: {
      const std::uint32_t unsupported = SDMA_PKT_COPY_LINEAR_HEADER_tmz.get(header) |
                                        SDMA_PKT_COPY_LINEAR_HEADER_backwards.get(header) |
                                        SDMA_PKT_COPY_LINEAR_HEADER_broadcast.get(header);
      if (unsupported) bad_packet("COPY_LINEAR with tmz, backwards or broadcast is not emulated");
      core_.gmmu.copy(address(p[SDMA_PKT_COPY_LINEAR_DST_ADDR_LO_dst_addr_31_0.dword],
                              p[SDMA_PKT_COPY_LINEAR_DST_ADDR_HI_dst_addr_63_32.dword]),
                      address(p[SDMA_PKT_COPY_LINEAR_SRC_ADDR_LO_src_addr_31_0.dword],
                              p[SDMA_PKT_COPY_LINEAR_SRC_ADDR_HI_src_addr_63_32.dword]),
                      std::uint64_t{SDMA_PKT_COPY_LINEAR_COUNT_count.get(p[1])} + 1, client_);
      return done;
    }
    case SDMA_OP_WRITE: {
      const gpu_va dst = address(p[1], p[2]);
      if (dst.value % 4 != 0) bad_packet(str("WRITE destination ", dst, " is not 4-byte aligned"));
      std::vector<std::uint32_t> data(dwords - SDMA_PKT_WRITE_UNTILED_dwords);
      for (std::size_t i = 0; i < data.size(); ++i) data[i] = p[SDMA_PKT_WRITE_UNTILED_dwords + i];
      core_.gmmu.write(dst, std::as_bytes(std::span(data)), client_);
      return done;
    }
    case SDMA_OP_INDIRECT:
      ++core_.stats.indirect_buffers;
      return {outcome::enter_ib, 4 * dwords, address(p[1], p[2]),
              4 * std::uint64_t{SDMA_PKT_INDIRECT_IB_SIZE_ib_size.get(p[3])}};
    case SDMA_OP_FENCE:
      // 32 bits, as the hardware writes (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c); the reference's mock wrote 64.
      core_.gmmu.store32(address(p[1] & ~3u, p[2]), p[SDMA_PKT_FENCE_DATA_data.dword], client_);
      return done;
    case SDMA_OP_TRAP:
      core_.interrupts.push_back({interrupt_source::sdma_trap, SDMA_PKT_TRAP_INT_CONTEXT_int_context.get(p[1])});
      return done;
    case SDMA_OP_POLL_REGMEM:
      return poll_regmem(p);
    case SDMA_OP_CONST_FILL:
      core_.gmmu.fill(address(p[1], p[2]), std::uint64_t{SDMA_PKT_CONSTANT_FILL_COUNT_count.get(p[4])} + 1,
                      p[SDMA_PKT_CONSTANT_FILL_DATA_src_data_31_0.dword], client_);
      return done;
    case SDMA_OP_TIMESTAMP:
      if (sub_op != SDMA_SUBOP_TIMESTAMP_SET) {  // GET and GET_GLOBAL write the 64-bit clock
        const std::uint32_t lo = SDMA_PKT_TIMESTAMP_GET_GLOBAL_WRITE_ADDR_LO_write_addr_31_3.get(p[1]) << 3;
        core_.gmmu.store64(address(lo, p[2]), core_.gpu_clock(), client_);
      }
      return done;
    default:  // NOP, GCR_REQ (caches are coherent here), DUMMY_TRAP
      return done;
  }
}

queue_engine::outcome sdma_engine::poll_regmem(packet& p) {
  const std::uint32_t header = p[0];
  const std::uint32_t func = SDMA_PKT_POLL_REGMEM_HEADER_func.get(header);
  if (func == 7) bad_packet("POLL_REGMEM compare function 7 is reserved");
  const std::size_t bytes = 4 * SDMA_PKT_POLL_REGMEM_dwords;
  if (SDMA_PKT_POLL_REGMEM_HEADER_hdp_flush.get(header)) {
    ++core_.stats.hdp_flushes;  // the HDP flush form: the emulated flush is done at once
    return {outcome::done, bytes};
  }
  const std::uint32_t value = SDMA_PKT_POLL_REGMEM_HEADER_mem_poll.get(header)
                                  ? core_.gmmu.load32(address(p[1] & ~3u, p[2]), client_)
                                  : core_.regs.read(p[1] >> 2);  // a register's byte address (sdma_v6_0_ring_emit_reg_wait)
  // Retry count and interval are ignored: the poll repeats until it holds (0xFFF, tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c).
  if (!wait_condition_holds(func, value, SDMA_PKT_POLL_REGMEM_MASK_mask.get(p[4]), SDMA_PKT_POLL_REGMEM_VALUE_value.get(p[3])))
    return {outcome::wait};
  return {outcome::done, bytes};
}

}  // namespace tg::emu
