// llama_bench_runner.cpp: see llama_bench_runner.hpp. The CSV columns are those of
// llama.cpp's examples/llama-bench/llama-bench.cpp (test::get_fields): n_prompt, n_gen, avg_ts.
#include "tests/bench/llama_bench_runner.hpp"

#include <cstdio>
#include <memory>
#include <sstream>
#include <vector>

#include <tg/core/error.hpp>

namespace tg::bench {
namespace {

// One CSV line; fields may be quoted ("a,b"), with "" for a quote inside.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else if (c != '\r') out.back() += c;
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

llama_bench_figures parse_llama_bench_csv(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line))
    if (line.find("n_prompt") != std::string::npos) header = csv_fields(line);
  auto column = [&](const char* name) {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    throw usage_error(str("llama-bench output has no column '", name, "'"));
  };
  if (header.empty()) throw usage_error("llama-bench output has no CSV header (a line naming n_prompt, n_gen, avg_ts)");
  const std::size_t n_prompt = column("n_prompt"), n_gen = column("n_gen"), avg_ts = column("avg_ts");
  llama_bench_figures f;
  while (std::getline(in, line)) {
    const auto v = csv_fields(line);
    if (v.size() != header.size()) continue;
    const double tps = std::stod(v[avg_ts]);
    if (std::stoll(v[n_prompt]) > 0 && std::stoll(v[n_gen]) == 0) f.prefill_tps = tps;
    if (std::stoll(v[n_prompt]) == 0 && std::stoll(v[n_gen]) > 0) f.decode_tps = tps;
  }
  if (f.prefill_tps <= 0 || f.decode_tps <= 0)
    throw usage_error("llama-bench output lacks a prompt (pp) or a generation (tg) row");
  return f;
}

llama_bench_figures run_llama_bench(const std::string& binary, const std::filesystem::path& model, unsigned threads,
                                    long long prompt, long long generate, int repetitions) {
  const std::string command = str(shell_quote(binary), " -m ", shell_quote(model.string()), " -t ", threads, " -p ", prompt,
                                  " -n ", generate, " -r ", repetitions, " -o csv 2>&1");
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw usage_error(str("cannot run llama-bench: ", command));
  std::string output;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe.get())) output.append(buf, n);
  const int status = pclose(pipe.release());
  if (status != 0) throw usage_error(str("llama-bench exited with status ", status, ": ", command, "\n", output));
  try {
    return parse_llama_bench_csv(output);
  } catch (const usage_error& e) {
    throw usage_error(str(e.what(), "; it printed:\n", output));
  }
}

}  // namespace tg::bench
