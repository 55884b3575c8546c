// fork_runner.cpp: one forked child per candidate; results come back through a shared mapping.
#include "runtime/tune/fork_runner.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <tg/core/error.hpp>

namespace tg::tune {
namespace {

// Timed runs after the first: more while under timing_budget (the fastest counts), at least one.
// A kernel slower than the budget is timed once: a 2048 matmul on one thread takes seconds a run.
constexpr int max_runs = 50;
constexpr double timing_budget_s = 0.05;

// The child's answer, at the start of the shared mapping; the written slots follow it.
struct child_report {
  int done = 0;  // 1 once everything below is written
  double seconds = 0;
};

constexpr std::size_t round_up(std::size_t n) { return (n + 63) / 64 * 64; }

// Memory the parent allocates before the fork, so the child allocates nothing.
struct shared_mapping {
  void* base = MAP_FAILED;
  std::size_t size = 0;
  explicit shared_mapping(std::size_t n) : size(n) {
    base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) throw device_error(str("tune: cannot map ", size, " bytes for a candidate's results"));
  }
  ~shared_mapping() { munmap(base, size); }
  std::byte* bytes() const { return static_cast<std::byte*>(base); }
};

struct work_buffers {
  std::vector<void*> slots;
  explicit work_buffers(std::span<const slot_info> info) {
    // 64 bytes of slack past each end: vector code may read a whole line past the last element.
    for (const slot_info& s : info) slots.push_back(std::aligned_alloc(64, round_up(s.size_bytes) + 64));
    for (void* p : slots)
      if (p == nullptr) throw device_error("tune: out of host memory for a candidate's buffers");
  }
  ~work_buffers() {
    for (void* p : slots) std::free(p);
  }
};

double now_s() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

[[noreturn]] void child_main(program& candidate, const codegen::kernel_opts& opts, const trial_setup& setup,
                             std::span<void* const> slots, std::byte* shared) {
  // The parent's handlers (a test framework's crash reporter) must not run here: a fault is
  // this candidate's, and the parent reads it from the exit status.
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP}) signal(sig, SIG_DFL);
  try {
    for (std::size_t k = 0; k < slots.size(); ++k)
      std::memcpy(slots[k], (*setup.inputs)[k].data(), (*setup.inputs)[k].size());
    candidate.launch(slots, setup.vars);
    if (setup.hook) setup.hook(opts, slots);
    std::size_t at = round_up(sizeof(child_report));
    for (std::size_t k = 0; k < slots.size(); ++k) {
      if (!setup.slots[k].written) continue;
      std::memcpy(shared + at, slots[k], setup.slots[k].size_bytes);
      at += round_up(setup.slots[k].size_bytes);
    }
    double best = 1e30, start = now_s();
    for (int run = 0; run < max_runs && (run < 1 || now_s() - start < timing_budget_s); ++run) {
      double t0 = now_s();
      candidate.launch(slots, setup.vars);
      best = std::min(best, now_s() - t0);
    }
    auto* report = reinterpret_cast<child_report*>(shared);
    report->seconds = best;
    report->done = 1;
    _exit(0);
  } catch (...) {
    _exit(3);
  }
}

}  // namespace

trial_result fork_runner::run(program& candidate, const codegen::kernel_opts& opts, const trial_setup& setup) {
  std::size_t shared_size = round_up(sizeof(child_report));
  for (const slot_info& s : setup.slots)
    if (s.written) shared_size += round_up(s.size_bytes);
  shared_mapping shared(shared_size);
  work_buffers work(setup.slots);
  new (shared.base) child_report{};

  const pid_t pid = fork();
  if (pid < 0) throw device_error(str("tune: fork failed (", std::strerror(errno), ")"));
  if (pid == 0) child_main(candidate, opts, setup, work.slots, shared.bytes());

  trial_result result;
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + setup.timeout;
  auto nap = std::chrono::microseconds(100);
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      result.detail = str("waitpid failed (", std::strerror(errno), ")");
      return result;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
      result.outcome = trial_result::status::timed_out;
      result.detail = str("no answer after ", setup.timeout.count(), " ms, worker killed");
      return result;
    }
    timespec t{0, long(std::chrono::nanoseconds(nap).count())};
    nanosleep(&t, nullptr);
    nap = std::min(nap * 2, std::chrono::microseconds(5000));
  }
  const auto* report = static_cast<const child_report*>(shared.base);
  if (WIFSIGNALED(status)) {
    result.outcome = trial_result::status::crashed;
    result.detail = str("signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
    return result;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || report->done != 1) {
    result.detail = WIFEXITED(status) ? str("exit status ", WEXITSTATUS(status)) : std::string("worker ended oddly");
    return result;
  }
  result.outcome = trial_result::status::ok;
  result.seconds = report->seconds;
  result.outputs.resize(setup.slots.size());
  std::size_t at = round_up(sizeof(child_report));
  for (std::size_t k = 0; k < setup.slots.size(); ++k) {
    if (!setup.slots[k].written) continue;
    result.outputs[k].assign(shared.bytes() + at, shared.bytes() + at + setup.slots[k].size_bytes);
    at += round_up(setup.slots[k].size_bytes);
  }
  return result;
}

}  // namespace tg::tune
