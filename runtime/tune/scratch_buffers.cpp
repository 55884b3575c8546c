// scratch_buffers.cpp: slot sizes by interval arithmetic over the index expressions, and the fill.
#include "runtime/tune/scratch_buffers.hpp"

#include <algorithm>
#include <cstring>
#include <tg/core/dtype.hpp>

namespace tg::tune {
namespace {

struct interval {
  std::int64_t lo = 0, hi = 0;
};
using maybe = std::optional<interval>;

// Stand-ins larger than this in total are not made: an index bound that loose is not a real size.
constexpr std::size_t max_scratch_bytes = std::size_t(4) << 30;

maybe from_corners(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
  return interval{std::min({a, b, c, d}), std::max({a, b, c, d})};
}

maybe multiply(interval a, interval b) {
  std::int64_t p[4];
  if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) || __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
      __builtin_mul_overflow(a.hi, b.lo, &p[2]) || __builtin_mul_overflow(a.hi, b.hi, &p[3]))
    return std::nullopt;
  return from_corners(p[0], p[1], p[2], p[3]);
}

maybe add(interval a, interval b) {
  interval r;
  if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi)) return std::nullopt;
  return r;
}

// The value range of one node from its sources' ranges; nullopt for anything not integer arithmetic.
maybe bound_of(const ast::node& n, std::span<const maybe> iv, std::span<const std::int64_t> vars) {
  auto src = [&](int i) -> maybe { return n.src[i] == ast::none ? std::nullopt : iv[std::size_t(n.src[i])]; };
  using ast::op;
  if (n.o == op::constant) return is_float(n.dt) ? std::nullopt : maybe(interval{n.arg, n.arg});
  if (n.o == op::variable) {
    if (n.arg < 0 || std::size_t(n.arg) >= vars.size()) return std::nullopt;
    return interval{vars[std::size_t(n.arg)], vars[std::size_t(n.arg)]};
  }
  if (n.o == op::load) {
    if (is_float(n.dt)) return std::nullopt;
    return interval{0, n.dt == dtype::bool_ ? 1 : integer_fill_max};
  }
  if (ast::is_compare(n.o)) return interval{0, 1};
  if (n.o == op::where) {
    maybe a = src(1), b = src(2);
    if (!a || !b) return std::nullopt;
    return interval{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
  }
  if (n.o == op::prefetch) return src(1);
  maybe a = src(0);
  if (!a) return std::nullopt;
  switch (n.o) {
    case op::range: return interval{0, std::max<std::int64_t>(0, a->hi - 1)};
    case op::cast: return is_float(n.dt) ? std::nullopt : a;
    case op::neg: return interval{-a->hi, -a->lo};
    case op::reduce_max: return a;
    default: break;
  }
  maybe b = src(1);
  if (!b) return std::nullopt;
  switch (n.o) {
    case op::add: return add(*a, *b);
    case op::sub: return add(*a, interval{-b->hi, -b->lo});
    case op::mul: return multiply(*a, *b);
    case op::mul_add: {
      maybe p = multiply(*a, *b), c = src(2);
      return p && c ? add(*p, *c) : std::nullopt;
    }
    case op::idiv:  // monotonic in each argument while the divisor keeps one sign
      if (b->lo > 0 || b->hi < 0) return from_corners(a->lo / b->lo, a->lo / b->hi, a->hi / b->lo, a->hi / b->hi);
      return std::nullopt;
    case op::mod: {
      if (b->lo <= 0) return std::nullopt;
      const std::int64_t m = b->hi - 1;
      return a->lo >= 0 ? interval{0, std::min(a->hi, m)} : interval{-m, m};
    }
    case op::max: return interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    case op::min: return interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
    case op::bit_and:
      if (a->lo >= 0 && b->lo >= 0) return interval{0, std::min(a->hi, b->hi)};
      if (a->lo >= 0 || b->lo >= 0) return interval{0, a->lo >= 0 ? a->hi : b->hi};
      return std::nullopt;
    case op::bit_or: case op::bit_xor: {
      if (a->lo < 0 || b->lo < 0) return std::nullopt;
      std::int64_t top = 1;
      while (top <= std::max(a->hi, b->hi) && top < (std::int64_t(1) << 61)) top <<= 1;
      return interval{0, top - 1};
    }
    case op::shl:
      if (b->lo < 0 || b->hi > 30 || a->lo < -(std::int64_t(1) << 31) || a->hi > (std::int64_t(1) << 31)) return std::nullopt;
      return from_corners(a->lo << b->lo, a->lo << b->hi, a->hi << b->lo, a->hi << b->hi);
    case op::shr:
      if (b->lo < 0 || b->hi > 63 || a->lo < 0) return std::nullopt;
      return interval{a->lo >> b->hi, a->hi >> b->lo};
    default: return std::nullopt;
  }
}

// splitmix64 (Steele, Lea and Flood 2014): a fixed, portable stream, so every run times the same data.
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <class T>
void fill_as(std::span<std::byte> bytes, std::uint64_t& state, auto make) {
  for (std::size_t i = 0; i + sizeof(T) <= bytes.size(); i += sizeof(T)) {
    T v = make(next_random(state));
    std::memcpy(bytes.data() + i, &v, sizeof(T));
  }
}

}  // namespace

std::optional<std::vector<slot_info>> measure_slots(std::span<const ast::node> nodes, int slot_count,
                                                    std::span<const std::int64_t> vars) {
  std::vector<maybe> iv(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) iv[i] = bound_of(nodes[i], iv, vars);
  std::vector<slot_info> slots(std::size_t(std::max(slot_count, 0)));
  std::vector<bool> seen(slots.size(), false);
  std::size_t total = 0;
  for (const ast::node& n : nodes) {
    // A prefetch may name any byte (it never faults), so it says nothing about the size.
    if (n.o != ast::op::load && n.o != ast::op::store) continue;
    if (n.arg < 0 || std::size_t(n.arg) >= slots.size()) return std::nullopt;
    const maybe index = iv[std::size_t(n.src[0])];
    if (!index) return std::nullopt;
    slot_info& s = slots[std::size_t(n.arg)];
    const dtype dt = n.o == ast::op::store ? nodes[std::size_t(n.src[1])].dt : n.dt;
    if (!seen[std::size_t(n.arg)]) s.dt = dt;
    seen[std::size_t(n.arg)] = true;
    const std::size_t need = std::size_t(std::max<std::int64_t>(index->hi + 1, 0)) * std::size_t(size_bytes(dt));
    if (need > max_scratch_bytes) return std::nullopt;
    s.size_bytes = std::max(s.size_bytes, need);
    s.written = s.written || n.o == ast::op::store;
  }
  for (const slot_info& s : slots) total += s.size_bytes;
  if (total > max_scratch_bytes) return std::nullopt;
  return slots;
}

std::vector<std::vector<std::byte>> fill_slots(std::span<const slot_info> slots) {
  std::vector<std::vector<std::byte>> data;
  for (std::size_t k = 0; k < slots.size(); ++k) {
    std::vector<std::byte> bytes(slots[k].size_bytes);
    std::uint64_t state = 0x7467'0000u + k;  // per slot, so two inputs of one shape differ
    auto unit = [](std::uint64_t r) { return float(double(r >> 11) * 0x1p-53 * 2.0 - 1.0); };
    auto small = [](std::uint64_t r) { return std::int64_t(r % std::uint64_t(integer_fill_max + 1)); };
    switch (slots[k].dt) {
      case dtype::float32: fill_as<float>(bytes, state, unit); break;
      case dtype::float64: fill_as<double>(bytes, state, [&](std::uint64_t r) { return double(unit(r)); }); break;
      case dtype::float16: fill_as<std::uint16_t>(bytes, state, [&](std::uint64_t r) { return half::from_float(unit(r)); }); break;
      case dtype::bfloat16: fill_as<std::uint16_t>(bytes, state, [&](std::uint64_t r) { return bfloat16::from_float(unit(r)); }); break;
      case dtype::bool_: fill_as<std::uint8_t>(bytes, state, [](std::uint64_t r) { return std::uint8_t(r & 1); }); break;
      case dtype::int8: case dtype::uint8: fill_as<std::uint8_t>(bytes, state, [&](std::uint64_t r) { return std::uint8_t(small(r)); }); break;
      case dtype::int16: case dtype::uint16: fill_as<std::uint16_t>(bytes, state, [&](std::uint64_t r) { return std::uint16_t(small(r)); }); break;
      case dtype::int32: case dtype::uint32: fill_as<std::uint32_t>(bytes, state, [&](std::uint64_t r) { return std::uint32_t(small(r)); }); break;
      case dtype::int64: fill_as<std::int64_t>(bytes, state, small); break;
    }
    data.push_back(std::move(bytes));
  }
  return data;
}

}  // namespace tg::tune
