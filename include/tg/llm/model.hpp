// model.hpp: a GGUF model opened on a device: its weights (read in place from the mapped file),
// its tokenizer and its chat template. Sessions (session.hpp) run it.
//
//   auto m = tg::llm::model::open("model.gguf", {.device = "CPU", .threads = 4});
//   std::vector<std::int32_t> ids = m.tokenize("Hello");
//   std::string text = m.detokenize(ids);
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tg/llm/chat_message.hpp>
#include <tg/llm/options.hpp>

namespace tg {
class device;
namespace model {
class transformer;
}
namespace tokenizer {
class tokenizer;
}
}  // namespace tg

namespace tg::llm {

using token_id = std::int32_t;

// What the file says about the model, and how it was opened.
struct model_info {
  std::string name;          // general.name, else the architecture
  std::string architecture;  // "llama", "qwen2", "qwen3"
  std::string tokenizer;     // "SentencePiece" or "byte-level BPE"
  std::string chat_style;    // the chat template rendered: "llama3", "qwen2_5", ...
  std::int64_t layers = 0, dim = 0, heads = 0, kv_heads = 0, vocab = 0;
  std::int64_t context_length = 0;  // the model's own
  std::int64_t max_context = 0;     // the KV cache's, as opened
  std::uint64_t file_bytes = 0, parameters = 0;
  std::string device;               // the device it runs on
};

class model {
 public:
  // Opens and checks the file, loads the weights on the device and (by default) warms up.
  // Throws tg::usage_error for a missing or malformed file or bad options (saying what and
  // where), tg::device_error when the device cannot be opened.
  static model open(const std::string& path, const model_options& options = {});

  model(model&&) noexcept;
  model& operator=(model&&) noexcept;
  ~model();

  const model_info& info() const;

  // Text -> ids. add_bos: prepend BOS if the vocabulary asks for it. parse_special: turn
  // control-token text such as "<|im_start|>" into its id (false: tokenize it as plain text).
  std::vector<token_id> tokenize(std::string_view text, bool add_bos = true, bool parse_special = false) const;
  // Ids -> bytes; control tokens render as their text only with render_special.
  std::string detokenize(std::span<const token_id> ids, bool render_special = false) const;
  std::optional<token_id> bos() const;
  // EOS, EOT and the other tokens that end a turn.
  bool is_end_of_generation(token_id id) const;

  // The conversation as prompt text in the model's chat format (tokenize it with
  // add_bos = false and parse_special = true: templates that want BOS write it themselves).
  std::string render_chat(std::span<const chat_message> messages, const chat_options& options = {}) const;

  // For tools inside tg (the llm command's benchmark and logits dump, the server): the forward
  // pass, its device and the tokenizer. Their headers are not installed.
  tg::model::transformer& transformer() const;
  tg::device& device() const;
  const tg::tokenizer::tokenizer& tokenizer() const;

  struct state;

 private:
  explicit model(std::unique_ptr<state> s);
  std::unique_ptr<state> s_;
  friend class session;
};

}  // namespace tg::llm
