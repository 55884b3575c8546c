// emit_signal.hpp: the PM4 and SDMA packets that raise, timestamp and wait on a gpu_signal.
//
// Packet forms follow the reference's AM path (tinygrad/runtime/ops_amd.py: AMDComputeQueue; nvd.h): a PM4 signal is an
// end-of-pipe RELEASE_MEM with the cache flush (0x0070F514) writing 32 bits and no interrupt; an
// SDMA signal is an uncached FENCE. Values are 32 bits on the GPU (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
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
inline constexpr std::size_t pm4_signal_value_dword = 5;  // DW5 data low (tinygrad/runtime/ops_amd.py: AMDComputeQueue; nvd.h)
void emit_signal_pm4(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value);

// RELEASE_MEM DATA_SEL 3: the 64-bit GPU clock to the signal's timestamp (tinygrad/runtime/ops_amd.py: AMDComputeQueue; nvd.h).
void emit_timestamp_pm4(cmd_buffer& cb, const gpu_signal& s);

// WAIT_REG_MEM until signal >= value (function GEQ, mask all ones, poll interval 4: tinygrad/runtime/ops_amd.py: AMDComputeQueue; nvd.h).
inline constexpr std::size_t pm4_wait_dwords = pm4::wait_reg_mem_dwords;
inline constexpr std::size_t pm4_wait_value_dword = 4;  // DW4 reference (tinygrad/runtime/ops_amd.py: AMDComputeQueue; nvd.h)
void emit_wait_signal_pm4(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value);

// FENCE: signal = value, uncached (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c).
inline constexpr std::size_t sdma_signal_dwords = sdma::fence_dwords;
inline constexpr std::size_t sdma_signal_value_dword = 3;  // DW3 data (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c)
void emit_signal_sdma(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value);

// TIMESTAMP GET_GLOBAL to the signal's timestamp (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c).
void emit_timestamp_sdma(cmd_buffer& cb, const gpu_signal& s);

// POLL_REGMEM until signal >= value, retrying forever (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c).
inline constexpr std::size_t sdma_wait_dwords = sdma::poll_regmem_dwords;
inline constexpr std::size_t sdma_wait_value_dword = 3;  // DW3 reference (tinygrad/runtime/ops_amd.py: AMDCopyQueue; sdma_v6_0.c)
void emit_wait_signal_sdma(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value);

}  // namespace tg::queue
