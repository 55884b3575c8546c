// ring_pm4.cpp: compute ring submission (see ring_pm4.hpp).
#include "runtime/queue/ring_pm4.hpp"

namespace tg::queue {

void ring_pm4::submit(std::initializer_list<std::span<const std::uint32_t>> parts) {
  std::uint64_t total = 0;
  for (auto part : parts) total += part.size();
  if (total == 0) return;
  reserve(total);
  std::uint64_t at = put();
  for (auto part : parts) {
    write(at, part);
    at += part.size();
  }
  publish(at);
}

}  // namespace tg::queue
