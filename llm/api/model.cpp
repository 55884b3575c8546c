// model.cpp: tg::llm::model: opening a GGUF file on a device, its tokenizer and chat template.
#include <tg/llm/model.hpp>

#include <chrono>
#include <cstdio>

#include <tg/log.hpp>
#include "llm/api/model_state.hpp"
#include "llm/model/session.hpp"

namespace tg::llm {
namespace {

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::uint64_t parameter_count(const gguf::file& f) {
  std::uint64_t n = 0;
  for (const auto& t : f.tensors()) n += t.element_count();
  if (f.find_tensor("output.weight") == nullptr) n += f.get_tensor("token_embd.weight").element_count();
  return n;
}

std::optional<tokenizer::chat_template> chat_for(const tokenizer::tokenizer& tok) {
  try {
    return tokenizer::chat_template::for_vocabulary(tok.vocab());
  } catch (const usage_error&) {
    return std::nullopt;  // no chat family: render_chat says so when asked
  }
}

// 1234567 -> "1,234,567"
std::string grouped(std::uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string s;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

tg::model::kv_cache_type transformer_cache_type(cache_type type) {
  switch (type) {
    case cache_type::f32: return tg::model::kv_cache_type::f32;
    case cache_type::f16: return tg::model::kv_cache_type::f16;
    case cache_type::automatic: break;
  }
  return tg::model::kv_cache_type::automatic;
}

}  // namespace

model::state::state(gguf::file f, const model_options& options)
    : file(std::move(f)),
      tok(tokenizer::tokenizer::from_gguf(file)),
      chat(chat_for(tok)),
      dev(options.device, device_options{.threads = options.threads}),
      net(dev, file, {.max_context = options.max_context, .chunk_size = options.chunk_size, .sequences = options.sequences,
                      .cache = transformer_cache_type(options.cache), .graphs = options.graphs ? tg::model::transformer_options::graph_use::automatic
                                                     : tg::model::transformer_options::graph_use::off}) {
  const auto& c = net.config();
  info = {.name = c.name, .architecture = c.arch,
          .tokenizer = tok.model() == tokenizer::tokenizer::kind::sentencepiece ? "SentencePiece" : "byte-level BPE",
          .chat_style = chat ? std::string(tokenizer::chat_style_name(chat->style())) : std::string(),
          .layers = c.n_layer, .dim = c.dim, .heads = c.n_head, .kv_heads = c.n_kv_head, .vocab = c.vocab,
          .context_length = c.context_length, .max_context = net.max_context(),
          .file_bytes = file.bytes().size(), .parameters = parameter_count(file), .device = dev.name()};
}

model model::open(const std::string& path, const model_options& options) {
  auto t0 = std::chrono::steady_clock::now();
  log(log_level::info, "llm: loading " + path);
  auto s = std::make_unique<state>(gguf::file::open(path), options);
  char line[256];
  std::snprintf(line, sizeof line,
                "llm: model \"%s\", %s bytes, %s parameters, %s tokenizer, context %lld (%s KV cache) on %s (%.2f s)",
                s->info.name.c_str(), grouped(s->info.file_bytes).c_str(), grouped(s->info.parameters).c_str(),
                s->info.tokenizer.c_str(), static_cast<long long>(s->info.max_context),
                tg::model::kv_cache_type_name(s->net.cache_type()), s->info.device.c_str(), since(t0));
  log(log_level::info, line);
  if (options.warm_up) {
    auto tw = std::chrono::steady_clock::now();
    tg::model::warm_up(s->net);
    std::snprintf(line, sizeof line, "llm: warmed up (prefill chunk of %lld and decode%s) in %.2f s, %d kernels compiled",
                  static_cast<long long>(s->net.chunk_size()), s->net.graphs() ? ", each captured as a graph" : "", since(tw),
                  s->dev.stats().compiled);
    log(log_level::info, line);
  }
  return model(std::move(s));
}

model::model(std::unique_ptr<state> s) : s_(std::move(s)) {}
model::model(model&&) noexcept = default;
model& model::operator=(model&&) noexcept = default;
model::~model() = default;

const model_info& model::info() const { return s_->info; }

std::vector<token_id> model::tokenize(std::string_view text, bool add_bos, bool parse_special) const {
  return s_->tok.encode(text, add_bos, parse_special);
}

std::string model::detokenize(std::span<const token_id> ids, bool render_special) const {
  return s_->tok.decode(ids, render_special);
}

std::optional<token_id> model::bos() const { return s_->tok.bos(); }
bool model::is_end_of_generation(token_id id) const { return s_->tok.is_end_of_generation(id); }

std::string model::render_chat(std::span<const chat_message> messages, const chat_options& options) const {
  if (!s_->chat)
    throw usage_error(str("chat: model \"", s_->info.name, "\" has no chat template we know and no chat family"));
  return s_->chat->render(messages, options);
}

tg::model::transformer& model::transformer() const { return s_->net; }
tg::device& model::device() const { return s_->dev; }
const tg::tokenizer::tokenizer& model::tokenizer() const { return s_->tok; }

}  // namespace tg::llm
