// sdma.cpp: SDMA packet emitters (see sdma.hpp).
#include "runtime/queue/sdma.hpp"

#include <algorithm>

namespace tg::queue::sdma {
namespace {

// A packet under construction: fields are OR-ed into the dword their descriptor names.
template <std::size_t N>
struct packet {
  std::array<std::uint32_t, N> words{};

  packet& set(const packet_field& f, std::uint32_t value) {
    if (f.dword >= N) TG_UNREACHABLE("sdma packet field outside the packet");
    words[f.dword] |= encode(f, value);
    return *this;
  }
  void append_to(cmd_buffer& cb) const { cb.insert(cb.end(), words.begin(), words.end()); }
};

void require_aligned(gpu_va va, std::uint64_t bytes, const char* what) {
  if (!va.is_aligned(bytes))
    throw usage_error(str("sdma: ", what, " ", va, " is not ", bytes, "-byte aligned"));
}

}  // namespace

void emit_nop(cmd_buffer& cb, std::size_t dwords) { cb.insert(cb.end(), dwords, 0u); }

void emit_copy_linear(cmd_buffer& cb, gpu_va dst, gpu_va src, std::uint64_t bytes) {
  for (std::uint64_t done = 0; done < bytes;) {
    std::uint64_t n = std::min(bytes - done, copy_max_bytes);
    gpu_va s = src + done, d = dst + done;
    packet<copy_linear_dwords> p;
    p.set(SDMA_PKT_COPY_LINEAR_HEADER_op, SDMA_OP_COPY)
        .set(SDMA_PKT_COPY_LINEAR_HEADER_sub_op, SDMA_SUBOP_COPY_LINEAR)
        .set(SDMA_PKT_COPY_LINEAR_COUNT_count, std::uint32_t(n - 1))  // PARAMETER stays 0: no swap, default policy
        .set(SDMA_PKT_COPY_LINEAR_SRC_ADDR_LO_src_addr_31_0, s.lo())
        .set(SDMA_PKT_COPY_LINEAR_SRC_ADDR_HI_src_addr_63_32, s.hi())
        .set(SDMA_PKT_COPY_LINEAR_DST_ADDR_LO_dst_addr_31_0, d.lo())
        .set(SDMA_PKT_COPY_LINEAR_DST_ADDR_HI_dst_addr_63_32, d.hi());
    p.append_to(cb);
    done += n;
  }
}

void emit_const_fill(cmd_buffer& cb, gpu_va dst, std::uint32_t pattern, std::uint64_t bytes) {
  require_aligned(dst, 4, "CONSTANT_FILL destination");
  if (bytes % 4 != 0)
    throw usage_error(str("sdma: CONSTANT_FILL of ", bytes, " bytes; the 32-bit pattern needs a multiple of 4"));
  for (std::uint64_t done = 0; done < bytes;) {
    std::uint64_t n = std::min(bytes - done, fill_max_bytes);
    gpu_va d = dst + done;
    packet<const_fill_dwords> p;
    // FILLSIZE 0 and a byte count, as sdma_v6_0_emit_fill_buffer.
    p.set(SDMA_PKT_CONSTANT_FILL_HEADER_op, SDMA_OP_CONST_FILL)
        .set(SDMA_PKT_CONSTANT_FILL_DST_ADDR_LO_dst_addr_31_0, d.lo())
        .set(SDMA_PKT_CONSTANT_FILL_DST_ADDR_HI_dst_addr_63_32, d.hi())
        .set(SDMA_PKT_CONSTANT_FILL_DATA_src_data_31_0, pattern)
        .set(SDMA_PKT_CONSTANT_FILL_COUNT_count, std::uint32_t(n - 1));
    p.append_to(cb);
    done += n;
  }
}

void emit_fence(cmd_buffer& cb, gpu_va addr, std::uint32_t value) {
  require_aligned(addr, 4, "FENCE address");
  constexpr std::uint32_t mtype_uncached = 3;  // sdma_v6_0_ring_emit_fence: MTYPE(0x3) /* Ucached(UC) */
  packet<fence_dwords> p;
  p.set(SDMA_PKT_FENCE_HEADER_op, SDMA_OP_FENCE)
      .set(SDMA_PKT_FENCE_HEADER_mtype, mtype_uncached)
      .set(SDMA_PKT_FENCE_ADDR_LO_addr_31_0, addr.lo())
      .set(SDMA_PKT_FENCE_ADDR_HI_addr_63_32, addr.hi())
      .set(SDMA_PKT_FENCE_DATA_data, value);
  p.append_to(cb);
}

void emit_trap(cmd_buffer& cb, std::uint32_t int_context) {
  packet<trap_dwords> p;
  p.set(SDMA_PKT_TRAP_HEADER_op, SDMA_OP_TRAP).set(SDMA_PKT_TRAP_INT_CONTEXT_int_context, int_context);
  p.append_to(cb);
}

void emit_poll_regmem(cmd_buffer& cb, gpu_va addr, compare func, std::uint32_t reference, std::uint32_t mask,
                      std::uint32_t interval, std::uint32_t retry_count) {
  require_aligned(addr, 4, "POLL_REGMEM address");
  if (!is_valid(func)) throw usage_error(str("sdma: POLL_REGMEM compare function ", unsigned(func), " is not 0..6"));
  packet<poll_regmem_dwords> p;
  p.set(SDMA_PKT_POLL_REGMEM_HEADER_op, SDMA_OP_POLL_REGMEM)
      .set(SDMA_PKT_POLL_REGMEM_HEADER_func, std::uint32_t(func))
      .set(SDMA_PKT_POLL_REGMEM_HEADER_mem_poll, 1)  // memory, not a register; HDP_FLUSH stays 0
      .set(SDMA_PKT_POLL_REGMEM_ADDR_LO_addr_31_0, addr.lo())
      .set(SDMA_PKT_POLL_REGMEM_ADDR_HI_addr_63_32, addr.hi())
      .set(SDMA_PKT_POLL_REGMEM_VALUE_value, reference)
      .set(SDMA_PKT_POLL_REGMEM_MASK_mask, mask)
      .set(SDMA_PKT_POLL_REGMEM_DW5_interval, interval)
      .set(SDMA_PKT_POLL_REGMEM_DW5_retry_count, retry_count);
  p.append_to(cb);
}

void emit_timestamp(cmd_buffer& cb, gpu_va addr) {
  require_aligned(addr, 8, "TIMESTAMP address");  // the low field is write_addr_31_3
  packet<timestamp_dwords> p;
  p.set(SDMA_PKT_TIMESTAMP_GET_GLOBAL_HEADER_op, SDMA_OP_TIMESTAMP)
      .set(SDMA_PKT_TIMESTAMP_GET_GLOBAL_HEADER_sub_op, SDMA_SUBOP_TIMESTAMP_GET_GLOBAL)
      .set(SDMA_PKT_TIMESTAMP_GET_GLOBAL_WRITE_ADDR_LO_write_addr_31_3, addr.lo() >> 3)
      .set(SDMA_PKT_TIMESTAMP_GET_GLOBAL_WRITE_ADDR_HI_write_addr_63_32, addr.hi());
  p.append_to(cb);
}

void emit_write(cmd_buffer& cb, gpu_va dst, std::span<const std::uint32_t> data) {
  require_aligned(dst, 4, "WRITE destination");
  if (data.empty() || data.size() > max_write_dwords)
    throw usage_error(str("sdma: WRITE of ", data.size(), " dwords; one packet writes 1..", max_write_dwords));
  packet<SDMA_PKT_WRITE_UNTILED_dwords> p;
  p.set(SDMA_PKT_WRITE_UNTILED_HEADER_op, SDMA_OP_WRITE)
      .set(SDMA_PKT_WRITE_UNTILED_HEADER_sub_op, SDMA_SUBOP_WRITE_LINEAR)
      .set(SDMA_PKT_WRITE_UNTILED_DST_ADDR_LO_dst_addr_31_0, dst.lo())
      .set(SDMA_PKT_WRITE_UNTILED_DST_ADDR_HI_dst_addr_63_32, dst.hi())
      .set(SDMA_PKT_WRITE_UNTILED_DW_3_count, std::uint32_t(data.size() - 1));
  p.append_to(cb);
  cb.insert(cb.end(), data.begin(), data.end());
}

}  // namespace tg::queue::sdma
