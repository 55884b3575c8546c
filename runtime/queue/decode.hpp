// decode.hpp: readable dumps of PM4 and SDMA packet streams, for logs and test failures.
//
// One line per packet, starting with the dword index; SET_SH_REG / SET_UCONFIG_REG add one line
// per register with its fields decoded through the register tables. Decoding never throws on bad
// input: an unknown or truncated packet is reported and ends the dump.
//
//   tg::queue::cmd_buffer cb;
//   tg::queue::pm4::emit_event_write(cb, tg::queue::pm4::CS_PARTIAL_FLUSH, 4);
//   std::string text = tg::queue::decode_pm4(cb, tg::queue::pm4::gfx_version::gfx11);
//   // "[0000] EVENT_WRITE event=CS_PARTIAL_FLUSH(0x07) index=4\n"
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "runtime/queue/pm4.hpp"
#include "runtime/queue/reg_table.hpp"

namespace tg::queue {

// `regs` names the registers of SET_SH_REG, SET_UCONFIG_REG and register WAIT_REG_MEMs; by
// default the queue-writable table of `gfx` (pm4::queue_regs). A driver may pass the full GC
// table of drivers/amd/regs. Indices map to (segment, offset) through pm4::gc_bases.
std::string decode_pm4(std::span<const std::uint32_t> words, pm4::gfx_version gfx,
                       const reg_table* regs = nullptr);

// SDMA 6/7 stream; packets as in sdma_gen.hpp.
std::string decode_sdma(std::span<const std::uint32_t> words);

}  // namespace tg::queue
