// nv_worker.hpp: the runner's side of tg-nv-worker (nv_worker_main.cpp): finding the program,
// starting it on a socket pair with posix_spawn, a message each way with a deadline, and ending
// it (SIGKILL for one that does not answer). The worker is started at the first candidate and
// again after one ended it; dropping this ends the worker.
//
// The program is found at $TG_NV_WORKER, else beside libtg (the build tree: build/drivers), else in
// tg/ beside it (an installed libtg: <libdir>/tg/tg-nv-worker, where meson installs it).
#pragma once
#include <sys/types.h>

#include <optional>
#include <string>

#include "drivers/nv/nv_worker_protocol.hpp"

namespace tg::nv {

class nv_worker {
 public:
  explicit nv_worker(int ordinal) : ordinal_(ordinal) {}
  ~nv_worker();
  nv_worker(const nv_worker&) = delete;
  nv_worker& operator=(const nv_worker&) = delete;

  bool running() const { return pid_ > 0; }
  // Starts it and waits for it to open the GPU; device_error with what it said (or how it ended)
  // when it cannot.
  void start();
  bool send(worker::kind of, std::span<const std::byte> payload, worker::clock::time_point deadline);
  worker::received receive(worker::message& out, worker::clock::time_point deadline);
  // Ends it (killed unless it has exited by itself) and says how it ended: "signal 11
  // (Segmentation fault)", "exit status 2", "killed".
  std::string stop(bool kill_it);

  int starts() const { return starts_; }  // workers started so far (tests: a fault costs one)

 private:
  int ordinal_;
  pid_t pid_ = -1;
  int socket_ = -1;
  int starts_ = 0;
};

// Where the worker program is (above); device_error naming the places looked at when nowhere.
std::string nv_worker_path();

}  // namespace tg::nv
