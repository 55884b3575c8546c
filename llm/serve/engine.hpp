// engine.hpp: the one thread that runs the model for the server, with continuous batching.
// Requests wait in a bounded queue (full: 503 with Retry-After, as Ollama's OLLAMA_MAX_QUEUE)
// for one of `slots` sequences, each with its own KV cache. Every step runs prompt chunks of
// joining requests, up to one chunk's worth of tokens in all, then one decode pass over every
// generating slot together (transformer::decode_batch: each row bit-identical to that sequence
// decoded alone), so prompts stall running streams by at most one chunk's worth per token
// (llama.cpp server: update_slots).
// A slot keeps its tokens between requests, and a request takes the idle slot sharing the
// longest prefix with its prompt, so a follow-up turn of a chat computes only its new text.
// Cancelled jobs (the client left) leave at the next step.
//
//   engine e(model, {.slots = 4, .queue_limit = 16}, counters);
//   auto j = std::make_shared<job>(request);
//   e.submit(j);                       // throws api_error 503 when the queue is full
//   for (job_update u; (u = j->wait(100ms)).finished == finish_reason::none;) send(u.text);
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <tg/llm/model.hpp>
#include "llm/serve/job.hpp"
#include "llm/serve/metrics.hpp"

namespace tg::serve {

struct engine_options {
  int slots = 1;                 // sequences generated at once; the model needs as many KV caches
  std::size_t queue_limit = 16;  // requests waiting for a slot
};

class engine {
 public:
  // Throws usage_error when the model has fewer KV caches (model_options::sequences) than slots.
  engine(const llm::model& m, engine_options options, metrics& counters);
  ~engine();  // shutdown()
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  // Queues the job. Throws api_error 503 (with a Retry-After) when the queue is full or the
  // server is stopping.
  void submit(std::shared_ptr<job> j);

  // Refuses new jobs, ends queued and running ones with finish_reason::shutdown, and joins
  // the thread. Idempotent.
  void shutdown();

  struct slot;

 private:
  void run();
  bool admit();  // moves queued jobs into idle slots; false when the engine is stopping
  void start(slot& s, std::shared_ptr<job> j);
  void prefill_step();
  void prefill_chunk(slot& s, std::size_t n);
  void decode_step();
  void take_logits(slot& s, std::span<const float> logits);
  void finish(slot& s, finish_reason why, const std::string& error = {});

  const llm::model& model_;
  engine_options options_;
  metrics& counters_;
  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<std::shared_ptr<job>> queue_;
  bool stopping_ = false;
  std::atomic<bool> stop_now_{false};
  std::vector<std::unique_ptr<slot>> slots_;
  std::vector<llm::token_id> end_tokens_;  // every end-of-generation id, for ignore_eos
  std::uint64_t clock_ = 0;  // orders slot use, for least-recently-used choice
  std::thread thread_;
};

}  // namespace tg::serve
