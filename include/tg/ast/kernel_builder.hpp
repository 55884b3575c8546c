// kernel_builder.hpp: writing a kernel AST by hand, the escape hatch for kernels the
// expression DSL does not express well (quantized matvec, fused attention). It makes the
// same ast::node list as tg::lower, so it goes through the same codegen.
//
//   tg::kernel_builder kb;
//   auto i = kb.output_range(64);                       // output loops first
//   auto k = kb.reduce_range(32);
//   auto dot = kb.sum(kb.load<float>(1, i * 32 + k) * kb.load<float>(2, k), k);
//   kb.store(0, i, dot);
//   tg::ast::kernel kernel = kb.finish();
#pragma once
#include <optional>
#include <vector>
#include <tg/core/error.hpp>
#include <tg/ast/builder.hpp>

namespace tg {
namespace ast {

// A kernel outside a plan: its nodes, its output loops, and how many buffer slots it uses.
struct kernel {
  std::vector<node> nodes;
  int global_ranges = 0;
  int slot_count = 0;
  // Optional loop shape chosen by the kernel's author instead of the default heuristic:
  // per output range, how many iterations one loop step covers (register lanes), and
  // whether the innermost such range becomes a vector (false: lanes stay scalar, and the
  // reduce inside is vectorized instead). The caller guarantees each bound divides.
  std::vector<int> upcast;
  bool vector_lanes = true;
  // With upcast, on a CPU: the last output range in panels of this many values (a multiple of
  // its upcast), each swept over every row before the next; 0: none.
  int panel = 0;
  bool operator==(const kernel&) const = default;
};

}  // namespace ast

class kernel_builder;

// A value in a kernel being built; the operators add nodes.
struct kvalue {
  kernel_builder* kb = nullptr;
  int id = ast::none;
};

class kernel_builder {
 public:
  // Output loops, outermost first; all of them before any reduce range.
  constexpr kvalue output_range(std::int64_t bound) { return output_range(index(bound)); }
  constexpr kvalue output_range(kvalue bound) {
    if (reduce_ranges_ > 0) throw usage_error("kernel_builder: create every output range before the reduce ranges");
    ++output_ranges_;
    return wrap(b_.range(bound.id));
  }
  constexpr kvalue reduce_range(std::int64_t bound) { return reduce_range(index(bound)); }
  constexpr kvalue reduce_range(kvalue bound) {
    ++reduce_ranges_;
    return wrap(b_.range(bound.id));
  }
  // A symbolic variable, by its index in the launch's variable values.
  constexpr kvalue variable(int index) { return wrap(b_.variable(index)); }
  constexpr kvalue index(std::int64_t v) { return wrap(b_.index_const(v)); }
  constexpr kvalue constant(dtype dt, double v) { return wrap(b_.constant(dt, v)); }
  template <class T> constexpr kvalue constant(T v) { return constant(dtype_of<T>, double(v)); }

  constexpr kvalue load(int slot, dtype dt, kvalue index, kvalue valid = {}) {
    use_slot(slot);
    return wrap(b_.load(slot, dt, index.id, valid.id));
  }
  template <class T> constexpr kvalue load(int slot, kvalue index) { return load(slot, dtype_of<T>, index); }
  constexpr void store(int slot, kvalue index, kvalue value) {
    use_slot(slot);
    b_.store(slot, index.id, value.id);
  }
  // `value`, once the cache line holding byte `byte_index` of buffer `slot` has been asked
  // for: a streaming kernel names a byte some way ahead of what it reads now, so that memory
  // works on it while this step computes (ast::op::prefetch). Only a hint; the byte may lie
  // past the end of the buffer.
  constexpr kvalue prefetch(int slot, kvalue byte_index, kvalue value) {
    use_slot(slot);
    return wrap(b_.prefetch(slot, byte_index.id, value.id));
  }
  constexpr kvalue sum(kvalue v, kvalue over) { return wrap(b_.reduce(ast::op::reduce_sum, v.id, over.id)); }
  // sum(v, over) for a symbolic `over` the kernel is meant for only once it runs long
  // (ast::reduce_long_walk: a schedule hint, the same sum).
  constexpr kvalue sum_long_walk(kvalue v, kvalue over) {
    return wrap(b_.reduce(ast::op::reduce_sum, v.id, over.id, ast::reduce_long_walk));
  }
  constexpr kvalue max(kvalue v, kvalue over) { return wrap(b_.reduce(ast::op::reduce_max, v.id, over.id)); }
  // sum(v, over) with `over` evaluated as vector lanes (ast::reduce_as_lanes): for a short
  // constant range reduced outside longer ones, so their accumulators stay vectors.
  constexpr kvalue sum_lanes(kvalue v, kvalue over) {
    return wrap(b_.reduce(ast::op::reduce_sum, v.id, over.id, ast::reduce_as_lanes));
  }

  constexpr kvalue unary(ast::op o, kvalue a) { return wrap(b_.unary(o, a.id)); }
  constexpr kvalue binary(ast::op o, kvalue a, kvalue c) { return wrap(b_.binary(o, a.id, c.id)); }
  constexpr kvalue cast(dtype dt, kvalue a) { return wrap(b_.cast(dt, a.id)); }
  constexpr kvalue bitcast(dtype dt, kvalue a) { return wrap(b_.bitcast(dt, a.id)); }
  constexpr kvalue where(kvalue c, kvalue a, kvalue d) { return wrap(b_.where(c.id, a.id, d.id)); }
  constexpr kvalue exp2(kvalue a) { return unary(ast::op::exp2, a); }
  constexpr kvalue maximum(kvalue a, kvalue c) { return binary(ast::op::max, a, c); }

  constexpr dtype dtype_of_value(kvalue v) const { return b_.nodes[std::size_t(v.id)].dt; }
  // v's value when it is an integer constant (index(3), say): lets a builder pick a form.
  constexpr std::optional<std::int64_t> constant_index(kvalue v) const {
    const ast::node& x = b_.nodes[std::size_t(v.id)];
    if (x.o != ast::op::constant || is_float(x.dt)) return std::nullopt;
    return x.arg;
  }
  // A constant of v's dtype, for the operators below.
  constexpr kvalue like(kvalue v, double c) {
    dtype dt = dtype_of_value(v);
    return is_float(dt) ? constant(dt, c) : wrap(b_.constant_int(dt, std::int64_t(c)));
  }

  constexpr ast::kernel finish() {
    ast::kernel k;
    k.nodes = b_.nodes;
    k.global_ranges = output_ranges_;
    k.slot_count = slots_;
    return k;
  }

 private:
  constexpr kvalue wrap(int id) { return {this, id}; }
  constexpr void use_slot(int slot) {
    if (slot < 0 || slot >= 64) throw usage_error("kernel_builder: buffer slots are 0..63");
    if (slot + 1 > slots_) slots_ = slot + 1;
  }
  ast::builder b_;
  int output_ranges_ = 0, reduce_ranges_ = 0, slots_ = 0;
};

#define TG_KVALUE_BINARY(OP, AST_OP)                                                         \
  constexpr kvalue operator OP(kvalue a, kvalue b) { return a.kb->binary(ast::op::AST_OP, a, b); } \
  constexpr kvalue operator OP(kvalue a, double b) { return a.kb->binary(ast::op::AST_OP, a, a.kb->like(a, b)); } \
  constexpr kvalue operator OP(double a, kvalue b) { return b.kb->binary(ast::op::AST_OP, b.kb->like(b, a), b); }
TG_KVALUE_BINARY(+, add)
TG_KVALUE_BINARY(-, sub)
TG_KVALUE_BINARY(*, mul)
TG_KVALUE_BINARY(<, cmplt)
TG_KVALUE_BINARY(&, bit_and)
TG_KVALUE_BINARY(|, bit_or)
TG_KVALUE_BINARY(^, bit_xor)
TG_KVALUE_BINARY(<<, shl)
TG_KVALUE_BINARY(>>, shr)
TG_KVALUE_BINARY(%, mod)
#undef TG_KVALUE_BINARY
// Division: idiv on integers (rounds toward zero), div on floats.
constexpr kvalue operator/(kvalue a, kvalue b) {
  return a.kb->binary(is_float(a.kb->dtype_of_value(a)) ? ast::op::div : ast::op::idiv, a, b);
}
constexpr kvalue operator/(kvalue a, double b) { return a / a.kb->like(a, b); }
constexpr kvalue operator-(kvalue a) { return a.kb->unary(ast::op::neg, a); }

}  // namespace tg
