// words.hpp: compares emitted dwords with golden ones; a mismatch shows the differing dwords and
// both streams decoded, so a failure reads as packets rather than hex.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <tg/core/hex.hpp>
#include <vector>

#include "runtime/queue/decode.hpp"

namespace tg::test {

using words = std::vector<std::uint32_t>;

inline std::string word_diff(const words& got, const words& want) {
  std::ostringstream out;
  if (got.size() != want.size()) out << "sizes differ: got " << got.size() << ", want " << want.size() << '\n';
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
    if (got[i] != want[i]) out << "dword " << i << ": got " << hex{got[i]} << ", want " << hex{want[i]} << '\n';
  return out.str();
}

inline void check_pm4(const words& got, const words& want,
                      tg::queue::pm4::gfx_version gfx = tg::queue::pm4::gfx_version::gfx11) {
  if (got == want) return;
  FAIL_CHECK(word_diff(got, want) << "emitted:\n" << tg::queue::decode_pm4(got, gfx) << "expected:\n"
                                  << tg::queue::decode_pm4(want, gfx));
}

inline void check_sdma(const words& got, const words& want) {
  if (got == want) return;
  FAIL_CHECK(word_diff(got, want) << "emitted:\n" << tg::queue::decode_sdma(got) << "expected:\n"
                                  << tg::queue::decode_sdma(want));
}

}  // namespace tg::test
