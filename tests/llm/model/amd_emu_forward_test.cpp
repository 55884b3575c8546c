// amd_emu_forward_test.cpp: the tiny-llama fixtures on the emulated AMD GPU, whose interpreter
// runs the machine code tg's AMDGPU code generator made for every kernel of the forward pass,
// against the same model on the CPU device: the prompt's logits at every position (cosine >=
// 0.9999, same argmax) and the greedy continuation. gfx11 and gfx12, and once behind the
// emulated USB bridge. The prompt runs as a full chunk (on a GPU the matmuls with their token
// count fixed: linear_kernels.hpp's matmul_prefill_kernel) then a shorter multiple of the token tile
// (the prefill matmuls for any count), the decode steps one token at a time. (issue 14: the LLM on
// AMD GPUs.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <unistd.h>
#include <string>
#include <vector>

#include <tg/log.hpp>
#include "llm/gguf/gguf_file.hpp"
#include "llm/synth/model_writer.hpp"
#include "llm/synth/vocabulary.hpp"
#include "llm/model/transformer.hpp"
#include "tests/llm/model/logits_compare.hpp"
#include "tests/support/fixtures.hpp"

namespace {

const std::vector<std::int32_t> tiny_prompt = {1, 450, 4996, 17354, 1701, 432, 17204, 975, 278, 17366, 11203, 29889};
constexpr std::int64_t chunk = 8;  // the prompt's first 8 tokens a full chunk, its last 4 a shorter one

struct run_result {
  std::vector<float> prompt_logits;  // every position
  std::vector<std::int32_t> continuation;
  // Layers whose projections one matmul computes (layer_weights::stacked), and of those the
  // layers whose attn_q, attn_k, attn_v types allow it (q and k, or k and v the same), with the
  // projections stacked in all of those.
  int stacked = 0, stackable = 0, projections_stacked = 0, projections_stackable = 0;
  // Launches of the first decode step that ran several matmuls of one input together (a GPU's:
  // device::prepare_fused), and how many there would be: each layer's gate and up, and the
  // projections of each layer with more than one projection matmul (not all three stacked).
  int matmuls_together = 0, could_go_together = 0;
};

// The prompt in two chunks, then `steps` greedy decode steps.
run_result run(tg::device& dev, const tg::gguf::file& file, int steps,
               std::span<const std::int32_t> prompt = tiny_prompt) {
  tg::model::transformer m(dev, file, {.max_context = 64, .chunk_size = chunk});
  run_result r;
  for (const tg::model::layer_weights& l : m.weights().layers) {
    r.stacked += l.stacked.has_value();
    r.projections_stacked += l.stacked ? l.stacked->count : 0;
    const bool qk = l.wq.type == l.wk.type, kv = l.wk.type == l.wv.type;
    r.stackable += qk || kv;
    r.projections_stackable += qk && kv ? 3 : qk || kv ? 2 : 0;
    r.could_go_together += 1 + !(l.stacked && l.stacked->count == 3);
  }
  r.prompt_logits = m.forward(prompt.first(chunk), 0, tg::model::head::all);
  const std::vector<float> rest = m.forward(prompt.subspan(chunk), chunk, tg::model::head::all);
  r.prompt_logits.insert(r.prompt_logits.end(), rest.begin(), rest.end());
  const auto vocab = std::size_t(m.config().vocab);
  std::vector<float> logits(r.prompt_logits.end() - std::ptrdiff_t(vocab), r.prompt_logits.end());
  std::int64_t pos = std::int64_t(prompt.size());
  for (int s = 0; s < steps; ++s) {
    r.continuation.push_back(std::int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin()));
    if (s == 0) {  // profiled (no graph): the launches by name
      m.set_profiling(true);
      m.set_launch_observer([&](const std::string& kernel, int) { r.matmuls_together += kernel.find(" + ") != std::string::npos; });
    }
    logits = m.forward(std::span(&r.continuation.back(), 1), pos++);
    if (s == 0) {
      m.set_launch_observer({});
      m.set_profiling(false);
    }
  }
  return r;
}

void check_on(const std::string& device_name, const std::string& model, int steps) {
  setenv("TG_AMD_CODEGEN", "1", 0);  // for builds where the generator was opt-in
  CAPTURE(device_name);
  CAPTURE(model);
  auto file = tg::gguf::file::open(tg::test::fixture("models/" + model + ".gguf"));
  tg::device cpu("CPU");
  const run_result want = run(cpu, file, steps);
  tg::device gpu(device_name);
  // The upload to the card reports its size and speed (the CPU reads the mapping in place: no line).
  std::vector<std::string> lines;
  tg::set_log_callback([&](tg::log_level, std::string_view line) { lines.emplace_back(line); });
  const run_result got = run(gpu, file, steps);
  tg::set_log_callback({});
  // A GPU stacks the projections of a layer whose types allow it; the CPU never does.
  CHECK(want.stacked == 0);
  CHECK(got.stacked == got.stackable);
  CHECK(got.projections_stacked == got.projections_stackable);
  MESSAGE(got.stacked, " layers' projections stacked on ", device_name, ", ", got.projections_stacked, " in all");
  // A GPU's decode step runs a layer's matmuls of one input in one launch where there are several.
  CHECK(want.matmuls_together == 0);
  CHECK(got.matmuls_together == got.could_go_together);
  MESSAGE(got.matmuls_together, " launches ran several matmuls of one input together");
  CHECK(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
          return l.rfind("uploaded ", 0) == 0 && l.find("MiB of weights to " + device_name) != std::string::npos &&
                 l.find(" MB/s)") != std::string::npos;
        }) == 1);
  // Quantized models round activations to 8 bits, so a 1-ulp difference in a float sum can
  // move a rounding and a logit by up to ~0.02 (seen: 0.016); a near tie closer than that
  // (seen: 0.003 apart at one position of the Q8_0 prompt) may come out in either order.
  const double margin = model.find("f32") == std::string::npos ? 0.02 : 0.0;
  const auto a = tg::test::compare_logits(got.prompt_logits, want.prompt_logits, 32000, margin);
  MESSAGE(model, " on ", device_name, ": min cosine ", a.min_cosine, ", max |diff| ", a.max_abs_diff, " against the CPU");
  CHECK(a.min_cosine >= 0.9999);
  CHECK(a.same_argmax);
  CHECK(got.continuation == want.continuation);
}

}  // namespace

TEST_CASE("tiny-llama F32 on the emulated gfx11 matches the CPU") { check_on("AMD:EMU:gfx11", "tiny-llama-f32", 4); }
TEST_CASE("tiny-llama F32 on the emulated gfx12 behind the USB bridge matches the CPU") {
  check_on("AMD:EMU:gfx12:usb", "tiny-llama-f32", 2);
}
TEST_CASE("tiny-llama Q8_0 on the emulated gfx12 matches the CPU") { check_on("AMD:EMU:gfx12", "tiny-llama-q8_0", 4); }
TEST_CASE("tiny-llama Q4_K_M on the emulated gfx11 matches the CPU") { check_on("AMD:EMU:gfx11", "tiny-llama-q4_k_m", 2); }

// No fixture has biases: a synthetic qwen2 (QKV biases, NEOX RoPE) in Q8_0, whose projections'
// biases the GPU stacks with their weights (layer_weights::stacked).
TEST_CASE("a synthetic qwen2 with QKV biases in Q8_0 on the emulated gfx11 matches the CPU") {
  using namespace tg::synth;
  model_spec spec = default_spec(architecture::qwen2);
  spec.format = weight_format::q8_0;
  spec.random_norms = true;
  spec.seed = 5;
  const auto path =
      std::filesystem::temp_directory_path() / ("tg_amd_emu_qwen2_" + std::to_string(::getpid()) + ".gguf");
  write_model(spec, byte_level_vocabulary(spec.arch), path);
  auto file = tg::gguf::file::open(path);
  const std::vector<std::int32_t> prompt = {3, 70, 101, 44, 250, 17, 9, 200, 65, 33, 120, 7};
  tg::device cpu("CPU"), gpu("AMD:EMU:gfx11");
  const run_result want = run(cpu, file, 3, prompt), got = run(gpu, file, 3, prompt);
  CHECK(got.projections_stacked == 3 * int(spec.dims.n_layer));
  const std::size_t vocab = want.prompt_logits.size() / prompt.size();
  const auto a = tg::test::compare_logits(got.prompt_logits, want.prompt_logits, vocab, 0.02);
  MESSAGE("qwen2 Q8_0 on AMD:EMU:gfx11: min cosine ", a.min_cosine, ", max |diff| ", a.max_abs_diff,
          " against the CPU");
  CHECK(a.min_cosine >= 0.9999);
  CHECK(a.same_argmax);
  CHECK(got.continuation == want.continuation);
  std::filesystem::remove(path);
}

TEST_CASE("decode steps either side of short_attention_context on the emulated gfx11 match the CPU") {
  // Up to context 1024 a GPU's decode attention is one kernel after the scores; past it, the
  // passes with the weighted sum in attention_runs runs and a join (transformer.cpp). A synthetic
  // llama in Q8_0 (an f16 cache) with 8 query heads on 2 KV heads (the runs take 4 x 4 tiles of
  // them), a prompt of 1020 tokens, then greedy steps at positions 1020 to 1025: each step's
  // logits against the CPU's, and the launches a step makes (4 more a layer in runs: max, exp,
  // sum and the join). Then a full chunk of 64 from position 1026, whose weighted sum takes the
  // long context's schedule (attention_shape::long_context).
  using namespace tg::synth;
  setenv("TG_AMD_CODEGEN", "1", 0);
  model_spec spec = default_spec(architecture::llama);
  spec.format = weight_format::q8_0;
  spec.dims.n_head = 8;
  spec.dims.n_head_kv = 2;
  spec.dims.context_length = 1100;
  spec.random_norms = true;
  spec.seed = 11;
  const auto path = std::filesystem::temp_directory_path() / ("tg_amd_emu_long_" + std::to_string(::getpid()) + ".gguf");
  write_model(spec, byte_level_vocabulary(spec.arch), path);
  auto file = tg::gguf::file::open(path);
  std::vector<std::int32_t> prompt;
  while (prompt.size() < 1020) prompt.push_back(std::int32_t(3 + 37 * prompt.size() % 250));
  struct steps_run {
    std::vector<std::vector<float>> logits;
    std::vector<int> launches;
    std::vector<float> long_chunk;  // a full chunk's last logits from position 1026 (context 1090)
  };
  auto run_steps = [&](tg::device& dev) {
    tg::model::transformer m(dev, file, {.max_context = 1100, .chunk_size = 64});
    steps_run r;
    std::vector<float> logits;
    for (std::size_t at = 0; at < prompt.size(); at += 64) {
      const std::size_t n = std::min<std::size_t>(64, prompt.size() - at);
      logits = m.forward(std::span(prompt).subspan(at, n), std::int64_t(at),
                         at + n == prompt.size() ? tg::model::head::last : tg::model::head::none);
    }
    int launches = 0;
    m.set_profiling(true);  // launched one by one: the observer sees each kernel
    m.set_launch_observer([&](const std::string&, int) { ++launches; });
    for (std::int64_t pos = std::int64_t(prompt.size()); pos < 1026; ++pos) {
      const auto next = std::int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
      launches = 0;
      logits = m.forward(std::span(&next, 1), pos);
      r.logits.push_back(logits);
      r.launches.push_back(launches);
    }
    // A full chunk past short_attention_context: on GPUs its weighted sum hinted long.
    m.set_launch_observer({});
    std::vector<std::int32_t> more(64);
    for (std::size_t i = 0; i < more.size(); ++i) more[i] = std::int32_t(5 + 11 * i % 240);
    r.long_chunk = m.forward(more, 1026, tg::model::head::last);
    return r;
  };
  tg::device cpu("CPU"), gpu("AMD:EMU:gfx11");
  const steps_run want = run_steps(cpu), got = run_steps(gpu);
  REQUIRE(got.logits.size() == 6);
  for (std::size_t s = 0; s < got.logits.size(); ++s) {
    CAPTURE(s);
    const auto a = tg::test::compare_logits(got.logits[s], want.logits[s], got.logits[s].size(), 0.02);
    CHECK(a.min_cosine >= 0.9999);
    CHECK(a.same_argmax);
  }
  const auto chunk = tg::test::compare_logits(got.long_chunk, want.long_chunk, got.long_chunk.size(), 0.02);
  CHECK(chunk.min_cosine >= 0.9999);
  CHECK(chunk.same_argmax);
  // Positions 1020-1023 (context up to 1024): the short form; 1024 and 1025: in runs.
  const int layers = int(spec.dims.n_layer);
  CHECK(got.launches[3] == got.launches[0]);
  CHECK(got.launches[4] == got.launches[3] + 4 * layers);
  CHECK(got.launches[5] == got.launches[4]);
  MESSAGE("a decode step on AMD:EMU:gfx11: ", got.launches[0], " launches at context 1021, ", got.launches[4], " at 1025");
  std::filesystem::remove(path);
}
