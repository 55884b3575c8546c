// stop_strings.hpp: OpenAI's `stop`: generation ends at the first stop sequence, which the
// answer does not contain. Streamed text that could still be the start of a stop sequence is
// held back until it cannot match (llama.cpp server: find_partial_stop_string), and what is
// held is released when generation ends otherwise (llama.cpp PR #15007).
//
//   stop_strings stops({"\n\n"});
//   std::string out = stops.push("Hello\n");   // "Hello": the "\n" might start "\n\n"
//   out = stops.push("\nWorld");               // "": stopped; stops.stopped() is true
//
// Input must be whole UTF-8 characters (tokenizer::stream_decoder gives that). What is held
// back is a suffix equal to a prefix of a stop sequence, so it starts where that sequence's
// first character does: output never ends inside a character.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tg::serve {

class stop_strings {
 public:
  explicit stop_strings(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // The text that is now certain to be part of the answer.
  std::string push(std::string_view text);
  // At the end of generation (not at a stop): the held-back text.
  std::string flush();

  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace tg::serve
