// wave.hpp: the state of one wave32 and of its workgroup, and reading operands the way the
// hardware decodes source codes (AMD RDNA3 ISA reference guide, "Scalar ALU Operands" and "Vector
// ALU Operands"; RDNA4 is the same for the codes used here).
//
// SGPRs, VCC (106/107), TTMPs (108-123), M0 (125) and EXEC (126/127) share one array indexed by
// operand code, so an instruction that names `exec_lo` or `vcc_lo` as any other SGPR needs no special
// case. NULL (124) reads 0 and discards writes. Wave32 only: EXEC_HI and VCC_HI are plain registers.
#pragma once
#include <array>
#include <bit>
#include <cstdint>
#include <deque>
#include <vector>

#include "drivers/emu/shader/decoder.hpp"
#include "runtime/memory/address.hpp"

namespace tg::emu::shader {

using memory::gpu_va;

inline constexpr unsigned wave_lanes = 32;
inline constexpr unsigned vgpr_count = 256;

// Apertures that flat addresses and src_shared_base / src_private_base report. The hardware values are
// programmed by the driver (SH_MEM_BASES); these are the emulator's, outside the 48-bit VA space
// the page tables map, so a flat access can never be mistaken for one of them.
inline constexpr std::uint64_t shared_aperture = std::uint64_t{0x1000'0000'0000'0000};
inline constexpr std::uint64_t private_aperture = std::uint64_t{0x2000'0000'0000'0000};
inline constexpr std::uint64_t aperture_bytes = std::uint64_t{1} << 32;

struct wave {
  std::array<std::uint32_t, 128> sgpr{};
  std::vector<std::uint32_t> vgpr = std::vector<std::uint32_t>(vgpr_count * wave_lanes);  // [reg][lane]
  bool scc = false;
  std::uint64_t pc = 0;
  bool ended = false, at_barrier = false;
  bool barrier_signalled = false;  // arrived at the current barrier, not yet past its wait
  std::uint64_t barrier_seen = 0;  // the workgroup's barrier generation when it arrived
  unsigned index = 0;            // in the workgroup
  std::uint64_t scratch_base = 0;  // this wave's private segment (lane-major, see exec_memory.cpp)
  std::uint32_t scratch_lane_bytes = 0;
  std::uint64_t instructions = 0;
  // For the cost model (interpreter.hpp: dispatch_counters::memory_waits): the waits that cost the
  // wave a memory latency it could not hide. Loads complete at once here; only their order is
  // kept: for each vector load in flight (oldest first, as vmcnt counts them), the number of
  // such waits before it was issued. A wait costs a latency when it must retire a load issued
  // after the last costly wait; loads issued together before that wait were in flight during
  // its latency and arrive with it (four loads then four waits cost one latency, not four).
  std::deque<std::uint64_t> loads_in_flight;
  std::uint64_t memory_waits = 0;
  void note_load() { loads_in_flight.push_back(memory_waits); }
  void note_load_wait(std::uint32_t allowed) {
    bool new_latency = false;
    while (loads_in_flight.size() > allowed) {
      new_latency = new_latency || loads_in_flight.front() == memory_waits;
      loads_in_flight.pop_front();
    }
    if (new_latency) ++memory_waits;
  }

  std::uint32_t& v(unsigned reg, unsigned lane) { return vgpr[(reg & 0xFF) * wave_lanes + lane]; }
  std::uint32_t v(unsigned reg, unsigned lane) const { return vgpr[(reg & 0xFF) * wave_lanes + lane]; }
  std::uint32_t exec() const { return sgpr[src::exec_lo]; }
  std::uint32_t vcc() const { return sgpr[src::vcc_lo]; }
  bool active(unsigned lane) const { return (exec() >> lane) & 1; }
  void write_sgpr(unsigned code, std::uint32_t value) {
    if (code < 128 && code != src::null) sgpr[code] = value;
  }
  void write_sgpr64(unsigned code, std::uint64_t value) {
    write_sgpr(code, std::uint32_t(value));
    if (code != src::null) write_sgpr(code + 1, std::uint32_t(value >> 32));
  }
};

// How an operand is typed: integer inline constants are the same for every type, float ones are
// the constant in the operand's own format (RDNA3 ISA guide, "Inline Constants"; 248 = 1/(2*pi)).
enum class operand_type : std::uint8_t { b32, f32, f16, b64, f64 };

inline std::uint64_t inline_constant(unsigned code, operand_type t) {
  if (code >= src::int_first && code <= 192) return code - 128;
  if (code >= 193 && code <= src::int_last) return std::uint64_t(-std::int64_t(code - 192));
  // 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0, 1/(2*pi)
  static constexpr std::uint32_t f32[] = {0x3F000000, 0xBF000000, 0x3F800000, 0xBF800000, 0x40000000,
                                          0xC0000000, 0x40800000, 0xC0800000, 0x3E22F983};
  static constexpr std::uint16_t f16[] = {0x3800, 0xB800, 0x3C00, 0xBC00, 0x4000, 0xC000, 0x4400, 0xC400, 0x3118};
  static constexpr std::uint64_t f64[] = {0x3FE0000000000000, 0xBFE0000000000000, 0x3FF0000000000000,
                                          0xBFF0000000000000, 0x4000000000000000, 0xC000000000000000,
                                          0x4010000000000000, 0xC010000000000000, 0x3FC45F306DC9C882};
  const unsigned i = code - 240;
  switch (t) {
    case operand_type::f16: return f16[i];
    case operand_type::f64: return f64[i];
    case operand_type::b64: return f64[i];
    default: return f32[i];
  }
}

// A scalar (lane-independent) 32-bit source.
inline std::uint32_t scalar_source(const wave& w, const instruction& in, unsigned code,
                                   operand_type t = operand_type::b32) {
  if (code < 128) return code == src::null ? 0 : w.sgpr[code];
  if (code == src::literal) return in.literal;
  if (code == src::scc) return w.scc;
  if (code == src::shared_base) return std::uint32_t(shared_aperture >> 32);
  if (code == src::private_base) return std::uint32_t(private_aperture >> 32);
  if (code == src::shared_limit) return std::uint32_t((shared_aperture + aperture_bytes - 1) >> 32);
  if (code == src::private_limit) return std::uint32_t((private_aperture + aperture_bytes - 1) >> 32);
  return std::uint32_t(inline_constant(code, t));
}

// A 64-bit scalar source: an SGPR pair, a sign-extended integer constant, a typed float constant, or
// the literal (zero-extended for integers; the high half for f64, RDNA3 ISA guide "Literal Constants").
inline std::uint64_t scalar_source64(const wave& w, const instruction& in, unsigned code,
                                     operand_type t = operand_type::b64) {
  if (code < 128) return code == src::null ? 0 : (std::uint64_t{w.sgpr[(code + 1) & 127]} << 32 | w.sgpr[code]);
  if (code == src::literal) return t == operand_type::f64 ? std::uint64_t{in.literal} << 32 : in.literal;
  if (code == src::scc) return w.scc;
  if (code >= 235 && code <= 238) {
    const std::uint64_t base = code <= 236 ? shared_aperture : private_aperture;
    return (code & 1) ? base : base + aperture_bytes - 1;
  }
  return inline_constant(code, t == operand_type::f64 ? operand_type::f64 : operand_type::b64);
}

}  // namespace tg::emu::shader
