// instruction_cache.cpp: line fills of the emulated SQC (see instruction_cache.hpp).
#include "drivers/emu/shader/instruction_cache.hpp"

#include <algorithm>
#include <cstring>

namespace tg::emu::shader {

void instruction_cache::read(mmu& memory, gpu_va va, std::span<std::byte> out) {
  std::uint64_t at = va.value;
  std::size_t done = 0;
  while (done < out.size()) {
    const std::uint64_t line = at & ~(line_bytes - 1);
    auto it = lines_.find(line);
    if (it == lines_.end()) {
      std::array<std::byte, line_bytes> fill;
      memory.read(gpu_va{line}, fill, utcl2_client::cpc);
      it = lines_.emplace(line, fill).first;
    }
    const std::size_t n = std::min<std::size_t>(out.size() - done, line + line_bytes - at);
    std::memcpy(out.data() + done, it->second.data() + (at - line), n);
    done += n;
    at += n;
  }
}

}  // namespace tg::emu::shader
