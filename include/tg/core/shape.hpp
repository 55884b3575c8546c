// shape.hpp: shapes as constexpr values (usable as template arguments), and the shape
// rules of broadcasting, reduction and the movement ops. Each rule is a plain constexpr
// function; the DSL turns a failed rule into a static_assert with a readable message.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <tg/core/dim.hpp>

namespace tg {

inline constexpr int max_rank = 8;

struct shape_t {
  int rank = 0;
  dim d[max_rank]{};

  constexpr shape_t() = default;
  constexpr shape_t(std::initializer_list<dim> dims) {
    for (const dim& x : dims) d[rank++] = x;
  }
  constexpr const dim& operator[](int i) const { return d[i]; }
  constexpr dim& operator[](int i) { return d[i]; }
  constexpr bool operator==(const shape_t& o) const {
    if (rank != o.rank) return false;
    for (int i = 0; i < rank; ++i)
      if (!(d[i] == o.d[i])) return false;
    return true;
  }
  constexpr dim_product numel() const {
    dim_product p;
    for (int i = 0; i < rank; ++i) p.multiply(d[i]);
    return p;
  }
  constexpr bool is_const() const {
    for (int i = 0; i < rank; ++i)
      if (d[i].symbolic) return false;
    return true;
  }
};

// Axes as a bit mask: bit i set means axis i.
using axis_mask = std::uint32_t;

// --- broadcasting (numpy rules: align right; equal dims, or one of them is 1) ---
constexpr bool can_broadcast(const shape_t& a, const shape_t& b) {
  for (int i = 1; i <= a.rank && i <= b.rank; ++i) {
    const dim &x = a[a.rank - i], &y = b[b.rank - i];
    if (!(x == y) && !(x == dim(1)) && !(y == dim(1))) return false;
  }
  return true;
}
constexpr shape_t broadcast_shape(const shape_t& a, const shape_t& b) {
  shape_t out;
  out.rank = a.rank > b.rank ? a.rank : b.rank;
  for (int i = 1; i <= out.rank; ++i) {
    dim x = i <= a.rank ? a[a.rank - i] : dim(1), y = i <= b.rank ? b[b.rank - i] : dim(1);
    out[out.rank - i] = x == dim(1) ? y : x;
  }
  return out;
}
// `s` with 1s prepended up to `rank`.
constexpr shape_t left_pad_ones(const shape_t& s, int rank) {
  shape_t out;
  out.rank = rank;
  for (int i = 0; i < rank; ++i) out[i] = i < rank - s.rank ? dim(1) : s[i - (rank - s.rank)];
  return out;
}

// --- reductions ---
constexpr bool axes_in_range(axis_mask axes, int rank) { return rank >= 32 || (axes >> rank) == 0; }
constexpr shape_t reduce_keepdim_shape(const shape_t& s, axis_mask axes) {
  shape_t out = s;
  for (int i = 0; i < s.rank; ++i)
    if (axes >> i & 1u) out[i] = dim(1);
  return out;
}
constexpr shape_t drop_axes(const shape_t& s, axis_mask axes) {
  shape_t out;
  for (int i = 0; i < s.rank; ++i)
    if (!(axes >> i & 1u)) out[out.rank++] = s[i];
  return out;
}

// --- movement ---
constexpr bool is_permutation(const std::int64_t* perm, int rank) {
  axis_mask seen = 0;
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || (seen >> perm[i] & 1u)) return false;
    seen |= 1u << perm[i];
  }
  return true;
}
// Expanding is allowed from 1 to anything, or to the same dim.
constexpr bool can_expand(const shape_t& from, const shape_t& to) {
  if (from.rank != to.rank) return false;
  for (int i = 0; i < from.rank; ++i)
    if (!(from[i] == to[i]) && !(from[i] == dim(1))) return false;
  return true;
}

}  // namespace tg
