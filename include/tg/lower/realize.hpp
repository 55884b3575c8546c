// realize.hpp: which graph nodes get their own buffer (and so end a kernel). Everything
// else is fused into the kernel that consumes it. The rules:
//   - the output, and inputs (they are buffers already);
//   - a reduce found inside another reduce's source (no nested reduce loops), and
//   - a reduce reached through an expand (its result would be recomputed per copy).
// Such a reduce is realized together with the elementwise chain that consumes it (so
// relu(matmul) is stored as one kernel, not the matmul alone). So elementwise chains fuse,
// a reduce and its elementwise producers and consumers are one kernel, and softmax is
// three kernels (max, sum, the normalised exp).
#pragma once
#include <vector>
#include <tg/ast/tensor_graph.hpp>

namespace tg::lowering {

class realize_pass {
 public:
  constexpr realize_pass(const graph& g, int output) : g_(g), realized_(g.nodes.size(), 0) {
    realized_[std::size_t(output)] = 1;
    // Children have lower ids than parents, so one sweep downwards sees every new root.
    for (int r = output; r >= 0; --r) {
      if (!realized_[std::size_t(r)] || g_.nodes[std::size_t(r)].desc.k == kind::input) continue;
      seen_.assign(g.nodes.size(), 0);
      walk(r, r, false, false, -1);
    }
  }
  constexpr const std::vector<unsigned char>& realized() const { return realized_; }

 private:
  // `chain` is the top of the elementwise chain n sits in (below a reduce or an expand),
  // or -1: that is what gets realized when n turns out to be a reduce that must be.
  constexpr void walk(int n, int root, bool in_reduce, bool past_expand, int chain) {
    const gnode& x = g_.nodes[std::size_t(n)];
    if (x.desc.k == kind::input || x.desc.k == kind::constant || x.desc.k == kind::dim_value) return;
    if (n != root && realized_[std::size_t(n)]) return;
    auto bit = std::uint8_t(1u << (int(in_reduce) * 2 + int(past_expand)));
    if (seen_[std::size_t(n)] & bit) return;
    seen_[std::size_t(n)] |= bit;
    if (x.desc.k == kind::reduce) {
      if (n != root && (in_reduce || past_expand)) {
        realized_[std::size_t(chain >= 0 ? chain : n)] = 1;
        return;
      }
      walk(x.src[0], root, true, past_expand, -1);
      return;
    }
    bool expands = x.desc.k == kind::expand;
    bool chains = !expands && x.desc.k != kind::pad && x.desc.k != kind::shrink && n != root;
    int child_chain = chains ? (chain >= 0 ? chain : n) : -1;
    for (int s : x.src)
      if (s >= 0) walk(s, root, in_reduce, past_expand || expands, child_chain);
  }

  const graph& g_;
  std::vector<unsigned char> realized_;
  std::vector<std::uint8_t> seen_;
};

}  // namespace tg::lowering
