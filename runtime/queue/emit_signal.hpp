// emit_signal.hpp: the PM4 and SDMA packets that raise, timestamp and wait on a gpu_signal.
//
// Packet forms follow the reference's AM path (tinygrad/runtime/ops_amd.py: signal, wait and
// timestamp of AMDComputeQueue and AMDCopyQueue): a PM4 signal is an end-of-pipe RELEASE_MEM with
// the cache flush (0x0070F514) writing 32 bits and no interrupt; an SDMA signal is an uncached
// FENCE. Values are 32 bits on the GPU (both packets carry one data dword).
//
// The *_dword constants give where a patchable field sits inside its packet, so a recorded
// command buffer can be replayed with new values (indirect_buffer.hpp).
//
//   tg::queue::cmd_buffer cb;
//   std::size_t at = cb.size() + tg::queue::pm4_signal_value_dword;
//   tg::queue::emit_signal_pm4(cb, graph_done, 1);  // later: ib.patch(at, replay)
#pragma once
#include <cstddef>
#include <cstdint>

#include "runtime/queue/cmd_buffer.hpp"
#include "runtime/queue/gpu_signal.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/sdma.hpp"

namespace tg::queue {

// RELEASE_MEM at end of pipe, after the caches are written back: signal = value.
inline constexpr std::size_t pm4_signal_dwords = pm4::release_mem_dwords;
inline constexpr std::size_t pm4_signal_value_dword = 5;  // DW5 data low (gfx_v11_0_ring_emit_fence)
void emit_signal_pm4(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value);

// RELEASE_MEM DATA_SEL 3: the 64-bit GPU clock to the signal's timestamp (AMDComputeQueue.timestamp).
void emit_timestamp_pm4(cmd_buffer& cb, const gpu_signal& s);

// WAIT_REG_MEM until signal >= value (function GEQ, mask all ones, poll interval 4:
// AMDComputeQueue.wait).
inline constexpr std::size_t pm4_wait_dwords = pm4::wait_reg_mem_dwords;
inline constexpr std::size_t pm4_wait_value_dword = 4;  // DW4 reference (gfx_v11_0_wait_reg_mem)
void emit_wait_signal_pm4(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value);

// FENCE: signal = value, uncached (MTYPE 3, as sdma_v6_0_ring_emit_fence).
inline constexpr std::size_t sdma_signal_dwords = sdma::fence_dwords;
inline constexpr std::size_t sdma_signal_value_dword = 3;  // DW3 data (sdma_v6_0_ring_emit_fence)
void emit_signal_sdma(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value);

// TIMESTAMP GET_GLOBAL to the signal's timestamp (AMDCopyQueue.timestamp).
void emit_timestamp_sdma(cmd_buffer& cb, const gpu_signal& s);

// POLL_REGMEM until signal >= value, retrying forever (AMDCopyQueue.wait: retry count 0xFFF).
inline constexpr std::size_t sdma_wait_dwords = sdma::poll_regmem_dwords;
inline constexpr std::size_t sdma_wait_value_dword = 3;  // DW3 reference (sdma_v6_0_ring_emit_pipeline_sync)
void emit_wait_signal_sdma(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value);

}  // namespace tg::queue
