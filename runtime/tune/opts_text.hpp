// opts_text.hpp: a loop shape (codegen::kernel_opts: upcast per output range, vector lanes) as
// a short text, the form the tuning cache stores: "upcast=1,4,16 lanes=1", with " panel=256"
// when the last range runs in panels, and a GPU schedule's threads per output, reduce unroll and
// nested lanes where they are not 1: "upcast=1 lanes=0 group=32 unroll=4 nested=2".
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include "runtime/codegen/llvm_kernel.hpp"

namespace tg::tune {

// The ISA is not part of it: the backend sets that from its target, which the cache key names.
std::string to_text(const codegen::kernel_opts& opts);
// nullopt for anything to_text does not write (a hand-edited or damaged entry).
std::optional<codegen::kernel_opts> parse_opts(std::string_view text);

}  // namespace tg::tune
