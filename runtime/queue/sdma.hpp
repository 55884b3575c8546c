// sdma.hpp: SDMA packets (SDMA 6.x for gfx11, 7.x for gfx12) used for copies, fills and signals.
//
// Both versions take their packets from sdma_v6_0_0_pkt_open.h in Linux 6.12 (sdma_v7_0.c includes
// it), so one encoder serves both. Every field is written through its generated descriptor in
// sdma_gen.hpp (SDMA_PKT_<packet>_<word>_<field>), never through a hand-written shift.
//
//   tg::queue::cmd_buffer cb;
//   tg::queue::sdma::emit_copy_linear(cb, dst, src, 64 << 20);  // 16 packets of 4 MiB
//   tg::queue::sdma::emit_fence(cb, signal, value);
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

#include "runtime/queue/cmd_buffer.hpp"
#include "runtime/queue/compare.hpp"
#include "runtime/queue/sdma_gen.hpp"

namespace tg::queue::sdma {

// `value` placed in field `f`; a value wider than the field is a usage_error.
constexpr std::uint32_t encode(const packet_field& f, std::uint32_t value) {
  if (value > f.mask)
    throw usage_error(str("sdma: ", f.word, ".", f.name, " = ", hex{value}, " does not fit its mask ",
                          hex{f.mask}));
  return value << f.shift;
}

// Largest copy / fill per packet: Linux's copy_max_bytes and fill_max_bytes for SDMA 6 and 7
// (sdma_v6_0.c and sdma_v7_0.c, `sdma_v*_buffer_funcs`). The COUNT fields could hold 1 GiB (the
// reference's AMDCopyQueue uses that), but amdgpu stays at 4 MiB, and so does tg.
inline constexpr std::uint64_t copy_max_bytes = 0x400000;
inline constexpr std::uint64_t fill_max_bytes = 0x400000;
static_assert(copy_max_bytes - 1 <= SDMA_PKT_COPY_LINEAR_COUNT_count.mask);
static_assert(fill_max_bytes - 1 <= SDMA_PKT_CONSTANT_FILL_COUNT_count.mask);

// ---- dword counts (from the generated layouts: the highest _offset + 1)
inline constexpr std::size_t copy_linear_dwords = SDMA_PKT_COPY_LINEAR_dwords;
inline constexpr std::size_t const_fill_dwords = SDMA_PKT_CONSTANT_FILL_dwords;
inline constexpr std::size_t fence_dwords = SDMA_PKT_FENCE_dwords;
inline constexpr std::size_t trap_dwords = SDMA_PKT_TRAP_dwords;
inline constexpr std::size_t poll_regmem_dwords = SDMA_PKT_POLL_REGMEM_dwords;
inline constexpr std::size_t timestamp_dwords = SDMA_PKT_TIMESTAMP_GET_GLOBAL_dwords;
constexpr std::size_t write_dwords(std::size_t data_dwords) { return SDMA_PKT_WRITE_UNTILED_dwords + data_dwords; }
static_assert(copy_linear_dwords == 7 && const_fill_dwords == 5 && fence_dwords == 4 && trap_dwords == 2 &&
                  poll_regmem_dwords == 6 && timestamp_dwords == 3 && write_dwords(1) == 5,
              "SDMA 6 packet sizes (sdma_v6_0_0_pkt_open.h)");

constexpr std::size_t copy_packets(std::uint64_t bytes) { return (bytes + copy_max_bytes - 1) / copy_max_bytes; }
constexpr std::size_t fill_packets(std::uint64_t bytes) { return (bytes + fill_max_bytes - 1) / fill_max_bytes; }

// `dwords` NOPs: zero dwords, each a one-dword NOP (SDMA_OP_NOP is 0, sdma_v6_0_0_pkt_open.h).
void emit_nop(cmd_buffer& cb, std::size_t dwords);

// Copy `bytes` from src to dst, split into COPY_LINEAR packets of at most copy_max_bytes.
// copy_packets(bytes) * copy_linear_dwords dwords; nothing for 0 bytes.
void emit_copy_linear(cmd_buffer& cb, gpu_va dst, gpu_va src, std::uint64_t bytes);

// Fill `bytes` (a multiple of 4) at dst (4-byte aligned) with the 32-bit pattern, split into
// CONSTANT_FILL packets of at most fill_max_bytes.
void emit_const_fill(cmd_buffer& cb, gpu_va dst, std::uint32_t pattern, std::uint64_t bytes);

// Write the 32-bit value to addr (4-byte aligned), uncached (MTYPE 3, as sdma_v6_0_ring_emit_fence).
void emit_fence(cmd_buffer& cb, gpu_va addr, std::uint32_t value);

// Raise an SDMA trap interrupt with a 28-bit context id.
void emit_trap(cmd_buffer& cb, std::uint32_t int_context = 0);

// Poll the 32-bit word at addr (4-byte aligned) until (value & mask) <func> reference.
// retry_count 0xFFF retries forever (as sdma_v6_0_ring_emit_pipeline_sync); interval is in the
// engine's poll units.
void emit_poll_regmem(cmd_buffer& cb, gpu_va addr, compare func, std::uint32_t reference,
                      std::uint32_t mask = 0xFFFFFFFFu, std::uint32_t interval = 4, std::uint32_t retry_count = 0xFFF);

// Write the 64-bit global timestamp (100 MHz) to addr (8-byte aligned): TIMESTAMP_GET_GLOBAL.
void emit_timestamp(cmd_buffer& cb, gpu_va addr);

// Write 1..2^20 dwords of inline data to dst (4-byte aligned): WRITE_UNTILED (linear write).
inline constexpr std::size_t max_write_dwords = std::size_t(SDMA_PKT_WRITE_UNTILED_DW_3_count.mask) + 1;
void emit_write(cmd_buffer& cb, gpu_va dst, std::span<const std::uint32_t> data);

}  // namespace tg::queue::sdma
