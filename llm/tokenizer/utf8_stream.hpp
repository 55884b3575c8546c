// utf8_stream.hpp: an incremental UTF-8 decoder that emits only complete characters.
#pragma once
#include <string>
#include <string_view>

namespace tg::tokenizer {

// Bytes go in as they arrive; what comes out is always valid UTF-8. A trailing sequence
// that could still complete is held back; bytes that cannot become a character are replaced
// by U+FFFD, one per maximal invalid subsequence (Python's "replace" and the Unicode
// standard's recommended practice, as tinygrad/llm/cli.py: SimpleTokenizer.stream_decoder).
class utf8_stream {
 public:
  // Returns the complete characters the bytes finish.
  std::string push(std::string_view bytes);

  // Ends the stream: a held incomplete sequence becomes U+FFFD.
  std::string flush();

  // Bytes held back, waiting for the rest of their character.
  std::string_view pending() const { return pending_; }

 private:
  std::string pending_;
};

}  // namespace tg::tokenizer
