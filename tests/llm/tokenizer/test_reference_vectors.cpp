// test_reference_vectors.cpp: the four fixture vocabularies against llama.cpp's test vectors.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/llm/tokenizer/fixture_tokenizers.hpp"

using namespace tg::tokenizer;

namespace {

struct vector_case {
  std::string text;
  std::vector<token_id> expected;
};

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot read ", path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// .inp: strings each followed by the separator; .out: one line of ids per string (llama.cpp's test-tokenizer-0.cpp).
std::vector<vector_case> read_vectors(const std::string& name) {
  const auto base = test::fixture_path(name);
  const std::string inp = read_all(base.string() + ".inp"), out = read_all(base.string() + ".out");
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<vector_case> cases;
  for (std::size_t pos = 0;;) {
    const std::size_t end = inp.find(separator, pos);
    if (end == std::string::npos) break;
    cases.push_back({inp.substr(pos, end - pos), {}});
    pos = end + separator.size();
  }
  std::istringstream lines(out);
  std::string line;
  for (auto& c : cases) {
    REQUIRE(std::getline(lines, line));
    std::istringstream ids(line);
    for (token_id id; ids >> id;) c.expected.push_back(id);
  }
  return cases;
}

}  // namespace

TEST_CASE("each fixture vocabulary encodes all 46 reference vectors exactly") {
  for (const std::string name : test::fixture_vocabularies) {
    const tokenizer& tok = test::fixture_tokenizer(name);
    const auto cases = read_vectors(name);
    CHECK(cases.size() == 46);
    int matched = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto ids = tok.encode(cases[i].text, false, false);
      INFO(name, " vector ", i, ": '", cases[i].text, "'");
      CHECK(ids == cases[i].expected);
      matched += ids == cases[i].expected;
    }
    MESSAGE(name, ": ", matched, "/", cases.size(), " vectors match");
  }
}

TEST_CASE("decoding the encoded reference strings gives the strings back") {
  for (const std::string name : test::fixture_vocabularies) {
    const tokenizer& tok = test::fixture_tokenizer(name);
    for (const auto& c : read_vectors(name)) {
      INFO(name, ": '", c.text, "'");
      CHECK(tok.decode(tok.encode(c.text, false, false)) == c.text);
    }
  }
}

TEST_CASE("streaming the reference vectors token by token reproduces the strings") {
  for (const std::string name : test::fixture_vocabularies) {
    const tokenizer& tok = test::fixture_tokenizer(name);
    for (const auto& c : read_vectors(name)) {
      // SentencePiece's prefix space stays in a stream; only decode() removes it.
      const bool spm = tok.model() == tokenizer::kind::sentencepiece;
      const std::string expected = spm && !c.text.empty() ? " " + c.text : c.text;
      stream_decoder stream(tok);
      std::string streamed;
      for (const token_id id : c.expected) streamed += stream.push(id);
      streamed += stream.flush();
      INFO(name, ": '", c.text, "'");
      CHECK(streamed == expected);
    }
  }
}
