// server_process.hpp: `llm --serve 0` started as a child process for tests, on a free
// loopback port read back from its "serve: listening on" line, and stopped with a signal.
//
//   server_process s({"--max-context", "4096"});   // $TG_SERVE_LLM -m $TG_SERVE_MODEL --serve 0 ...
//   httplib::Client c("127.0.0.1", s.port());
//   int status = s.stop(SIGTERM);                  // the exit status
#pragma once
#include <string>
#include <vector>

namespace tg::test {

class server_process {
 public:
  explicit server_process(const std::vector<std::string>& extra_args);
  ~server_process();  // SIGKILL if still running
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  int port() const { return port_; }
  // Sends `signal`, waits up to timeout_seconds; returns the exit code (or 128 + the signal
  // that ended it, or -1 when it did not end in time and was killed).
  int stop(int signal, int timeout_seconds = 20);
  // What the server wrote to stderr so far (for failure messages).
  const std::string& output() const { return output_; }

 private:
  int pid_ = -1, port_ = 0, stderr_fd_ = -1;
  std::string output_;
  void drain();
};

}  // namespace tg::test
