// engine.cpp: the model thread: queue, slots with prefix reuse, chunked prefill, batched
// decode, sampling and stop sequences; see engine.hpp.
#include "llm/serve/engine.hpp"

#include <chrono>
#include <limits>
#include <optional>

#include <tg/core/error.hpp>
#include <tg/log.hpp>
#include "llm/model/session.hpp"
#include "llm/model/transformer.hpp"
#include "llm/sampling/sampler.hpp"
#include "llm/serve/api_error.hpp"
#include "llm/serve/stop_strings.hpp"
#include "llm/tokenizer/tokenizer.hpp"

namespace tg::serve {
namespace {

using clock = std::chrono::steady_clock;

double seconds_since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }

std::uint64_t microseconds(double s) { return std::uint64_t(s * 1e6); }

}  // namespace

// One sequence of the model: its KV cache's tokens, and the job generating on it.
struct engine::slot {
  int index = 0;                      // the transformer's sequence
  std::vector<llm::token_id> cached;  // tokens whose K/V this sequence's cache holds
  std::uint64_t last_used = 0;
  std::shared_ptr<job> j;             // none: idle
  std::size_t prompt_done = 0;        // prompt tokens in the cache
  bool decoding = false;
  llm::token_id pending = -1;         // sampled and sent, not yet through the model
  std::optional<sampling::sampler> sampler;
  std::optional<tokenizer::stream_decoder> text;
  std::optional<stop_strings> stops;
  job_stats stats;
  clock::time_point phase_start;
};

engine::engine(const llm::model& m, engine_options options, metrics& counters)
    : model_(m), options_(options), counters_(counters) {
  const int caches = m.transformer().sequences();
  if (options.slots < 1 || options.slots > caches)
    throw usage_error(str("serve: ", options.slots, " parallel sequences need as many KV caches; the model was opened with ",
                          caches, " (model_options::sequences)"));
  if (options.slots > m.transformer().chunk_size())
    throw usage_error(str("serve: ", options.slots, " parallel sequences pass the chunk size ", m.transformer().chunk_size(),
                          " (one decode pass takes at most that many)"));
  for (llm::token_id id = 0; id < llm::token_id(m.info().vocab); ++id)
    if (m.is_end_of_generation(id)) end_tokens_.push_back(id);
  for (int i = 0; i < options.slots; ++i) {
    slots_.push_back(std::make_unique<slot>());
    slots_.back()->index = i;
  }
  thread_ = std::thread([this] { run(); });
}

engine::~engine() { shutdown(); }

void engine::submit(std::shared_ptr<job> j) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw api_error(503, "unavailable_error", "the server is shutting down", std::nullopt, "shutting_down");
    // A job waits only when every slot is busy; the limit counts the waiting ones.
    if (queue_.size() >= options_.queue_limit + std::size_t(options_.slots) - std::size_t(counters_.processing)) {
      ++counters_.requests_rejected;
      api_error busy(503, "unavailable_error",
                     str("the server is busy: ", queue_.size(), " requests are waiting (--queue-limit ", options_.queue_limit,
                         "); retry later"),
                     std::nullopt, "queue_full");
      busy.retry_after_seconds = int(std::max<std::size_t>(1, queue_.size()));
      throw busy;
    }
    queue_.push_back(std::move(j));
    counters_.queue_depth = std::int64_t(queue_.size());
  }
  queued_.notify_one();
}

void engine::shutdown() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    stop_now_ = true;
    for (auto& j : queue_) j->finish(finish_reason::shutdown, {});
    queue_.clear();
    counters_.queue_depth = 0;
  }
  queued_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool engine::admit() {
  std::unique_lock lock(mutex_);
  auto active = [&] {
    for (auto& s : slots_)
      if (s->j) return true;
    return false;
  };
  queued_.wait(lock, [&] { return stopping_ || !queue_.empty() || active(); });
  if (stopping_) return false;
  while (!queue_.empty()) {
    // The idle slot whose cache shares the longest prefix with the prompt, else the least
    // recently used one.
    const std::vector<llm::token_id>& prompt = queue_.front()->request.prompt;
    slot* best = nullptr;
    std::size_t best_common = 0;
    for (auto& s : slots_) {
      if (s->j) continue;
      std::size_t common = 0;
      while (common < s->cached.size() && common < prompt.size() && s->cached[common] == prompt[common]) ++common;
      if (!best || common > best_common || (common == best_common && s->last_used < best->last_used)) {
        best = s.get();
        best_common = common;
      }
    }
    if (!best) break;
    std::shared_ptr<job> j = std::move(queue_.front());
    queue_.pop_front();
    start(*best, std::move(j));
  }
  counters_.queue_depth = std::int64_t(queue_.size());
  return true;
}

void engine::start(slot& s, std::shared_ptr<job> j) {
  const generation_request& r = j->request;
  s.j = std::move(j);
  s.last_used = ++clock_;
  s.stats = {};
  s.stats.queued_seconds = seconds_since(s.j->created());
  s.stats.prompt_tokens = std::int64_t(r.prompt.size());
  // The common prefix with the cache, never the last prompt token: its logits are needed.
  std::size_t common = 0;
  while (common + 1 < r.prompt.size() && common < s.cached.size() && s.cached[common] == r.prompt[common]) ++common;
  s.cached.resize(common);
  s.prompt_done = common;
  s.stats.cached_tokens = std::int64_t(common);
  s.decoding = false;
  s.pending = -1;
  s.sampler.emplace(r.sampling, r.seed);
  s.text.emplace(model_.tokenizer());
  s.stops.emplace(r.stop);
  s.phase_start = clock::now();
  counters_.start_processing();
}

void engine::finish(slot& s, finish_reason why, const std::string& error) {
  if (s.decoding) {
    s.stats.decode_seconds = seconds_since(s.phase_start);
  } else {
    s.stats.prompt_seconds = seconds_since(s.phase_start);
  }
  if ((why == finish_reason::stop || why == finish_reason::length) && !s.stops->stopped()) {
    s.j->append(s.stops->push(s.text->flush()));
    s.j->append(s.stops->flush());
    if (s.stops->stopped()) why = finish_reason::stop;
  }
  counters_.prompt_tokens += std::uint64_t(s.stats.prompt_tokens);
  counters_.cached_tokens += std::uint64_t(s.stats.cached_tokens);
  counters_.generated_tokens += std::uint64_t(s.stats.completion_tokens);
  counters_.prompt_microseconds += microseconds(s.stats.prompt_seconds);
  counters_.decode_microseconds += microseconds(s.stats.decode_seconds);
  if (why == finish_reason::cancelled) ++counters_.requests_cancelled;
  ++counters_.requests_total;
  --counters_.processing;
  s.j->finish(why, s.stats, error);
  s.j.reset();
  s.decoding = false;
  s.pending = -1;
}

// The next token from a slot's logits, sent to its client; then the job ends or the token
// waits for the next decode pass.
void engine::take_logits(slot& s, std::span<const float> logits) {
  const generation_request& r = s.j->request;
  const tokenizer::tokenizer& tok = model_.tokenizer();
  if (r.max_tokens >= 0 && s.stats.completion_tokens >= r.max_tokens) return finish(s, finish_reason::length);
  llm::token_id next;
  if (r.ignore_eos) {  // as llama.cpp's server does: the end tokens' logits to -inf
    std::vector<float> masked(logits.begin(), logits.end());
    for (llm::token_id id : end_tokens_) masked[std::size_t(id)] = -std::numeric_limits<float>::infinity();
    next = s.sampler->sample(masked);
  } else {
    next = s.sampler->sample(logits);
  }
  if (tok.is_end_of_generation(next)) return finish(s, finish_reason::stop);
  ++s.stats.completion_tokens;
  s.j->append(s.stops->push(s.text->push(next)));
  if (s.stops->stopped()) return finish(s, finish_reason::stop);
  if (r.max_tokens >= 0 && s.stats.completion_tokens >= r.max_tokens) return finish(s, finish_reason::length);
  if (std::int64_t(s.cached.size()) >= model_.transformer().max_context()) return finish(s, finish_reason::length);
  s.pending = next;
}

// Prompt chunks of the slots still reading their prompts, in order of arrival, up to one
// chunk's worth of tokens in all: running streams wait for at most that between two tokens,
// and short prompts arriving together (each cut into a multiple of the token tile and a
// remainder, two forwards) start generating in one step, not one forward per step.
void engine::prefill_step() {
  model::transformer& net = model_.transformer();
  std::int64_t budget = net.chunk_size();
  for (bool first = true;; first = false) {
    slot* s = nullptr;
    for (auto& candidate : slots_)
      if (candidate->j && !candidate->decoding && (!s || candidate->last_used < s->last_used)) s = candidate.get();
    if (!s) return;
    const std::int64_t left = std::int64_t(s->j->request.prompt.size() - s->prompt_done);
    // The first of the chunks session::prefill would cut, so the cache holds the same values.
    const std::int64_t n = model::prefill_chunks(left, net.chunk_size(), net.token_tile()).front();
    if (!first && n > budget) return;
    budget -= n;
    prefill_chunk(*s, std::size_t(n));
  }
}

void engine::prefill_chunk(slot& s, std::size_t n) {
  model::transformer& net = model_.transformer();
  const std::vector<llm::token_id>& prompt = s.j->request.prompt;
  const bool last = s.prompt_done + n == prompt.size();
  try {
    std::vector<float> logits = net.forward(std::span(prompt).subspan(s.prompt_done, n), std::int64_t(s.prompt_done),
                                            last ? model::head::last : model::head::none, s.index);
    s.cached.insert(s.cached.end(), prompt.begin() + std::ptrdiff_t(s.prompt_done),
                    prompt.begin() + std::ptrdiff_t(s.prompt_done + n));
    s.prompt_done += n;
    if (!last) return;
    s.stats.prompt_seconds = seconds_since(s.phase_start);
    s.decoding = true;
    s.phase_start = clock::now();
    take_logits(s, logits);
  } catch (const std::exception& e) {
    // A fault of ours or of the device: this client gets it as an error, the server goes on.
    log(log_level::error, str("serve: prefill failed: ", e.what()));
    s.cached.clear();
    finish(s, finish_reason::error, e.what());
  }
}

// One pass over every slot with a token waiting: one row each.
void engine::decode_step() {
  std::vector<slot*> batch;
  std::vector<llm::token_id> tokens;
  std::vector<std::int64_t> positions;
  std::vector<int> sequences;
  for (auto& s : slots_)
    if (s->j && s->decoding && s->pending >= 0) {
      batch.push_back(s.get());
      tokens.push_back(s->pending);
      positions.push_back(std::int64_t(s->cached.size()));
      sequences.push_back(s->index);
    }
  if (batch.empty()) return;
  const std::int64_t vocab = model_.info().vocab;
  try {
    std::vector<float> logits = model_.transformer().decode_batch(tokens, positions, sequences);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      slot& s = *batch[i];
      s.cached.push_back(s.pending);
      s.pending = -1;
      take_logits(s, std::span(logits).subspan(i * std::size_t(vocab), std::size_t(vocab)));
    }
  } catch (const std::exception& e) {
    log(log_level::error, str("serve: decode failed: ", e.what()));
    for (slot* s : batch) {
      s->cached.clear();
      finish(*s, finish_reason::error, e.what());
    }
  }
}

void engine::run() {
  while (admit()) {
    for (auto& s : slots_)
      if (s->j && (s->j->cancelled() || stop_now_)) finish(*s, s->j->cancelled() ? finish_reason::cancelled : finish_reason::shutdown);
    prefill_step();
    decode_step();
  }
  for (auto& s : slots_)
    if (s->j) finish(*s, finish_reason::shutdown);
}

}  // namespace tg::serve
