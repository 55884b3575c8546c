// decode_graph_test.cpp: decode steps replayed from their captured graph (transformer.cpp,
// transformer_options::decode_graphs) give bit-identical logits to the same steps launched kernel
// by kernel, on the CPU and on the emulated AMD GPU behind its USB bridge; after the capture a
// step compiles nothing, and on AMD each step is one indirect buffer (one submission) running as
// many dispatches as the launched step. (issues 14 and 15: one submission per token, the LLM on graphs.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "drivers/emu/emu_device.hpp"
#include "llm/gguf/gguf_file.hpp"
#include "llm/model/transformer.hpp"
#include "tests/support/fixtures.hpp"

namespace {

const std::vector<std::int32_t> prompt = {1, 450, 4996, 17354, 1701, 432, 17204, 975};

struct decode_run {
  std::vector<std::vector<float>> steps;  // each decode step's logits
  int compiled_after_first = 0;           // kernels compiled by the steps after the first
  std::vector<std::uint64_t> submissions, dispatches;  // per step after the first, on AMD:EMU
};

decode_run decode(const std::string& device_name, const std::string& model, bool graphs, int steps) {
  auto file = tg::gguf::file::open(tg::test::fixture("models/" + model + ".gguf"));
  tg::device dev(device_name);
  auto* emu = dynamic_cast<tg::emu::emu_device*>(&dev.impl());
  using graph_use = tg::model::transformer_options::graph_use;
  tg::model::transformer m(dev, file,
                           {.max_context = 64, .chunk_size = 16, .decode_graphs = graphs ? graph_use::on : graph_use::off});
  std::vector<float> logits = m.forward(prompt, 0);
  decode_run r;
  std::int64_t pos = std::int64_t(prompt.size());
  int compiled = 0;
  for (int s = 0; s < steps; ++s) {
    const auto next = std::int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    const auto before = emu ? emu->emulated_gpu().stats() : tg::emu::gpu_stats{};
    logits = m.forward(std::span(&next, 1), pos++);
    r.steps.push_back(logits);
    if (s == 0) {
      compiled = dev.stats().compiled;
      continue;
    }
    if (emu) {
      const auto after = emu->emulated_gpu().stats();
      r.submissions.push_back(after.indirect_buffers - before.indirect_buffers);
      r.dispatches.push_back(after.dispatches - before.dispatches);
    }
  }
  r.compiled_after_first = dev.stats().compiled - compiled;
  return r;
}

void check_same(const std::string& device_name, const std::string& model, int steps) {
  CAPTURE(device_name);
  CAPTURE(model);
  const decode_run graphs = decode(device_name, model, true, steps);
  const decode_run launched = decode(device_name, model, false, steps);
  REQUIRE(graphs.steps.size() == launched.steps.size());
  for (std::size_t s = 0; s < graphs.steps.size(); ++s) {
    CAPTURE(s);
    REQUIRE(graphs.steps[s].size() == launched.steps[s].size());
    CHECK(std::memcmp(graphs.steps[s].data(), launched.steps[s].data(), graphs.steps[s].size() * 4) == 0);
  }
  CHECK(graphs.compiled_after_first == 0);
  if (graphs.dispatches.empty()) return;
  for (std::size_t s = 0; s < graphs.dispatches.size(); ++s) {
    CAPTURE(s);
    CHECK(graphs.submissions[s] == 1);  // the step's one indirect buffer
    CHECK(graphs.dispatches[s] == launched.dispatches[s]);
    CHECK(graphs.dispatches[s] > 20);
  }
  MESSAGE(model, " on ", device_name, ": ", graphs.dispatches[0], " dispatches per decode step, in ",
          graphs.submissions[0], " submission with graphs");
}

}  // namespace

TEST_CASE("decode graphs on the CPU: the same logits as launching kernel by kernel, nothing compiled after the capture") {
  check_same("CPU", "tiny-llama-f32", 5);
  check_same("CPU", "tiny-llama-q4_k_m", 5);
}

TEST_CASE("decode graphs on the emulated GPU behind the USB bridge: the same logits, one submission per token") {
  check_same("AMD:EMU:gfx12:usb", "tiny-llama-f32", 3);
}
