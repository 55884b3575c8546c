// session_test.cpp: chunked prefill through session: the chunk plan (multiples of the
// model's token tile first), logits that do not depend on how a prompt was cut (one chunk,
// uneven chunks, token by token, a reused prefix), how many tokens each prefill sends through
// the model (transformer::tokens_forwarded: only the uncached ones), and the errors for empty
// or too long prompts. On a small synthetic F32 llama, so every path is exact up to summation order.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "llm/model/session.hpp"
#include "llm/synth/model_writer.hpp"

namespace {

using tg::model::prefill_chunks;
using sizes = std::vector<std::int64_t>;

TEST_CASE("prefill chunks put multiples of the token tile first") {
  CHECK(prefill_chunks(13, 16, 4) == sizes{12, 1});
  CHECK(prefill_chunks(37, 32, 4) == sizes{32, 4, 1});
  CHECK(prefill_chunks(70, 32, 4) == sizes{32, 32, 4, 2});
  CHECK(prefill_chunks(3, 32, 4) == sizes{3});     // shorter than a tile: one chunk as it is
  CHECK(prefill_chunks(4, 32, 4) == sizes{4});
  CHECK(prefill_chunks(64, 32, 4) == sizes{32, 32});
  CHECK(prefill_chunks(30, 30, 4) == sizes{28, 2});  // a chunk size that is not a multiple itself
  CHECK(prefill_chunks(5, 1, 4) == sizes{1, 1, 1, 1, 1});
  CHECK(prefill_chunks(0, 32, 4).empty());
  CHECK_THROWS_WITH_AS(prefill_chunks(8, 0, 4), "prefill_chunks: chunk 0 and tile 4 must be at least 1", tg::usage_error);
}

tg::device& cpu() {
  static tg::device d("CPU");
  return d;
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
  return worst;
}

TEST_CASE("a prompt's last logits do not depend on how prefill cuts it, and a cached prefix is reused") {
  tg::synth::model_spec spec = tg::synth::default_spec(tg::synth::architecture::llama);
  spec.seed = 5;
  auto path = std::filesystem::temp_directory_path() / ("tg_session_test_" + std::to_string(::getpid()) + ".gguf");
  tg::synth::write_model(spec, tg::synth::byte_level_vocabulary(spec.arch), path);
  auto file = tg::gguf::file::open(path);
  tg::model::transformer m(cpu(), file, {.max_context = 40, .chunk_size = 8});
  REQUIRE(m.token_tile() > 1);
  std::vector<std::int32_t> prompt;
  for (int i = 0; i < 13; ++i) prompt.push_back(std::int32_t((i * 37 + 11) % m.config().vocab));

  // One token at a time: only one-token matmuls.
  tg::model::session one(m);
  std::vector<float> want = one.prefill(std::span(prompt).first(1));
  for (std::size_t i = 1; i < prompt.size(); ++i) want = one.decode(prompt[i]);

  tg::model::session s(m);
  std::int64_t before = m.tokens_forwarded();
  auto got = s.prefill(prompt);  // chunks of 8, 4 and 1
  CHECK(m.tokens_forwarded() - before == 13);
  CHECK(s.position() == 13);
  CHECK(std::equal(s.tokens().begin(), s.tokens().end(), prompt.begin(), prompt.end()));
  CHECK(max_diff(got, want) <= 1e-4);

  // The first 9 tokens again, then all 13: the second prefill computes only tokens 9..12 (the
  // cache holds 0..8); the logits match a fresh session's.
  tg::model::session reuse(m);
  reuse.prefill(std::span(prompt).first(9));
  before = m.tokens_forwarded();
  const auto reused = reuse.prefill(prompt);
  CHECK(m.tokens_forwarded() - before == 4);
  CHECK(max_diff(reused, got) <= 1e-4);
  CHECK(reuse.position() == 13);
  // The same prompt again: everything is cached, but the last token is recomputed for its logits.
  before = m.tokens_forwarded();
  CHECK(max_diff(reuse.prefill(prompt), got) <= 1e-4);
  CHECK(m.tokens_forwarded() - before == 1);
  // A prompt that diverges at token 5 drops the cache from there.
  auto other = prompt;
  other[5] = (other[5] + 1) % std::int32_t(m.config().vocab);
  before = m.tokens_forwarded();
  const auto diverged = reuse.prefill(other);
  CHECK(m.tokens_forwarded() - before == 8);  // tokens 5..12
  CHECK(reuse.position() == 13);
  tg::model::session fresh(m);
  before = m.tokens_forwarded();
  CHECK(max_diff(diverged, fresh.prefill(other)) <= 1e-4);
  CHECK(m.tokens_forwarded() - before == 13);
  // A decode step is one token.
  before = m.tokens_forwarded();
  fresh.decode(prompt[0]);
  CHECK(m.tokens_forwarded() - before == 1);
  CHECK(fresh.position() == 14);

  CHECK_THROWS_WITH_AS(s.prefill({}), "session::prefill: no tokens (a prompt needs at least one)", tg::usage_error);
  std::vector<std::int32_t> too_long(41, 1);
  CHECK_THROWS_WITH_AS(s.prefill(too_long), "session::prefill: 41 tokens do not fit the context of 40", tg::usage_error);
  std::filesystem::remove(path);
}

}  // namespace
