// nv_worker_protocol.hpp: the messages between BEAM's NV candidate runner (nv_candidate_runner.hpp)
// and its worker process (tg-nv-worker, nv_worker_main.cpp), over a Unix stream socket. A frame is
// a header (the kind, the payload's length) and the payload, built with message_writer and taken
// apart with message_reader, which checks every length against what arrived: a peer that died
// half-way through a message is a malformed message, never a read past the end.
//
//   parent                                   worker
//            <- ready (the GPU's name)          opened the GPU
//   set_slots (sizes, written?, bytes) ->       allocates the stand-ins, keeps the bytes
//            <- slots_ready
//   run (PTX, entry, grid, parameters) ->       loads it, restores the written slots, runs it once,
//            <- ran (seconds, written slots)    reads them back, times `timed runs` more
//            <- refused (why)                   the driver would not load or launch it; goes on
//            <- faulted (why)                   the GPU stopped it: the context is lost, it exits
//            <- failed (why)                    cannot go on (start-up, memory); it exits
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tg::nv::worker {

enum class kind : std::uint32_t {
  set_slots = 1,  // u32 n; n x (u64 size, u8 written, size bytes)
  run = 2,        // text ptx, text entry, u64 blocks, u32 block size, u32 n, n x (u8 is slot, u64 slot or value), u32 timed runs
  ready = 100,    // text device name
  slots_ready = 101,
  ran = 102,      // f64 seconds, u32 n, n x (u32 slot, u64 size, bytes)
  refused = 103,  // text why
  faulted = 104,  // text why
  failed = 105,   // text why
};

struct message {
  kind of{};
  std::vector<std::byte> payload;
};

class message_writer {
 public:
  message_writer& u8(std::uint8_t v) { return raw(&v, sizeof v); }
  message_writer& u32(std::uint32_t v) { return raw(&v, sizeof v); }
  message_writer& u64(std::uint64_t v) { return raw(&v, sizeof v); }
  message_writer& f64(double v) { return raw(&v, sizeof v); }
  message_writer& bytes(std::span<const std::byte> b) { return u64(b.size()).raw(b.data(), b.size()); }
  message_writer& text(const std::string& s) { return bytes(std::as_bytes(std::span(s))); }
  std::vector<std::byte> data;

 private:
  message_writer& raw(const void* p, std::size_t n);
};

// Each read throws std::runtime_error("malformed message from the NV worker ...") past the end.
class message_reader {
 public:
  explicit message_reader(std::span<const std::byte> payload) : rest_(payload) {}
  std::uint8_t u8() { return value<std::uint8_t>(); }
  std::uint32_t u32() { return value<std::uint32_t>(); }
  std::uint64_t u64() { return value<std::uint64_t>(); }
  double f64() { return value<double>(); }
  std::span<const std::byte> bytes();  // a view into the payload
  std::string text();

 private:
  template <class T>
  T value() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  void take(void* out, std::size_t n);
  std::span<const std::byte> rest_;
};

using clock = std::chrono::steady_clock;

// Writes one whole frame. false when the peer is gone or `deadline` passed first (the worker
// waits with none: nullopt). Never raises SIGPIPE.
bool send_message(int fd, kind of, std::span<const std::byte> payload, std::optional<clock::time_point> deadline);

enum class received { ok, closed, timed_out, malformed };
// Reads one whole frame into `out`: closed when the peer went away (or died) before or within it.
received receive_message(int fd, message& out, std::optional<clock::time_point> deadline);

}  // namespace tg::nv::worker
