// bind.hpp: a lowered plan's kernels as stand-alone ast::kernels, for code that launches them
// many times on its own buffers (a model's layers): variables fixed once (a model's widths,
// read from its file) are folded into the AST as numbers, the rest renumbered to the caller's
// launch variables, and each kernel says which plan buffer each of its slots is.
//
//   auto ks = tg::bind_kernels(plan.view(), {{"dim", 2048}, {"T", 32, var_tokens}});
//   prepared = cpu.prepare(ks[0].kernel);  // launch with buffers for ks[0].buffers
#pragma once
#include <span>
#include <string_view>
#include <vector>
#include <tg/ast/kernel_builder.hpp>
#include <tg/core/error.hpp>
#include <tg/lower/pipeline.hpp>

namespace tg {

// One plan variable: fixed to `value` (launch_index < 0), or left a variable read from the
// launch's values at launch_index, `value` then being the largest it takes (to size buffers).
struct var_bind {
  std::string_view name;
  std::int64_t value = 0;
  int launch_index = -1;
};

struct bound_kernel {
  ast::kernel kernel;
  std::vector<int> buffers;  // slot -> plan buffer id
};

namespace binding {

// Rebuilds nodes through ast::builder with variables replaced, so that what becomes constant
// folds the way a hand-written kernel's constants do (loop bounds, strides).
inline std::vector<ast::node> rebuild(std::span<const ast::node> nodes, std::span<const int> fixed_or_launch,
                                      std::span<const std::int64_t> values) {
  ast::builder b;
  std::vector<int> id(nodes.size(), ast::none);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const ast::node& n = nodes[i];
    auto s = [&](int k) { return n.src[k] < 0 ? int(ast::none) : id[std::size_t(n.src[k])]; };
    using ast::op;
    int r = ast::none;
    if (n.o == op::variable) {
      const int v = int(n.arg);
      r = fixed_or_launch[std::size_t(v)] < 0 ? b.index_const(values[std::size_t(v)]) : b.variable(fixed_or_launch[std::size_t(v)]);
    } else if (n.o == op::constant) {
      r = is_float(n.dt) ? b.constant(n.dt, n.value) : b.constant_int(n.dt, n.arg);
    } else if (n.o == op::range) {
      r = b.range(s(0));
    } else if (n.o == op::load) {
      r = b.load(int(n.arg), n.dt, s(0), s(1));
    } else if (n.o == op::store) {
      r = b.store(int(n.arg), s(0), s(1));
    } else if (n.o == op::prefetch) {
      r = b.prefetch(int(n.arg), s(0), s(1));
    } else if (n.o == op::cast) {
      r = b.cast(n.dt, s(0));
    } else if (n.o == op::bitcast) {
      r = b.bitcast(n.dt, s(0));
    } else if (ast::is_unary(n.o)) {
      r = b.unary(n.o, s(0));
    } else if (ast::is_binary(n.o)) {
      r = b.binary(n.o, s(0), s(1));
    } else if (n.o == op::where) {
      r = b.where(s(0), s(1), s(2));
    } else if (n.o == op::mul_add) {
      r = b.mul_add(s(0), s(1), s(2));
    } else if (ast::is_reduce(n.o)) {
      r = b.reduce(n.o, s(0), s(1), n.arg);
    } else {
      throw usage_error(str("bind_kernels: unknown op ", ast::name(n.o)));
    }
    id[i] = r;
  }
  return lowering::compact(b.nodes);
}

}  // namespace binding

// Every kernel of `plan`, in order. Throws usage_error when a plan variable has no binding,
// a binding names no plan variable, or a fixed value is outside the variable's range.
inline std::vector<bound_kernel> bind_kernels(const plan_view& plan, std::span<const var_bind> vars) {
  std::vector<int> launch(plan.vars.size(), -1);
  std::vector<std::int64_t> values(plan.vars.size(), 0);
  std::vector<bool> bound(plan.vars.size(), false);
  for (const var_bind& v : vars) {
    std::size_t i = 0;
    while (i < plan.vars.size() && plan.vars[i].name.view() != v.name) ++i;
    if (i == plan.vars.size()) throw usage_error(str("bind_kernels: the plan has no variable named '", v.name, "'"));
    if (v.launch_index < 0 && (v.value < plan.vars[i].lo || v.value > plan.vars[i].hi))
      throw usage_error(str("bind_kernels: '", v.name, "' = ", v.value, " is outside its range [", plan.vars[i].lo, ", ",
                            plan.vars[i].hi, "]"));
    launch[i] = v.launch_index;
    values[i] = v.value;
    bound[i] = true;
  }
  for (std::size_t i = 0; i < plan.vars.size(); ++i)
    if (!bound[i]) throw usage_error(str("bind_kernels: variable '", plan.vars[i].name.view(), "' is not bound"));
  std::vector<bound_kernel> out;
  for (std::size_t k = 0; k < plan.kernels.size(); ++k) {
    const kernel_info& info = plan.kernels[k];
    bound_kernel bk;
    bk.kernel.nodes = binding::rebuild(plan.kernel_nodes(int(k)), launch, values);
    bk.kernel.global_ranges = info.global_ranges;
    bk.kernel.slot_count = info.slot_count;
    bk.buffers.assign(info.slot_buffer, info.slot_buffer + info.slot_count);
    out.push_back(std::move(bk));
  }
  return out;
}
inline std::vector<bound_kernel> bind_kernels(const plan_view& plan, std::initializer_list<var_bind> vars) {
  return bind_kernels(plan, std::span<const var_bind>(vars.begin(), vars.size()));
}

// The element count of plan buffer `b` with every variable at its bound value (the largest,
// for launch variables): what to allocate for it.
inline std::int64_t bound_numel(const plan_view& plan, int b, std::span<const var_bind> vars) {
  std::vector<std::int64_t> values(plan.vars.size(), 0);
  for (const var_bind& v : vars)
    for (std::size_t i = 0; i < plan.vars.size(); ++i)
      if (plan.vars[i].name.view() == v.name) values[i] = v.value;
  const shape_t& s = plan.buffers[std::size_t(b)].shape;
  std::int64_t n = 1;
  for (int i = 0; i < s.rank; ++i) n *= s[i].value(plan.vars, values);
  return n;
}

}  // namespace tg
