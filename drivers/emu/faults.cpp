// faults.cpp: one readable line per fault (see faults.hpp).
#include "drivers/emu/faults.hpp"

#include <tg/core/error.hpp>

namespace tg::emu {

namespace {

const char* kind_name(fault_kind k) {
  switch (k) {
    case fault_kind::page_fault: return "page fault";
    case fault_kind::bad_packet: return "bad packet";
    case fault_kind::shader_error: return "shader error";
    case fault_kind::bad_queue_setup: return "bad queue setup";
    case fault_kind::protocol: return "ring protocol violation";
  }
  return "fault";
}

}  // namespace

std::string describe(const fault_record& f) {
  const char* engine = f.engine == engine_id::compute ? "compute queue" : "sdma queue";
  return str("emu: ", engine, ' ', f.queue, ": ", kind_name(f.kind), " at ", f.in_ib ? "IB" : "ring", " offset ",
             hex{f.stream_offset}, " (VA ", f.packet_va, ", header ", hex{f.header}, "): ", f.message);
}

}  // namespace tg::emu
