// valu_operands.hpp: per-lane VALU source reads with the VOP3 modifiers (abs, neg, opsel), DPP lane
// selection, denormal flushing, and the result modifiers (clamp, omod). Internal to the executors.
#pragma once
#include <cmath>

#include "drivers/emu/shader/executor.hpp"
#include "drivers/emu/shader/float_bits.hpp"

namespace tg::emu::shader {

// The lane each lane's src0 comes from under DPP16 / DPP8 (RDNA3 ISA guide, "DPP16" and "DPP8"), or
// -1 when that lane is out of its row (then bound_ctrl decides: 0 is read, or the lane is not written).
int dpp_source_lane(const dpp_control& d, unsigned lane);

class valu_operands {
 public:
  valu_operands(const exec_context& c, const wave& w, const instruction& in) : c_(c), w_(w), in_(in) {
    if (in.has_dpp) prepare_dpp();
  }

  // Lanes to write: EXEC, less DPP row/bank masks and lanes with no source.
  std::uint32_t write_mask() const { return w_.exec() & dpp_mask_; }

  std::uint32_t u32(unsigned i, unsigned lane, operand_type t = operand_type::b32) const {
    const unsigned code = in_.srcs[i];
    if (code >= src::vgpr0) return w_.v(code - src::vgpr0, i == 0 ? src_lane(lane) : lane) & zero_mask(i, lane);
    return scalar_source(w_, in_, code, t);
  }
  std::uint64_t u64(unsigned i, unsigned lane, operand_type t = operand_type::b64) const {
    const unsigned code = in_.srcs[i];
    if (code >= src::vgpr0) {
      const unsigned r = code - src::vgpr0, l = i == 0 ? src_lane(lane) : lane;
      return (std::uint64_t{w_.v(r + 1, l)} << 32 | w_.v(r, l)) & zero_mask(i, lane);
    }
    return scalar_source64(w_, in_, code, t);
  }
  float f32(unsigned i, unsigned lane) const {
    float f = as_f32(u32(i, lane, operand_type::f32));
    if (c_.mode.denorm32 == 0 || c_.mode.denorm32 == 2) f = flush(f);
    if ((in_.abs >> i) & 1) f = std::fabs(f);
    if ((in_.neg >> i) & 1) f = -f;
    return f;
  }
  double f64(unsigned i, unsigned lane) const {
    double f = as_f64(u64(i, lane, operand_type::f64));
    if ((in_.abs >> i) & 1) f = std::fabs(f);
    if ((in_.neg >> i) & 1) f = -f;
    return f;
  }
  // A 16-bit source: the half opsel[i] selects (VOP3), or the low half.
  std::uint16_t u16(unsigned i, unsigned lane, operand_type t = operand_type::b32) const {
    const std::uint32_t v = u32(i, lane, t);
    return std::uint16_t(((in_.opsel >> i) & 1) ? v >> 16 : v);
  }
  float f16(unsigned i, unsigned lane) const {
    float f = f16_to_f32(u16(i, lane, operand_type::f16));
    if ((in_.abs >> i) & 1) f = std::fabs(f);
    if ((in_.neg >> i) & 1) f = -f;
    return f;
  }

  float out_f32(float r) const { return clamp_omod(r, c_.mode.denorm32 == 0 || c_.mode.denorm32 == 1); }
  double out_f64(double r) const {
    if (in_.omod == 1) r *= 2; else if (in_.omod == 2) r *= 4; else if (in_.omod == 3) r *= 0.5;
    if (in_.clamp) r = std::isnan(r) ? 0.0 : std::fmin(std::fmax(r, 0.0), 1.0);
    return r;
  }
  float out_f16(float r) const { return clamp_omod(r, false); }

 private:
  static float flush(float f) { return is_denormal(f) ? std::copysign(0.0f, f) : f; }
  float clamp_omod(float r, bool flush_out) const {
    if (in_.omod == 1) r *= 2; else if (in_.omod == 2) r *= 4; else if (in_.omod == 3) r *= 0.5f;
    if (in_.clamp) r = std::isnan(r) ? 0.0f : std::fmin(std::fmax(r, 0.0f), 1.0f);
    return flush_out ? flush(r) : r;
  }
  unsigned src_lane(unsigned lane) const { return in_.has_dpp ? dpp_lane_[lane] : lane; }
  std::uint64_t zero_mask(unsigned i, unsigned lane) const {
    return (i == 0 && ((dpp_zero_ >> lane) & 1)) ? 0 : ~std::uint64_t{0};
  }
  void prepare_dpp();

  const exec_context& c_;
  const wave& w_;
  const instruction& in_;
  std::array<std::uint8_t, wave_lanes> dpp_lane_{};
  std::uint32_t dpp_mask_ = ~0u, dpp_zero_ = 0;
};

}  // namespace tg::emu::shader
