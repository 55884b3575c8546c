// special_tokens.hpp: finds special-token text in a prompt and splits the prompt around it.
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "llm/tokenizer/vocabulary.hpp"

namespace tg::tokenizer {

// A piece of the input: either plain text to tokenize, or one special token.
struct fragment {
  std::string_view text;
  token_id special = no_token;  // no_token for plain text
};

// llama.cpp's set (src/llama-vocab.cpp: tokenizer_st_partition): control and unknown tokens are matched only when the
// caller asks to parse special tokens; user-defined tokens (Qwen's <think>, <tool_call>) are
// always matched, as Hugging Face and llama.cpp do. Unused and byte tokens never are.
class special_token_matcher {
 public:
  explicit special_token_matcher(const vocabulary& vocab);

  // Scans left to right and takes the longest special token starting at each position.
  // (llama.cpp instead splits on each token in turn, longest first; the two differ only when
  // special tokens overlap each other in the text.)
  std::vector<fragment> split(std::string_view text, bool parse_special) const;

 private:
  struct entry {
    std::string text;
    token_id id;
    bool always;            // user-defined: matched even without parse_special
  };
  std::array<std::vector<entry>, 256> by_first_byte_;  // each list longest first
};

}  // namespace tg::tokenizer
