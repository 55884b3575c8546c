// server_process.cpp: fork/exec of the llm command in --serve mode; see server_process.hpp.
#include "tests/llm/serve/server_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace tg::test {
namespace {

std::string env_or_throw(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') throw std::runtime_error(std::string("set ") + name + " (meson test does)");
  return v;
}

}  // namespace

server_process::server_process(const std::vector<std::string>& extra_args) {
  std::vector<std::string> args = {env_or_throw("TG_SERVE_LLM"), "-m", env_or_throw("TG_SERVE_MODEL"), "--serve", "0",
                                   "--threads", "1"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  stderr_fd_ = fds[0];
  fcntl(stderr_fd_, F_SETFL, fcntl(stderr_fd_, F_GETFL) | O_NONBLOCK);
  const std::string marker = "serve: listening on http://127.0.0.1:";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{stderr_fd_, POLLIN, 0};
    poll(&p, 1, 100);
    drain();
    if (auto at = output_.find(marker); at != std::string::npos) {
      port_ = std::atoi(output_.c_str() + at + marker.size());
      if (port_ > 0) return;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("the server exited before listening:\n" + output_);
    }
  }
  throw std::runtime_error("the server did not start listening within 120 s:\n" + output_);
}

void server_process::drain() {
  char buf[4096];
  for (ssize_t n; (n = read(stderr_fd_, buf, sizeof buf)) > 0;) output_.append(buf, std::size_t(n));
}

int server_process::stop(int signal, int timeout_seconds) {
  if (pid_ < 0) return -1;
  kill(pid_, signal);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    drain();
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  drain();
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

server_process::~server_process() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (stderr_fd_ >= 0) close(stderr_fd_);
}

}  // namespace tg::test
