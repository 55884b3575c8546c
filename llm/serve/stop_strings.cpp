// stop_strings.cpp: stop sequences over streamed text; see stop_strings.hpp.
#include "llm/serve/stop_strings.hpp"

#include <algorithm>

namespace tg::serve {

std::string stop_strings::push(std::string_view text) {
  if (stopped_) return {};
  held_ += text;
  // The earliest complete stop sequence ends the answer right before it.
  std::size_t first = std::string::npos;
  for (const std::string& s : stops_) first = std::min(first, held_.find(s));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  // Hold the longest suffix that is a proper prefix of some stop sequence.
  std::size_t keep = 0;
  for (const std::string& s : stops_)
    for (std::size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n)
      if (std::string_view(held_).substr(held_.size() - n) == std::string_view(s).substr(0, n)) {
        keep = n;
        break;
      }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string stop_strings::flush() {
  std::string out = stopped_ ? std::string() : held_;
  held_.clear();
  return out;
}

}  // namespace tg::serve
