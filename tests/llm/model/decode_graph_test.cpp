// decode_graph_test.cpp: prefill chunks and decode steps replayed from their captured graphs
// (transformer.cpp, transformer_options::graphs) give bit-identical logits to the same steps
// launched kernel by kernel, on the CPU and on the emulated AMD GPU behind its USB bridge; after
// the capture a step compiles nothing, and on AMD each step and each chunk (a full one, and a
// prompt's tail run a second time) is one indirect buffer (one submission) running as many
// dispatches as the launched one. (issues 14 and 15: one
// submission per token, the LLM on graphs for decode and prefill chunks.)
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

// Four chunks of 16 (without logits, with, without, with: the last two replay the graphs the
// first two captured), then a tail of 8, which captures its own graph and replays it when run again.
std::vector<std::int32_t> prompt_of(std::int64_t n) {
  std::vector<std::int32_t> p = {1, 450, 4996, 17354, 1701, 432, 17204, 975};
  while (std::int64_t(p.size()) < n) p.push_back(std::int32_t(300 + 37 * p.size() % 900));
  return p;
}
constexpr std::int64_t chunk = 16;

struct decode_run {
  std::vector<std::vector<float>> prefill;  // the logits of the prompt's last full chunk and of its tail
  std::vector<std::vector<float>> steps;    // each decode step's logits
  int compiled_after_first = 0;             // kernels compiled by the chunks and steps after the first of each kind
  std::vector<std::uint64_t> submissions, dispatches;  // per decode step after the first, on AMD:EMU
  std::vector<std::uint64_t> link_transfers;  // the same, behind the USB bridge: transfers other than wait polls
  std::vector<std::uint64_t> chunk_submissions, chunk_dispatches;  // per full chunk after the first, on AMD:EMU
  std::uint64_t tail_submissions = 0;  // the tail's second run, on AMD:EMU
};

decode_run decode(const std::string& device_name, const std::string& model, bool graphs, int steps) {
  auto file = tg::gguf::file::open(tg::test::fixture("models/" + model + ".gguf"));
  tg::device dev(device_name);
  auto* emu = dynamic_cast<tg::emu::emu_device*>(&dev.impl());
  auto gpu_stats = [&] { return emu ? emu->emulated_gpu().stats() : tg::emu::gpu_stats{}; };
  using graph_use = tg::model::transformer_options::graph_use;
  using tg::model::head;
  tg::model::transformer m(dev, file,
                           {.max_context = 96, .chunk_size = chunk, .graphs = graphs ? graph_use::on : graph_use::off});
  decode_run r;
  // Four full chunks (none, last, none, last: the first two capture, the last two replay), then a
  // tail of 8 (with graphs, it captures a graph of its own).
  const std::vector<std::int32_t> prompt = prompt_of(4 * chunk + 8);
  const head heads[] = {head::none, head::last, head::none, head::last};
  int compiled = 0;
  for (std::int64_t c = 0; c < 4; ++c) {
    if (c == 2) compiled = dev.stats().compiled;
    const auto before = gpu_stats();
    auto logits = m.forward(std::span(prompt).subspan(std::size_t(c * chunk), chunk), c * chunk, heads[c]);
    dev.synchronize();  // a chunk without logits is not waited for
    if (c < 2) continue;
    if (heads[c] == head::last) r.prefill.push_back(logits);
    if (emu) {
      r.chunk_submissions.push_back(gpu_stats().indirect_buffers - before.indirect_buffers);
      r.chunk_dispatches.push_back(gpu_stats().dispatches - before.dispatches);
    }
  }
  r.compiled_after_first = dev.stats().compiled - compiled;
  std::vector<float> logits = m.forward(std::span(prompt).subspan(4 * chunk), 4 * chunk);
  r.prefill.push_back(logits);
  std::int64_t pos = std::int64_t(prompt.size());
  for (int s = 0; s < steps; ++s) {
    const auto next = std::int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    const auto before = gpu_stats();
    const auto link_before = dev.impl().link_traffic();
    logits = m.forward(std::span(&next, 1), pos++);
    if (const auto link_after = dev.impl().link_traffic(); link_before && link_after && s > 0)
      r.link_transfers.push_back((link_after->transfers - link_after->waiting) - (link_before->transfers - link_before->waiting));
    r.steps.push_back(logits);
    if (s == 0) {
      compiled = dev.stats().compiled;
      continue;
    }
    if (emu) {
      const auto after = gpu_stats();
      r.submissions.push_back(after.indirect_buffers - before.indirect_buffers);
      r.dispatches.push_back(after.dispatches - before.dispatches);
    }
  }
  r.compiled_after_first += dev.stats().compiled - compiled;
  // The tail again (a later prompt with the same tail length): it replays the graph its first run
  // captured, over the same cache rows, so its logits are the first run's.
  const auto before = gpu_stats();
  r.prefill.push_back(m.forward(std::span(prompt).subspan(4 * chunk), 4 * chunk));
  if (emu) r.tail_submissions = gpu_stats().indirect_buffers - before.indirect_buffers;
  return r;
}

void check_same(const std::string& device_name, const std::string& model, int steps) {
  CAPTURE(device_name);
  CAPTURE(model);
  const decode_run graphs = decode(device_name, model, true, steps);
  const decode_run launched = decode(device_name, model, false, steps);
  auto same = [](const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t s = 0; s < a.size(); ++s) {
      CAPTURE(s);
      REQUIRE(a[s].size() == b[s].size());
      CHECK(std::memcmp(a[s].data(), b[s].data(), a[s].size() * 4) == 0);
    }
  };
  same(graphs.prefill, launched.prefill);
  REQUIRE(graphs.prefill.size() == 3);
  CHECK(std::memcmp(graphs.prefill[1].data(), graphs.prefill[2].data(), graphs.prefill[1].size() * 4) == 0);
  same(graphs.steps, launched.steps);
  CHECK(graphs.compiled_after_first == 0);
  if (graphs.dispatches.empty()) return;
  for (std::size_t s = 0; s < graphs.dispatches.size(); ++s) {
    CAPTURE(s);
    CHECK(graphs.submissions[s] == 1);  // the step's one indirect buffer
    CHECK(graphs.dispatches[s] == launched.dispatches[s]);
    CHECK(graphs.dispatches[s] > 20);
  }
  CHECK(graphs.tail_submissions == 1);  // the tail's graph, replayed
  for (std::size_t c = 0; c < graphs.chunk_dispatches.size(); ++c) {
    CAPTURE(c);
    CHECK(graphs.chunk_submissions[c] == 1);  // the chunk's one indirect buffer
    CHECK(graphs.chunk_dispatches[c] == launched.chunk_dispatches[c]);
  }
  for (std::size_t s = 0; s < graphs.link_transfers.size(); ++s) {
    CAPTURE(s);
    // Behind the bridge a replayed step writes its changed kernarg words and submits one IB where
    // launching writes every kernel's kernargs and rings the doorbell per dispatch.
    CHECK(graphs.link_transfers[s] * 4 < launched.link_transfers[s]);
  }
  if (!graphs.link_transfers.empty())
    MESSAGE(model, " on ", device_name, ": ", graphs.link_transfers[0], " bridge transfers per decode step besides wait polls with graphs, ",
            launched.link_transfers[0], " launching kernel by kernel");
  MESSAGE(model, " on ", device_name, ": ", graphs.dispatches[0], " dispatches per decode step and ",
          graphs.chunk_dispatches[1], " per prefill chunk of ", chunk, ", each in ", graphs.submissions[0],
          " submission with graphs");
}

}  // namespace

TEST_CASE("decode and prefill-chunk graphs on the CPU: the same logits as launching kernel by kernel, nothing compiled after the capture") {
  check_same("CPU", "tiny-llama-f32", 5);
  check_same("CPU", "tiny-llama-q4_k_m", 5);
}

TEST_CASE("decode and prefill-chunk graphs on the emulated GPU behind the USB bridge: the same logits, one submission per token and per chunk") {
  check_same("AMD:EMU:gfx12:usb", "tiny-llama-f32", 3);
}
