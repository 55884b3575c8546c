// layer_plans.cpp: the plans of layer_plans.hpp. Each is one kernel (so that the transformer
// can share its result, the norm's scale say, between readers), over symbolic dims: one
// compile-time plan serves every model, bind_kernels folds a model's widths in as numbers.
#include "llm/model/layer_plans.hpp"

#include <tg/tg.hpp>
#include <tg/core/error.hpp>

#include "llm/model/launch_vars.hpp"

namespace tg::model {
namespace {

constexpr auto T = tg::sym<"T", 1, 1 << 16>;
constexpr auto heads = tg::sym<"heads", 1, 1 << 12>;
constexpr auto width = tg::sym<"width", 1, 1 << 20>;
constexpr auto blocks = tg::sym<"blocks", 1, 1 << 16>;
constexpr auto half = tg::sym<"half", 1, 1 << 12>;

// --- RMSNorm: the per-row scale, then x * s * w ---
constexpr auto norm_x = tg::input<float>("x", tg::dims<T, heads, width>);
constexpr auto rms_scale_plan = tg::lower(tg::rms_scale(norm_x, tg::scalar_input<float>("eps")));
constexpr auto rms_apply_plan =
    tg::lower(norm_x * tg::input<float>("s", tg::dims<T, heads, 1>) * tg::input<float>("w", tg::dims<width>));

// --- 8-bit rounding in blocks of B (activation_kernels.hpp, whose kernels these match op for op) ---
template <class V>
constexpr auto round_scale(const V& v) {  // v: [T][blocks][B]
  return tg::max(tg::maximum(v, -v), tg::axis<-1>, tg::keepdim) * (1.0 / 127.0);
}
template <class Stored, class V, class S>
constexpr auto round_values(const V& v, const S& xs) {
  auto q = v * tg::where(0.0f < xs, tg::reciprocal(xs), 0.0f);
  auto half_away = tg::where(q < 0.0f, tg::constant<dtype::float32, decltype(q)::shape>(-0.5), 0.5f);
  return tg::cast<Stored>(tg::cast<std::int32_t>(q + half_away));
}
template <std::int64_t B> constexpr auto xs_in = tg::input<float>("xs", tg::dims<T, blocks, 1>);

template <std::int64_t B>
constexpr auto normed_blocks() {
  return tg::input<float>("x", tg::dims<T, blocks, B>) * tg::input<float>("s", tg::dims<T, 1, 1>) *
         tg::input<float>("w", tg::dims<blocks, B>);
}
template <std::int64_t B> constexpr auto norm_round_scale_plan = tg::lower(round_scale(normed_blocks<B>()));
template <std::int64_t B, class Stored = std::int16_t>
constexpr auto norm_round_plan = tg::lower(round_values<Stored>(normed_blocks<B>(), xs_in<B>));

// SwiGLU's output likewise, recomputed in both kernels rather than stored.
template <std::int64_t B>
constexpr auto swiglu_blocks() {
  return tg::silu(tg::input<float>("g", tg::dims<T, blocks, B>)) * tg::input<float>("u", tg::dims<T, blocks, B>);
}
template <std::int64_t B> constexpr auto swiglu_round_scale_plan = tg::lower(round_scale(swiglu_blocks<B>()));
template <std::int64_t B>
constexpr auto swiglu_round_plan = tg::lower(round_values<std::int8_t>(swiglu_blocks<B>(), xs_in<B>));

// --- SwiGLU ---
constexpr auto swiglu_plan = tg::lower(tg::silu(tg::input<float>("g", tg::dims<T, width>)) *
                                       tg::input<float>("u", tg::dims<T, width>));

// --- RoPE: NORM rotates pairs (2i, 2i+1), so x is viewed as [T][heads][half][2]; NEOX
// rotates (i, i + half): [T][heads][2][half]. The rotated halves are put back together by
// padding each with zeros where the other goes and adding.
template <bool Neox, bool Normed>
constexpr auto rope_expr() {
  constexpr auto pairs = [] {
    if constexpr (Neox) return tg::dims<T, heads, 2, half>;
    else return tg::dims<T, heads, half, 2>;
  }();
  auto x = [&] {
    auto in = tg::input<float>("x", pairs);
    if constexpr (!Normed) return in;
    else if constexpr (Neox) return in * tg::input<float>("s", tg::dims<T, heads, 1, 1>) * tg::input<float>("w", tg::dims<2, half>);
    else return in * tg::input<float>("s", tg::dims<T, heads, 1, 1>) * tg::input<float>("w", tg::dims<half, 2>);
  }();
  auto table = [](const char* name) {
    auto t = tg::input<float>(name, tg::dims<T, half>);
    if constexpr (Neox) return t.reshape(tg::dims<T, 1, 1, half>);
    else return t.reshape(tg::dims<T, 1, half, 1>);
  };
  auto cos = table("cos"), sin = table("sin");
  if constexpr (Neox) {
    auto x0 = x.shrink(tg::begin<0, 0, 0, 0>, tg::end<T, heads, 1, half>);
    auto x1 = x.shrink(tg::begin<0, 0, 1, 0>, tg::end<T, heads, 2, half>);
    return (x0 * cos - x1 * sin).pad(tg::before<0, 0, 0, 0>, tg::after<0, 0, 1, 0>) +
           (x1 * cos + x0 * sin).pad(tg::before<0, 0, 1, 0>, tg::after<0, 0, 0, 0>);
  } else {
    auto x0 = x.shrink(tg::begin<0, 0, 0, 0>, tg::end<T, heads, half, 1>);
    auto x1 = x.shrink(tg::begin<0, 0, 0, 1>, tg::end<T, heads, half, 2>);
    return (x0 * cos - x1 * sin).pad(tg::before<0, 0, 0, 0>, tg::after<0, 0, 0, 1>) +
           (x1 * cos + x0 * sin).pad(tg::before<0, 0, 0, 1>, tg::after<0, 0, 0, 0>);
  }
}
template <bool Neox, bool Normed> constexpr auto rope_plan = tg::lower(rope_expr<Neox, Normed>());

static_assert(rms_scale_plan.kernel_count() == 1 && rms_apply_plan.kernel_count() == 1);
static_assert(norm_round_scale_plan<32>.kernel_count() == 1 && norm_round_plan<256>.kernel_count() == 1);
static_assert(swiglu_plan.kernel_count() == 1);
static_assert(swiglu_round_scale_plan<256>.kernel_count() == 1 && swiglu_round_plan<32>.kernel_count() == 1);
static_assert(rope_plan<false, true>.kernel_count() == 1 && rope_plan<true, true>.kernel_count() == 1,
              "RoPE: one kernel, its halves fused");

var_bind tokens(std::int64_t chunk) { return {"T", chunk, var_tokens}; }

std::int64_t blocks_of(std::int64_t width, std::int64_t block) {
  if ((block != 32 && block != 256) || width % block != 0)
    throw usage_error(str("layer plans: blocks of ", block, " values over rows of ", width, " (32 or 256, dividing the row)"));
  return width / block;
}


}  // namespace

plan_op rms_scale_op(device& dev, std::int64_t chunk, std::int64_t h, std::int64_t w) {
  return {dev, rms_scale_plan.view(), {tokens(chunk), {"heads", h}, {"width", w}}};
}
plan_op rms_apply_op(device& dev, std::int64_t chunk, std::int64_t h, std::int64_t w) {
  return {dev, rms_apply_plan.view(), {tokens(chunk), {"heads", h}, {"width", w}}};
}

// A rounding plan in blocks of `block` values (32 or 256) over rows `w` wide: pick(B) gives the
// plan for blocks of B.
template <class Pick>
plan_op by_block(device& dev, std::int64_t chunk, std::int64_t w, std::int64_t block, Pick pick) {
  const std::int64_t n = blocks_of(w, block);
  const plan_view plan = block == 32 ? pick(std::integral_constant<std::int64_t, 32>{})
                                     : pick(std::integral_constant<std::int64_t, 256>{});
  return plan_op(dev, plan, {tokens(chunk), {"blocks", n}});
}

plan_op norm_round_scale_op(device& dev, std::int64_t chunk, std::int64_t w, std::int64_t block) {
  return by_block(dev, chunk, w, block, [](auto b) { return norm_round_scale_plan<b.value>.view(); });
}
plan_op norm_round_op(device& dev, std::int64_t chunk, std::int64_t w, std::int64_t block, bool bytes) {
  return by_block(dev, chunk, w, block, [bytes](auto b) {
    return bytes ? norm_round_plan<b.value, std::int8_t>.view() : norm_round_plan<b.value>.view();
  });
}
plan_op swiglu_round_scale_op(device& dev, std::int64_t chunk, std::int64_t w, std::int64_t block) {
  return by_block(dev, chunk, w, block, [](auto b) { return swiglu_round_scale_plan<b.value>.view(); });
}
plan_op swiglu_round_op(device& dev, std::int64_t chunk, std::int64_t w, std::int64_t block) {
  return by_block(dev, chunk, w, block, [](auto b) { return swiglu_round_plan<b.value>.view(); });
}

plan_op swiglu_op(device& dev, std::int64_t chunk, std::int64_t w) {
  return {dev, swiglu_plan.view(), {tokens(chunk), {"width", w}}};
}

plan_op rope_op(device& dev, std::int64_t chunk, std::int64_t h, std::int64_t head_dim, rope_style style, bool normed) {
  if (head_dim % 2 != 0) throw usage_error(str("rope_op: head size ", head_dim, " is odd"));
  const std::initializer_list<var_bind> vars = {tokens(chunk), {"heads", h}, {"half", head_dim / 2}};
  const bool neox = style == rope_style::neox;
  if (neox) return normed ? plan_op(dev, rope_plan<true, true>.view(), vars) : plan_op(dev, rope_plan<true, false>.view(), vars);
  return normed ? plan_op(dev, rope_plan<false, true>.view(), vars) : plan_op(dev, rope_plan<false, false>.view(), vars);
}

}  // namespace tg::model
