// ast_interpreter.hpp: a plain scalar interpreter of a kernel AST, the reference the JIT is
// tested against (differentially, as ggml's tests/test-backend-ops.cpp). Floats are computed in double and
// rounded to float32 after every op (16-bit floats are float32 in registers, as in the
// codegen, and rounded to their precision by casts and stores), integers in int64 wrapped to
// their width.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <tg/ast/eval.hpp>
#include <tg/ast/node.hpp>
#include <tg/core/error.hpp>
#include <vector>

namespace tg::test {

class ast_interpreter {
 public:
  ast_interpreter(std::span<const ast::node> nodes, std::vector<std::byte*> buffers, std::vector<std::int64_t> vars)
      : nodes_(nodes), bufs_(std::move(buffers)), vars_(std::move(vars)) {}

  void run() {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].o == ast::op::store) stores_.push_back(int(i));  // every store, in order, per element
    std::vector<int> globals;
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].o == ast::op::range && !is_reduce_range(int(i))) globals.push_back(int(i));
    loop(globals, 0);
  }

 private:
  bool is_reduce_range(int r) const {
    for (const ast::node& n : nodes_)
      if (ast::is_reduce(n.o) && n.src[1] == r) return true;
    return false;
  }
  void loop(const std::vector<int>& globals, std::size_t depth) {
    if (depth == globals.size()) {
      cache_.clear();
      for (int store : stores_) eval(store);
      return;
    }
    int r = globals[depth];
    std::int64_t bound = ast::eval_index(nodes_, nodes_[std::size_t(r)].src[0], vars_);
    for (std::int64_t i = 0; i < bound; ++i) {
      ranges_[r] = double(i);
      loop(globals, depth + 1);
    }
  }

  static double round_to(dtype t, double v) {
    switch (t) {
      case dtype::float32: return double(float(v));
      case dtype::float16: return double(float(half(float(v))));
      case dtype::bfloat16: return double(float(bfloat16(float(v))));
      case dtype::float64: return v;
      case dtype::bool_: return v != 0 ? 1 : 0;
      default: break;
    }
    std::int64_t i = std::int64_t(v);
    switch (t) {
      case dtype::int8: return double(std::int8_t(i));
      case dtype::uint8: return double(std::uint8_t(i));
      case dtype::int16: return double(std::int16_t(i));
      case dtype::uint16: return double(std::uint16_t(i));
      case dtype::int32: return double(std::int32_t(i));
      case dtype::uint32: return double(std::uint32_t(i));
      default: return double(i);
    }
  }

  // Arithmetic results: 16-bit floats stay float32 until a cast or a store.
  static double op_round(dtype t, double v) {
    if (t == dtype::float16 || t == dtype::bfloat16) return double(float(v));
    return round_to(t, v);
  }

  double read(dtype t, const std::byte* p) const {
    auto get = [p](auto v) { std::memcpy(&v, p, sizeof v); return v; };
    switch (t) {
      case dtype::bool_: return get(std::uint8_t{}) != 0;
      case dtype::int8: return get(std::int8_t{});
      case dtype::uint8: return get(std::uint8_t{});
      case dtype::int16: return get(std::int16_t{});
      case dtype::uint16: return get(std::uint16_t{});
      case dtype::int32: return get(std::int32_t{});
      case dtype::uint32: return get(std::uint32_t{});
      case dtype::int64: return double(get(std::int64_t{}));
      case dtype::float16: return double(float(half(get(half{}))));
      case dtype::bfloat16: return double(bfloat16::to_float(get(std::uint16_t{})));
      case dtype::float32: return get(float{});
      case dtype::float64: return get(double{});
    }
    return 0;
  }
  void write(dtype t, std::byte* p, double v) const {
    auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
    switch (t) {
      case dtype::bool_: put(std::uint8_t(v != 0)); break;
      case dtype::int8: put(std::int8_t(v)); break;
      case dtype::uint8: put(std::uint8_t(v)); break;
      case dtype::int16: put(std::int16_t(v)); break;
      case dtype::uint16: put(std::uint16_t(v)); break;
      case dtype::int32: put(std::int32_t(v)); break;
      case dtype::uint32: put(std::uint32_t(v)); break;
      case dtype::int64: put(std::int64_t(v)); break;
      case dtype::float16: put(half(float(v))); break;
      case dtype::bfloat16: put(bfloat16(float(v))); break;
      case dtype::float32: put(float(v)); break;
      case dtype::float64: put(v); break;
    }
  }

  double eval(int id) {
    const ast::node& n = nodes_[std::size_t(id)];
    if (n.o == ast::op::range) return ranges_.at(id);
    if (auto it = cache_.find(id); it != cache_.end()) return it->second;
    double v = compute(n);
    if (!ast::is_reduce(n.o) && n.o != ast::op::store) cache_[id] = v;
    return v;
  }

  double compute(const ast::node& n) {
    auto s = [&](int i) { return eval(n.src[i]); };
    dtype src_dt = n.src[0] >= 0 ? nodes_[std::size_t(n.src[0])].dt : n.dt;
    switch (n.o) {
      case ast::op::constant: return is_float(n.dt) ? round_to(n.dt, n.value) : double(n.arg);
      case ast::op::variable: return double(vars_[std::size_t(n.arg)]);
      case ast::op::load: {
        if (n.src[1] >= 0 && s(1) == 0) return 0;
        std::int64_t idx = std::int64_t(s(0));
        return read(n.dt, bufs_[std::size_t(n.arg)] + idx * size_bytes(n.dt));
      }
      case ast::op::prefetch: return s(1);  // a hint: only its value means anything
      case ast::op::store: {
        std::int64_t idx = std::int64_t(s(0));
        write(n.dt, bufs_[std::size_t(n.arg)] + idx * size_bytes(n.dt), s(1));
        return 0;
      }
      case ast::op::reduce_sum: case ast::op::reduce_max: {
        int r = n.src[1];
        std::int64_t bound = ast::eval_index(nodes_, nodes_[std::size_t(r)].src[0], vars_);
        double acc = n.o == ast::op::reduce_sum ? 0 : -INFINITY;
        if (n.o == ast::op::reduce_max && !is_float(n.dt)) acc = -9.2e18;
        auto saved = cache_;
        for (std::int64_t i = 0; i < bound; ++i) {
          ranges_[r] = double(i);
          cache_ = saved;  // values depending on the reduce range change every step
          double v = eval(n.src[0]);
          acc = n.o == ast::op::reduce_sum ? op_round(n.dt, acc + v) : (std::isnan(v) || std::isnan(acc) ? NAN : std::max(acc, v));
        }
        cache_ = saved;
        return acc;
      }
      case ast::op::neg: return op_round(n.dt, -s(0));
      case ast::op::exp2: return op_round(n.dt, std::exp2(s(0)));
      case ast::op::log2: return op_round(n.dt, std::log2(s(0)));
      case ast::op::sqrt: return op_round(n.dt, std::sqrt(s(0)));
      case ast::op::reciprocal: return op_round(n.dt, 1.0 / s(0));
      case ast::op::sin: return op_round(n.dt, std::sin(s(0)));
      case ast::op::cast: {
        double v = s(0);
        if (n.dt == dtype::bool_) return v != 0;
        if (!is_float(n.dt) && is_float(src_dt)) v = std::trunc(v);
        return round_to(n.dt, v);
      }
      case ast::op::add: return op_round(n.dt, s(0) + s(1));
      case ast::op::sub: return op_round(n.dt, s(0) - s(1));
      case ast::op::mul: return op_round(n.dt, s(0) * s(1));
      case ast::op::div: return is_float(n.dt) ? op_round(n.dt, s(0) / s(1)) : op_round(n.dt, std::trunc(s(0) / s(1)));
      case ast::op::idiv: return double(std::int64_t(s(0)) / std::int64_t(s(1)));
      case ast::op::mod: return double(std::int64_t(s(0)) % std::int64_t(s(1)));
      case ast::op::max: { double a = s(0), b = s(1); return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
      case ast::op::min: { double a = s(0), b = s(1); return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }
      case ast::op::cmplt: return s(0) < s(1);
      case ast::op::cmpeq: return s(0) == s(1);
      case ast::op::cmpne: return s(0) != s(1);
      case ast::op::bit_and: return double(std::int64_t(s(0)) & std::int64_t(s(1)));
      case ast::op::bit_or: return double(std::int64_t(s(0)) | std::int64_t(s(1)));
      case ast::op::bit_xor: return double(std::int64_t(s(0)) ^ std::int64_t(s(1)));
      case ast::op::shl: return op_round(n.dt, double(std::int64_t(s(0)) << std::int64_t(s(1))));
      case ast::op::shr: return double(std::int64_t(s(0)) >> std::int64_t(s(1)));
      case ast::op::where: return s(0) != 0 ? s(1) : s(2);
      case ast::op::mul_add: return op_round(n.dt, s(0) * s(1) + s(2));
      default: throw usage_error(str("ast_interpreter: ", ast::name(n.o), " is not supported"));
    }
  }

  std::span<const ast::node> nodes_;
  std::vector<std::byte*> bufs_;
  std::vector<std::int64_t> vars_;
  std::map<int, double> ranges_;
  std::map<int, double> cache_;
  std::vector<int> stores_;
};

}  // namespace tg::test
