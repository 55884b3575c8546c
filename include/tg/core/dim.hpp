// dim.hpp: one dimension of a shape: a compile-time number, or a multiple of a symbolic
// variable (a name with bounds, e.g. the sequence length) bound when the kernel runs.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tg/core/error.hpp>

namespace tg {

// A short name usable as a template argument: tg::sym<"start_pos", 0, 4096>.
struct fixed_name {
  static constexpr std::size_t capacity = 24;
  char text[capacity]{};
  constexpr fixed_name() = default;
  template <std::size_t N>
  constexpr fixed_name(const char (&s)[N]) {  // NOLINT: implicit on purpose, for "..." arguments
    static_assert(N <= capacity, "tg::sym: variable names are at most 23 characters");
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
  constexpr std::string_view view() const { return {text, std::char_traits<char>::length(text)}; }
  constexpr bool operator==(const fixed_name& o) const { return view() == o.view(); }
  constexpr bool operator<(const fixed_name& o) const { return view() < o.view(); }
};

// A symbolic variable: its name and the inclusive range of values it may take.
struct symbol {
  fixed_name name{};
  std::int64_t lo = 0, hi = 0;
  constexpr bool operator==(const symbol& o) const { return name == o.name; }
};

// coef * sym (symbolic) or coef (constant).
struct dim {
  std::int64_t coef = 1;
  symbol sym{};
  bool symbolic = false;

  constexpr dim() = default;
  constexpr dim(std::int64_t n) : coef(n) {}  // NOLINT: a number is a constant dim
  constexpr dim(symbol s) : sym(s), symbolic(true) {}  // NOLINT: a symbol is a dim
  constexpr dim(std::int64_t c, symbol s) : coef(c), sym(s), symbolic(true) {}

  constexpr bool is_const() const { return !symbolic; }
  constexpr bool operator==(const dim& o) const {
    return coef == o.coef && symbolic == o.symbolic && (!symbolic || sym == o.sym);
  }
  // The largest value the dim can take (for sizing buffers and loop bounds).
  constexpr std::int64_t max_value() const { return symbolic ? coef * sym.hi : coef; }
  constexpr std::int64_t min_value() const { return symbolic ? coef * sym.lo : coef; }
  // The value once the symbols are bound: symbol vars[i] takes values[i] (a plan's variables).
  constexpr std::int64_t value(std::span<const symbol> vars, std::span<const std::int64_t> values) const {
    if (!symbolic) return coef;
    for (std::size_t i = 0; i < vars.size() && i < values.size(); ++i)
      if (vars[i] == sym) return coef * values[i];
    throw usage_error(str("dim: no value is bound for variable '", sym.name.view(), "'"));
  }
};

constexpr dim operator*(symbol s, std::int64_t c) { return dim(c, s); }
constexpr dim operator*(std::int64_t c, symbol s) { return dim(c, s); }

// tg::sym<"n", 1, 64>: a symbolic variable n in [1, 64].
template <fixed_name Name, std::int64_t Lo, std::int64_t Hi>
  requires(0 <= Lo && Lo <= Hi)
inline constexpr symbol sym{Name, Lo, Hi};

// A product of dims as coef * (sorted list of symbols); used to compare element counts.
struct dim_product {
  static constexpr int capacity = 8;
  std::int64_t coef = 1;
  symbol syms[capacity]{};
  int count = 0;

  constexpr void multiply(const dim& d) {
    coef *= d.coef;
    if (!d.symbolic) return;
    if (count == capacity) throw "tg: a shape multiplies more than 8 symbolic dims";
    int i = count++;
    while (i > 0 && d.sym.name < syms[i - 1].name) { syms[i] = syms[i - 1]; --i; }
    syms[i] = d.sym;
  }
  constexpr bool operator==(const dim_product& o) const {
    if (coef != o.coef || count != o.count) return false;
    for (int i = 0; i < count; ++i)
      if (!(syms[i] == o.syms[i])) return false;
    return true;
  }
  constexpr bool is_const() const { return count == 0; }
};

}  // namespace tg
