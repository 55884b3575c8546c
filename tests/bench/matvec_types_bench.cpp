// matvec_types_bench.cpp: decode's matvec (one token times a weight matrix) for every weight
// type the LLM reads, as GB/s of the weight's file bytes and as a fraction of the memory read
// bandwidth measured right before it (decode reads each weight once per token, so that is the
// ceiling). Each matrix is 4096 wide and about 256 MB, far past the last-level cache; weights
// take the form the model gives them (Q8_0 decodes from its row tiles, and where tiles hold quads
// Q4_0, Q4_1, Q4_K, Q5_0 and Q5_1: matmul_tiles.hpp).
//
//   matvec_types_bench            # TG_THREADS (default: all hardware threads) threads
//   matvec_types_bench Q4_0 Q5_K  # only these types
//   MATVEC_K=2048 MATVEC_MB=9 matvec_types_bench   # a model's shape (the 1B's gate projection)
//   MATVEC_HOT=1 MATVEC_MB=0.5 TG_THREADS=1 ...    # one copy, re-read from L2: the kernel's compute
//                                                  # speed, where the memory's swings do not reach
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <tg/device.hpp>
#include "llm/gguf/tensor_type.hpp"
#include "llm/model/activation_kernels.hpp"
#include "llm/model/linear_kernels.hpp"
#include "llm/model/matmul_tiles.hpp"
#include "llm/synth/quantize.hpp"
#include "runtime/threads/thread_pool.hpp"
#include "tests/bench/memory_bandwidth.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using tg::gguf::tensor_type;

// Row length and weight size (MATVEC_K, MATVEC_MB).
std::int64_t K = 4096;
std::size_t target_bytes = std::size_t(256) << 20;

// Copies of one weight of about target_bytes with values from N(0, 0.02), quantized as the
// synthetic models are (llm/synth/quantize.hpp), rows a multiple of 32 so every type has its
// tiles. A small weight comes in as many copies as fill 256 MB, launched in turn, so each
// launch reads from memory as a model's does, never from the last launch's cache (unless
// MATVEC_HOT asks for one copy).
std::vector<tg::model::weight> make_weights(tg::device& dev, tensor_type type) {
  const auto& traits = tg::gguf::traits_of(type);
  const std::int64_t row_bytes = K / traits.block_elems * traits.block_bytes;
  const std::int64_t rows = std::max<std::int64_t>(32, std::int64_t(target_bytes) / row_bytes / 32 * 32);
  std::vector<std::byte> bytes(std::size_t(rows * row_bytes));
  std::mt19937 rng(7);
  std::normal_distribution<float> value(0.0f, 0.02f);
  std::vector<float> row(static_cast<std::size_t>(K));
  for (std::int64_t r = 0; r < rows; ++r) {
    if (r < 64) std::generate(row.begin(), row.end(), [&] { return value(rng); });
    else std::rotate(row.begin(), row.begin() + 1, row.end());  // cheap variety past the first rows
    tg::synth::quantize_row(type, row.data(), bytes.data() + r * row_bytes, std::size_t(K));
  }
  const std::size_t copies = std::getenv("MATVEC_HOT") ? 1 : std::max<std::size_t>(1, (std::size_t(256) << 20) / bytes.size());
  const std::int64_t tile_rows = tg::model::tile_rows_for(dev);
  const bool quads = tg::model::tile_quads_for(dev, type);
  std::vector<tg::model::weight> ws;
  for (std::size_t c = 0; c < copies; ++c) {
    tg::buffer data = dev.allocate(bytes.size());
    data.copy_in(bytes.data(), bytes.size());
    tg::model::weight w{std::string(tg::gguf::tensor_type_name(type)), type, rows, K, row_bytes, data};
    if (tile_rows > 0 && tg::model::tiles_fit_file_bytes(w, tile_rows, quads)) tg::model::add_tiles(dev, w, tile_rows, quads, true);
    ws.push_back(std::move(w));
  }
  return ws;
}

// Median seconds of one decode matvec over `runs` launches, after one to compile and warm,
// each launch on the next of ws.
double matvec_seconds(tg::device& dev, const std::vector<tg::model::weight>& ws, int runs) {
  const tg::model::weight& w = ws.front();
  const tg::model::launch_values vars{1, 0, 1, 0};
  std::vector<float> x(static_cast<std::size_t>(K));
  std::mt19937 rng(3);
  std::normal_distribution<float> value(0.0f, 1.0f);
  for (float& v : x) v = value(rng);
  tg::buffer xb = dev.allocate(x.size() * 4), out = dev.allocate(std::size_t(w.rows) * 4);
  xb.copy_in(x.data(), x.size() * 4);
  const tg::ast::kernel kernel = tg::model::matmul_kernel(w, tg::model::var_tokens, -1, {}, tg::model::matmul_form_for(dev));
  std::vector<tg::buffer> slots;
  if (tg::model::uses_int8_activations(w)) {
    // The activations rounded to 8 bits as the model rounds them (activation_kernels.hpp).
    const std::int64_t block = tg::model::activation_block_for(w);
    tg::buffer xs = dev.allocate(std::size_t(K / block) * 4), xq = dev.allocate(std::size_t(K) * 2);
    tg::buffer xsum = dev.allocate(std::size_t(K / 32) * 4);
    dev.launch(tg::model::activation_scale_kernel(K, tg::model::var_tokens, -1, block), std::vector<tg::buffer>{xs, xb}, vars);
    dev.launch(tg::model::activation_quant_kernel(K, tg::model::var_tokens, -1, block), std::vector<tg::buffer>{xq, xb, xs},
               vars);
    if (tg::model::reads_activation_sums(kernel)) {
      auto sum = tg::model::activation_sum_kernel(K, tg::model::var_tokens, block);
      std::vector<tg::buffer> s{xsum, xq, xs};
      s.resize(std::size_t(sum.slot_count), xs);
      dev.launch(sum, s, vars);
    }
    tg::buffer xb = dev.allocate(std::size_t(K));  // the int8 copy, for kernels that read bytes
    if (tg::model::reads_activation_bytes(kernel))
      dev.launch(tg::model::activation_byte_kernel(K, tg::model::var_tokens), std::vector<tg::buffer>{xb, xq}, vars);
    tg::buffer xsum8 = dev.allocate(std::size_t(K / 8) * 2);  // Q6_K's decode tiles read the per-8 sums
    if (tg::model::reads_activation_sums8(kernel))
      dev.launch(tg::model::activation_sum8_kernel(K, tg::model::var_tokens), std::vector<tg::buffer>{xsum8, xq}, vars);
    slots = {out, w.data, tg::model::reads_activation_bytes(kernel) ? xb : xq, out, out, xs, xsum, w.tiles.data() ? w.tiles : out,
             w.decode_tiles.data() ? w.decode_tiles : out, xsum8};
  } else {
    slots = {out, w.data, xb};
  }
  slots.resize(std::size_t(kernel.slot_count));
  // Points the weight's slots at copy i.
  auto use_copy = [&](std::size_t i) {
    slots[1] = ws[i % ws.size()].data;
    if (slots.size() > 7 && ws[i % ws.size()].tiles.data()) slots[7] = ws[i % ws.size()].tiles;
    if (slots.size() > 8 && ws[i % ws.size()].decode_tiles.data()) slots[8] = ws[i % ws.size()].decode_tiles;
  };
  auto prepared = dev.prepare(kernel);
  prepared.launch(slots, vars);
  dev.synchronize();
  std::vector<double> seconds;
  for (int r = 0; r < runs; ++r) {
    use_copy(std::size_t(r) + 1);
    const auto t0 = clock_type::now();
    prepared.launch(slots, vars);
    dev.synchronize();
    seconds.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> only(argv + 1, argv + argc);
  if (const char* k = std::getenv("MATVEC_K")) K = std::max<std::int64_t>(256, std::atoll(k) / 256 * 256);
  if (const char* mb = std::getenv("MATVEC_MB")) target_bytes = std::max<std::size_t>(1 << 16, std::size_t(std::atof(mb) * (1 << 20)));
  const unsigned threads = unsigned(tg::threads::default_thread_count());
  tg::device dev("CPU");
  std::printf("matvec of %lld-wide weights of about %zu MB, %u threads, one token\n", static_cast<long long>(K),
              target_bytes >> 20, threads);
  // The read bandwidth right before each type's matvec (a VM's swings by half within minutes).
  struct row {
    tensor_type type;
    double gbps, bandwidth;
  };
  std::vector<row> rows;
  for (tensor_type type : {tensor_type::q8_0, tensor_type::q4_0, tensor_type::q4_1, tensor_type::q5_0, tensor_type::q5_1,
                           tensor_type::q4_k, tensor_type::q5_k,
                           tensor_type::q6_k, tensor_type::f16, tensor_type::bf16}) {
    const std::string name(tg::gguf::tensor_type_name(type));
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    const std::vector<tg::model::weight> ws = make_weights(dev, type);
    const double bandwidth = tg::bench::measure_read_bandwidth({.threads = threads, .bytes = std::size_t(512) << 20, .runs = 4});
    const double s = matvec_seconds(dev, ws, std::max(15, int(2 * ws.size())));
    rows.push_back({type, double(ws.front().rows * ws.front().row_bytes) / s / 1e9, bandwidth});
    std::fflush(stdout);
  }
  std::printf("%-6s %10s %16s %8s\n", "type", "GB/s", "read GB/s before", "share");
  for (const row& r : rows)
    std::printf("%-6s %10.2f %16.2f %7.1f%%\n", std::string(tg::gguf::tensor_type_name(r.type)).c_str(), r.gbps, r.bandwidth,
                100.0 * r.gbps / r.bandwidth);
  return 0;
}
