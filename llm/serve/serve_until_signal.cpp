// serve_until_signal.cpp: SIGINT/SIGTERM stop the server cleanly. The handler only writes a
// byte to a pipe (write is async-signal-safe, signal-safety(7)); a thread waiting on the pipe
// does the stopping, whichever thread the signal landed on.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include <tg/core/error.hpp>
#include <tg/log.hpp>
#include "llm/serve/server.hpp"

namespace tg::serve {
namespace {

std::atomic<int> wake_fd{-1};

extern "C" void on_stop_signal(int) {
  const int saved = errno;
  const char byte = 1;
  if (int fd = wake_fd.load(); fd >= 0) (void)!write(fd, &byte, 1);
  errno = saved;
}

}  // namespace

void serve_until_signal(const llm::model& m, const server_options& options) {
  server s(m, options);
  int fds[2];
  if (pipe(fds) != 0) throw device_error(str("serve: pipe() failed: ", std::strerror(errno)));
  wake_fd = fds[1];
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  // A client that leaves mid-write must not kill the process.
  signal(SIGPIPE, SIG_IGN);
  std::thread watcher([&] {
    char byte = 0;
    while (read(fds[0], &byte, 1) < 0 && errno == EINTR) {
    }
    if (byte == 1) log(log_level::info, "serve: stopping (signal): ending in-flight requests");
    s.stop();
  });
  log(log_level::info, str("serve: listening on http://", options.host, ":", s.port(), " (model \"", m.info().name, "\")"));
  s.run();
  // run() also returns if listening failed; wake the watcher either way.
  const char done = 0;
  (void)!write(fds[1], &done, 1);
  watcher.join();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  wake_fd = -1;
  close(fds[0]);
  close(fds[1]);
  log(log_level::info, "serve: stopped");
}

}  // namespace tg::serve
