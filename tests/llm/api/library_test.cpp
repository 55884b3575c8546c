// library_test.cpp: the public LLM library (include/tg/llm/) on the tiny-llama fixture, linked as libtg-llm.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <tg/llm/llm.hpp>

#include "llm/model/transformer.hpp"  // tokens_forwarded: what really went through the model
#include "tests/support/fixtures.hpp"

namespace {

using tg::llm::token_id;
using ids = std::vector<token_id>;

std::string model_path() { return tg::test::fixture("models/tiny-llama-f32.gguf").string(); }

constexpr tg::llm::model_options small{.threads = 2, .max_context = 128, .chunk_size = 16, .warm_up = false};

// One model for the whole run: opening compiles kernels, which is the slow part.
tg::llm::model& shared_model() {
  static tg::llm::model m = tg::llm::model::open(model_path(), small);
  return m;
}

std::int64_t forwarded(const tg::llm::model& m) { return m.transformer().tokens_forwarded(); }

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
  return worst;
}

ids concat(ids a, const ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The fixture's prompt and llama.cpp's greedy continuation of it (models/tiny-llama-f32.greedy.txt).
const ids fixture_prompt{1, 450, 4996, 17354, 1701, 432, 17204, 975, 278, 17366, 11203};
constexpr token_id fixture_greedy = 10094;

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("tg_library_test_" + std::to_string(::getpid()) + "_" + name);
}

}  // namespace

TEST_CASE("model::open reads the file's shape and runs on the device asked for") {
  const auto& info = shared_model().info();
  CHECK(info.architecture == "llama");
  CHECK(info.tokenizer == "SentencePiece");
  CHECK(info.layers == 4);
  CHECK(info.dim == 256);
  CHECK(info.heads == 8);
  CHECK(info.kv_heads == 4);
  CHECK(info.vocab == 32000);
  CHECK(info.context_length == 512);
  CHECK(info.max_context == 128);
  CHECK(info.device == "CPU");
  CHECK(info.file_bytes == std::filesystem::file_size(model_path()));
}

TEST_CASE("tokenize and detokenize round-trip") {
  const auto& m = shared_model();
  CHECK(m.tokenize("The quick brown fox") == ids{1, 450, 4996, 17354, 1701, 29916});
  CHECK(m.tokenize("The quick brown fox", false) == ids{450, 4996, 17354, 1701, 29916});
  REQUIRE(m.bos().has_value());
  CHECK(*m.bos() == 1);
  for (const std::string text : {"The quick brown fox", "Hello, world! 123", "naïve café, 東京"}) {
    CAPTURE(text);
    const ids t = m.tokenize(text);
    REQUIRE(t.size() > 1);
    CHECK(t.front() == 1);
    const ids plain = m.tokenize(text, false);
    CHECK(std::equal(t.begin() + 1, t.end(), plain.begin(), plain.end()));
    // The prefix space SentencePiece adds is removed from the first token decoded; after BOS
    // it stays, as in llama.cpp's detokenize.
    CHECK(m.detokenize(std::span(t).subspan(1)) == text);
    const std::string with_bos = m.detokenize(t);
    CHECK(with_bos.starts_with(" "));
    CHECK(std::string_view(with_bos).substr(1) == text);
  }
}

TEST_CASE("greedy generation is llama.cpp's, the same every time, and a repeated prompt reuses the cache") {
  auto& m = shared_model();
  tg::llm::session s(m);
  const auto first = s.generate(fixture_prompt, {.max_tokens = 8});
  CHECK(first.tokens == ids(8, fixture_greedy));
  CHECK(first.stopped == tg::llm::stop_reason::max_tokens);
  CHECK(first.cached_tokens == 0);
  CHECK(first.prompt_tokens == std::int64_t(fixture_prompt.size()));

  const std::int64_t before = forwarded(m);
  const auto second = s.generate(fixture_prompt, {.max_tokens = 8});
  CHECK(second.tokens == first.tokens);
  // All but the last prompt token were cached: that one ran, then a decode step per token.
  CHECK(second.cached_tokens == std::int64_t(fixture_prompt.size()) - 1);
  CHECK(second.prompt_tokens == 1);
  CHECK(forwarded(m) - before == 1 + 8);
}

TEST_CASE("max_tokens bounds the output, and a callback returning false stops after that token") {
  auto& m = shared_model();
  tg::llm::session s(m);
  const auto five = s.generate(fixture_prompt, {.max_tokens = 5});
  CHECK(five.tokens.size() == 5);
  CHECK(five.stopped == tg::llm::stop_reason::max_tokens);
  const auto none = s.generate(fixture_prompt, {.max_tokens = 0});
  CHECK(none.tokens.empty());
  CHECK(none.stopped == tg::llm::stop_reason::max_tokens);

  ids seen;
  std::string text;
  const auto stopped = s.generate(fixture_prompt, {.max_tokens = 50}, [&](token_id t, std::string_view piece) {
    if (t >= 0) seen.push_back(t);
    text += piece;
    return seen.size() < 3;
  });
  CHECK(stopped.stopped == tg::llm::stop_reason::callback);
  CHECK(stopped.tokens.size() == 3);
  CHECK(seen == stopped.tokens);
  CHECK(std::equal(seen.begin(), seen.end(), five.tokens.begin()));
  CHECK(text == m.detokenize(stopped.tokens));
  CHECK(text == "yanyanyan");
  CHECK_THROWS_AS(s.generate(fixture_prompt, {.max_tokens = -1}), tg::usage_error);
}

TEST_CASE("a prompt that extends the last one and its output computes only the new tokens") {
  auto& m = shared_model();
  const ids prompt = m.tokenize("Once upon a time");
  const ids more = m.tokenize(" there was a cat", false);
  tg::llm::session s(m);
  const auto first = s.generate(prompt, {.max_tokens = 4});
  REQUIRE(first.tokens.size() == 4);
  const ids extended = concat(concat(prompt, first.tokens), more);

  std::int64_t before = forwarded(m);
  const auto second = s.generate(extended, {.max_tokens = 4});
  CHECK(second.cached_tokens == std::int64_t(prompt.size() + first.tokens.size()));
  CHECK(second.prompt_tokens == std::int64_t(more.size()));
  CHECK(forwarded(m) - before == std::int64_t(more.size()) + 4);  // the new prompt tokens, 4 decode steps
  CHECK(s.position() == std::int64_t(extended.size() + 4));

  // A fresh session computes everything and agrees.
  tg::llm::session fresh(m);
  before = forwarded(m);
  const auto again = fresh.generate(extended, {.max_tokens = 4});
  CHECK(again.cached_tokens == 0);
  CHECK(again.prompt_tokens == std::int64_t(extended.size()));
  CHECK(forwarded(m) - before == std::int64_t(extended.size()) + 4);
  CHECK(again.tokens == second.tokens);

  // And so do the logits: the cached prefix gives the same logits as a full prefill.
  tg::llm::session a(m), b(m);
  a.prefill(concat(prompt, first.tokens));
  const auto reused = a.prefill(extended);
  CHECK(a.position() == std::int64_t(extended.size()));
  CHECK(max_diff(reused, b.prefill(extended)) <= 1e-4);
}

TEST_CASE("chat::say keeps the history and a second turn reuses the first's tokens") {
  auto& m = shared_model();
  tg::llm::chat c(m, {.max_tokens = 4});
  c.add_system("Answer briefly.");
  const auto r1 = c.say("What is the capital of France?");
  REQUIRE(c.history().size() == 3);
  CHECK(c.history()[0].role == "system");
  CHECK(c.history()[1].role == "user");
  CHECK(c.history()[1].content == "What is the capital of France?");
  CHECK(c.history()[2].role == "assistant");
  CHECK(c.history()[2].content == m.detokenize(r1.tokens));
  CHECK(r1.cached_tokens == 0);

  const std::int64_t before = forwarded(m);
  const auto r2 = c.say("And of Spain?");
  REQUIRE(c.history().size() == 5);
  CHECK(c.history()[3].content == "And of Spain?");
  CHECK(c.history()[4].role == "assistant");
  CHECK(c.history()[4].content == m.detokenize(r2.tokens));
  // The second prompt is the whole conversation; the first turn's prompt is in the cache.
  const auto history_before_reply = std::vector<tg::llm::chat_message>(c.history().begin(), c.history().begin() + 4);
  const ids prompt2 = m.tokenize(m.render_chat(history_before_reply), false, true);
  CHECK(r2.cached_tokens + r2.prompt_tokens == std::int64_t(prompt2.size()));
  CHECK(r2.cached_tokens >= r1.prompt_tokens);
  CHECK(forwarded(m) - before == r2.prompt_tokens + std::int64_t(r2.tokens.size()));  // a decode step per reply token

  // The same conversation replayed in a new chat gives the same replies.
  tg::llm::chat replay(m, {.max_tokens = 4});
  replay.add_system("Answer briefly.");
  CHECK(replay.say("What is the capital of France?").tokens == r1.tokens);
  CHECK(replay.say("And of Spain?").tokens == r2.tokens);
  CHECK(replay.history().size() == 5);
}

TEST_CASE("two sessions on one model, used in turn, each get what they get alone") {
  auto& m = shared_model();
  const ids pa = m.tokenize("The quick brown fox"), pb = m.tokenize("Lorem ipsum dolor sit amet, consectetur");
  const ids more_a = m.tokenize(" jumps", false), more_b = m.tokenize(" adipiscing elit", false);

  // Alone: each runs its two prompts back to back.
  auto alone = [&](const ids& p, const ids& more) {
    tg::llm::session s(m);
    std::vector<std::vector<float>> logits;
    logits.push_back(s.prefill(p));
    const auto r1 = s.generate(p, {.max_tokens = 3});
    logits.push_back(s.prefill(concat(concat(p, r1.tokens), more)));
    const auto r2 = s.generate(concat(concat(p, r1.tokens), more), {.max_tokens = 3});
    return std::tuple(logits, r1.tokens, r2.tokens);
  };
  const auto [logits_a, a1, a2] = alone(pa, more_a);
  const auto [logits_b, b1, b2] = alone(pb, more_b);

  // In turn: each call finds the cache holding the other's tokens.
  tg::llm::session sa(m), sb(m);
  const auto la0 = sa.prefill(pa);
  const auto lb0 = sb.prefill(pb);
  CHECK(sa.position() == 0);  // sb took the cache
  CHECK(sb.position() == std::int64_t(pb.size()));
  CHECK(max_diff(la0, logits_a[0]) <= 1e-4);
  CHECK(max_diff(lb0, logits_b[0]) <= 1e-4);
  const auto ra1 = sa.generate(pa, {.max_tokens = 3});
  CHECK(ra1.cached_tokens == 0);
  const auto rb1 = sb.generate(pb, {.max_tokens = 3});
  CHECK(rb1.cached_tokens == 0);
  CHECK(ra1.tokens == a1);
  CHECK(rb1.tokens == b1);
  const ids pa2 = concat(concat(pa, ra1.tokens), more_a), pb2 = concat(concat(pb, rb1.tokens), more_b);
  CHECK(max_diff(sa.prefill(pa2), logits_a[1]) <= 1e-4);
  CHECK(max_diff(sb.prefill(pb2), logits_b[1]) <= 1e-4);
  const auto ra2 = sa.generate(pa2, {.max_tokens = 3});
  const auto rb2 = sb.generate(pb2, {.max_tokens = 3});
  CHECK(ra2.tokens == a2);
  CHECK(rb2.tokens == b2);
  CHECK(ra2.cached_tokens == 0);
  CHECK(rb2.cached_tokens == 0);
  // Back to back on one session the cache is kept.
  const auto rb3 = sb.generate(pb2, {.max_tokens = 3});
  CHECK(rb3.cached_tokens == std::int64_t(pb2.size()) - 1);
  CHECK(rb3.tokens == b2);
}

TEST_CASE("the log callback receives the loading line") {
  std::vector<std::string> lines;
  tg::set_log_callback([&](tg::log_level, std::string_view line) { lines.emplace_back(line); });
  try {
    auto m = tg::llm::model::open(model_path(), small);
    tg::set_log_callback({});
    CHECK(m.info().vocab == 32000);
  } catch (...) {
    tg::set_log_callback({});
    throw;
  }
  CHECK(std::find(lines.begin(), lines.end(), "llm: loading " + model_path()) != lines.end());
  CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("llm: model \"", 0) == 0; }));
}

TEST_CASE("a missing or corrupt file is a usage_error naming the path") {
  const std::string missing = temp_file("missing.gguf").string();
  CHECK_THROWS_WITH_AS(tg::llm::model::open(missing, small), doctest::Contains(missing.c_str()), tg::usage_error);

  // Not a GGUF file at all.
  const auto garbage = temp_file("garbage.gguf");
  {
    std::ofstream out(garbage, std::ios::binary);
    out << "this is not a model, just some text that is long enough to be read as a header";
  }
  CHECK_THROWS_WITH_AS(tg::llm::model::open(garbage.string(), small), doctest::Contains(garbage.string().c_str()),
                       tg::usage_error);

  // The real file cut short: the header says more than there is.
  const auto truncated = temp_file("truncated.gguf");
  {
    std::ifstream in(model_path(), std::ios::binary);
    std::vector<char> head(64 * 1024);
    in.read(head.data(), std::streamsize(head.size()));
    std::ofstream out(truncated, std::ios::binary);
    out.write(head.data(), in.gcount());
  }
  CHECK_THROWS_WITH_AS(tg::llm::model::open(truncated.string(), small), doctest::Contains(truncated.string().c_str()),
                       tg::usage_error);
  std::filesystem::remove(garbage);
  std::filesystem::remove(truncated);
}
