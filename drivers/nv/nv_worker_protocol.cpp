// nv_worker_protocol.cpp: see nv_worker_protocol.hpp.
#include "drivers/nv/nv_worker_protocol.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tg::nv::worker {

namespace {

struct frame_header {
  std::uint32_t magic = 0x766e6774;  // "tgnv"
  std::uint32_t of = 0;
  std::uint64_t length = 0;
};

// Frames larger than this are a broken stream, not a message: the stand-ins of the largest
// kernel (an 8B model's output head) are a few GiB at most.
constexpr std::uint64_t max_payload = std::uint64_t(16) << 30;

// Waits until `fd` is ready for `events`; false at the deadline.
bool wait_for(int fd, short events, std::optional<clock::time_point> deadline) {
  for (;;) {
    int timeout_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - clock::now()).count();
      if (left <= 0) return false;
      timeout_ms = int(std::min<long long>(left, 1000));
    }
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, timeout_ms);
    if (n > 0) return true;  // ready, or hung up / in error: the read or write says which
    if (n < 0 && errno != EINTR) return true;
  }
}

enum class io { ok, closed, timed_out };

io write_all(int fd, const std::byte* p, std::size_t n, std::optional<clock::time_point> deadline) {
  while (n > 0) {
    if (!wait_for(fd, POLLOUT, deadline)) return io::timed_out;
    const ssize_t w = send(fd, p, std::min<std::size_t>(n, 1 << 20), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return io::closed;
    }
    p += w, n -= std::size_t(w);
  }
  return io::ok;
}

io read_all(int fd, std::byte* p, std::size_t n, std::optional<clock::time_point> deadline) {
  while (n > 0) {
    if (!wait_for(fd, POLLIN, deadline)) return io::timed_out;
    const ssize_t r = recv(fd, p, std::min<std::size_t>(n, 1 << 20), MSG_DONTWAIT);
    if (r == 0) return io::closed;
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return io::closed;
    }
    p += r, n -= std::size_t(r);
  }
  return io::ok;
}

}  // namespace

message_writer& message_writer::raw(const void* p, std::size_t n) {
  const auto* b = static_cast<const std::byte*>(p);
  data.insert(data.end(), b, b + n);
  return *this;
}

void message_reader::take(void* out, std::size_t n) {
  if (n > rest_.size())
    throw std::runtime_error("malformed message from the NV worker (it ends " + std::to_string(n - rest_.size()) +
                             " bytes early)");
  std::memcpy(out, rest_.data(), n);
  rest_ = rest_.subspan(n);
}

std::span<const std::byte> message_reader::bytes() {
  const std::uint64_t n = u64();
  if (n > rest_.size()) throw std::runtime_error("malformed message from the NV worker (a field longer than the message)");
  const std::span<const std::byte> b = rest_.first(std::size_t(n));
  rest_ = rest_.subspan(std::size_t(n));
  return b;
}

std::string message_reader::text() {
  const std::span<const std::byte> b = bytes();
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

bool send_message(int fd, kind of, std::span<const std::byte> payload, std::optional<clock::time_point> deadline) {
  frame_header h;
  h.of = std::uint32_t(of);
  h.length = payload.size();
  if (write_all(fd, reinterpret_cast<const std::byte*>(&h), sizeof h, deadline) != io::ok) return false;
  return write_all(fd, payload.data(), payload.size(), deadline) == io::ok;
}

received receive_message(int fd, message& out, std::optional<clock::time_point> deadline) {
  frame_header h;
  switch (read_all(fd, reinterpret_cast<std::byte*>(&h), sizeof h, deadline)) {
    case io::closed: return received::closed;
    case io::timed_out: return received::timed_out;
    case io::ok: break;
  }
  if (h.magic != frame_header{}.magic || h.length > max_payload) return received::malformed;
  out.of = kind(h.of);
  out.payload.resize(std::size_t(h.length));
  switch (read_all(fd, out.payload.data(), out.payload.size(), deadline)) {
    case io::closed: return received::closed;
    case io::timed_out: return received::timed_out;
    case io::ok: break;
  }
  return received::ok;
}

}  // namespace tg::nv::worker
