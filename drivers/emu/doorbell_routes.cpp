// doorbell_routes.cpp: the S2A doorbell entries as routes (see doorbell_routes.hpp).
#include "drivers/emu/doorbell_routes.hpp"

namespace tg::emu {

namespace {

struct entry {
  bool enable;
  std::uint32_t awid, range_offset, range_size, awaddr;
};

entry decode(std::uint32_t v) {
  return {(v & 1) != 0, v >> 1 & 0x1F, v >> 7 & 0x3FF, v >> 17 & 0xFF, v >> 28};
}

constexpr std::uint32_t sdma_awid = 0xE, gc_awid_port0 = 0x3, gc_awid_port3 = 0x6, engine_awaddr = 0x3;

bool sdma_claims(const entry& e, std::uint64_t dword) {
  return e.enable && e.awid == sdma_awid && e.awaddr == engine_awaddr && dword >= e.range_offset &&
         dword < std::uint64_t{e.range_offset} + e.range_size;
}

}  // namespace

bool doorbell_reaches(const gpu_core& core, engine_id engine, std::uint64_t byte_offset) {
  const nbio_registers& nb = core.chip.nbio_reg;
  auto at = [&](int n) { return decode(core.regs.peek(nb.s2a_entry[n])); };
  const std::uint64_t dword = byte_offset / 4;
  const bool to_sdma = sdma_claims(at(2), dword);
  if (engine == engine_id::sdma) return to_sdma;
  if (to_sdma) return false;
  const entry p0 = at(0), p3 = at(3);
  return (p0.enable && p0.awid == gc_awid_port0 && p0.awaddr == engine_awaddr) ||
         (p3.enable && p3.awid == gc_awid_port3 && p3.awaddr == engine_awaddr);
}

}  // namespace tg::emu
