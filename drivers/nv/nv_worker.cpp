// nv_worker.cpp: see nv_worker.hpp.
#include "drivers/nv/nv_worker.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <tg/core/error.hpp>

extern char** environ;

namespace tg::nv {

namespace {

constexpr auto start_timeout = std::chrono::seconds(60);  // cuInit and a context: a second or two on a real card

std::string how_it_ended(int status) {
  if (WIFSIGNALED(status)) return str("signal ", WTERMSIG(status), " (", strsignal(WTERMSIG(status)), ")");
  if (WIFEXITED(status)) return str("exit status ", WEXITSTATUS(status));
  return "ended oddly";
}

}  // namespace

std::string nv_worker_path() {
  if (const char* v = std::getenv("TG_NV_WORKER"); v != nullptr && *v != '\0') return v;
  Dl_info self{};
  std::string looked;
  if (dladdr(reinterpret_cast<void*>(&nv_worker_path), &self) != 0 && self.dli_fname != nullptr) {
    std::string dir = self.dli_fname;
    dir = dir.find('/') == std::string::npos ? std::string(".") : dir.substr(0, dir.rfind('/'));
    for (const std::string& candidate : {dir + "/tg-nv-worker", dir + "/tg/tg-nv-worker"}) {
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
      looked += (looked.empty() ? "" : ", ") + candidate;
    }
  }
  throw device_error("NV: BEAM runs candidates in the program tg-nv-worker, which is not installed beside libtg (looked at " +
                     (looked.empty() ? std::string("nothing: libtg's path is unknown") : looked) +
                     "); set TG_NV_WORKER to its path");
}

nv_worker::~nv_worker() {
  if (running()) stop(false);
}

void nv_worker::start() {
  const std::string path = nv_worker_path();
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw device_error(str("NV: cannot make a socket for the BEAM worker (", std::strerror(errno), ")"));
  // The worker's end becomes its fd 3 (dup2 clears close-on-exec there); nothing else of ours leaks.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 3);
  const std::string ordinal = std::to_string(ordinal_);
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("3"), const_cast<char*>(ordinal.c_str()), nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    throw device_error(str("NV: cannot start the BEAM worker ", path, " (", std::strerror(spawned), ")"));
  }
  pid_ = pid;
  socket_ = fds[0];
  ++starts_;
  worker::message hello;
  const worker::received got = receive(hello, worker::clock::now() + start_timeout);
  if (got == worker::received::ok && hello.of == worker::kind::ready) return;
  std::string why;
  if (got == worker::received::ok && hello.of == worker::kind::failed) why = worker::message_reader(hello.payload).text();
  const std::string ended = stop(got == worker::received::timed_out);  // else it has ended, or is ending
  throw device_error(str("NV: the BEAM worker ", path, " did not open GPU ", ordinal_, " (",
                         why.empty() ? ended : why, ")"));
}

bool nv_worker::send(worker::kind of, std::span<const std::byte> payload, worker::clock::time_point deadline) {
  return running() && worker::send_message(socket_, of, payload, deadline);
}

worker::received nv_worker::receive(worker::message& out, worker::clock::time_point deadline) {
  if (!running()) return worker::received::closed;
  return worker::receive_message(socket_, out, deadline);
}

std::string nv_worker::stop(bool kill_it) {
  if (!running()) return "not running";
  close(socket_);  // a worker waiting for a request ends at once
  socket_ = -1;
  int status = 0;
  pid_t done = 0;
  // One that is not killed gets a moment to exit by itself (after a fault it is on its way).
  for (int i = 0; !kill_it && i < 200 && (done = waitpid(pid_, &status, WNOHANG)) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::string ended;
  if (done != pid_) {
    kill(pid_, SIGKILL);
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    ended = "killed";
  } else {
    ended = how_it_ended(status);
  }
  pid_ = -1;
  return ended;
}

}  // namespace tg::nv
