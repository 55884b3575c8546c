// am_device_copy.cpp: allocations, zeroing and host <-> VRAM copies of an am_device (see
// am_device.hpp): the BAR0 mapping, the USB staging window (tinygrad/runtime/support/usb.py) or a DMA bounce
// buffer, each moved by SDMA in chunks of the window.
//
// USB copy-in pipeline (tinygrad/runtime/support/usb.py), when the window has a fence: two 256 KiB
// windows (SRAM slot 0 and slot 16). Chunk s (payload up to 256 KiB - 4) goes to window s & 1 as
// one contiguous wire image: the payload (padded to a dword), then the sentinel
// 0x51000000 | (s & 0xFFFFFF), padded to whole sectors, written from the window's first slot in
// one 0xF2 write. SDMA does, per chunk: POLL_REGMEM until the sentinel's dword holds it,
// COPY_LINEAR window -> VRAM, WRITE the 64-bit fence := s + 1 (the fence lives in sys_buf, not
// in the data area: the GPU never writes the SRAM the host streams into). The host writes chunk s
// only once the fence shows chunk s - 2 drained, so it streams one window while SDMA copies the
// other. Full chunks end exactly at the window's last dword, which only ever holds sentinels
// (of other sequence numbers, or zeros the host writes after a copy-out used the windows), so no
// stale dword can match a full chunk's poll; a copy's last chunk, whose sentinel may fall where an
// older chunk's payload lies, is submitted to SDMA only after its image is in the window.
#include <algorithm>
#include <cstring>
#include <vector>

#include <tg/core/error.hpp>

#include "drivers/amd/am_device.hpp"
#include "runtime/queue/sdma.hpp"

namespace tg::amd {

namespace {
constexpr std::uint64_t page = 4096;
constexpr std::uint64_t sector = 512;                // the bridge moves whole sectors (usb_sram.hpp)
constexpr std::uint64_t bounce_bytes = 2ull << 20;   // PCI without a BAR mapping of the range
constexpr std::uint64_t slot = 16 << 10;             // a 0xF2 write starts on a 16 KiB slot
constexpr std::uint64_t window = 256 << 10;          // one copy-in window (tinygrad/runtime/support/usb.py)
constexpr std::uint64_t payload_max = window - 4;    // the last dword is the sentinel
constexpr std::uint64_t group_chunks = 256;          // chunks per SDMA submission: 24 KiB of ring
// Copies up to this size go straight through BAR0 where the CPU cannot map it (the USB bridge:
// one 0xF0 stream write, two transfers) instead of the window and SDMA (about 20 transfers with the
// SDMA job and its polls). At the bridge's modelled rates (drivers/emu/usb/bridge_config.hpp:
// 3.6 MB/s streamed, 20 us a request) the two cost the same near 1.4 KiB. A decode step's token
// and RoPE rows are a few hundred bytes.
constexpr std::uint64_t small_copy_bytes = 1024;
std::uint32_t sentinel(std::uint64_t sequence) { return 0x51000000u | std::uint32_t(sequence & 0xFFFFFF); }
std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }
}  // namespace

allocation am_device::allocate(std::uint64_t bytes, bool cpu_visible, std::uint64_t align) {
  // Until SDMA runs, zeroing goes through BAR0, so everything allocated before must lie inside it.
  allocation a = mem_->allocate(bytes, cpu_visible || !sdma_ready_, align);
  ++allocations_made_;
  try {
    zero(a);
  } catch (...) {
    mem_->release(a);
    throw;
  }
  return a;
}

void am_device::release(const allocation& a) { mem_->release(a); }

std::uint64_t am_device::free_bytes() const { return mem_->allocatable_bytes(); }

queue::queue_memory am_device::host_memory(const allocation& a) { return mem_->host_memory(a); }

void am_device::zero(const allocation& a) {
  if (!sdma_ready_) return ctx_.zero_vram(a.pa, a.bytes);  // bounded BAR0 writes (am_context)
  queue::cmd_buffer cb;
  queue::sdma::emit_const_fill(cb, a.va, 0, a.bytes);
  run_copy(cb);
}

void am_device::run_copy(const queue::cmd_buffer& cb) { copy_->wait(copy_->submit(cb), ctx_.opt.queue_timeout); }

void am_device::require_range(const char* op, const allocation& a, std::uint64_t offset, std::uint64_t bytes) const {
  if (offset > a.bytes || bytes > a.bytes - offset)
    throw usage_error(str(ctx_.name(), ": ", op, " of ", bytes, " bytes at offset ", offset, " leaves the ", a.bytes,
                          "-byte allocation at VA ", hex{a.va.value}));
}

void am_device::set_up_staging() {
  staging_ = t_.staging();
  if (!staging_) return;
  std::vector<std::uint64_t> pages;
  for (std::uint64_t o = 0; o < staging_->size(); o += page) pages.push_back(staging_->bus_address() + o);
  staging_va_ = mem_->map_system(pages);
  const std::uint64_t release = staging_->release_bus_address();
  const std::uint64_t release_page = release / page * page;
  release_va_ = mem_->map_system(std::span(&release_page, 1)) + (release - release_page);
  const std::uint64_t fence = staging_->fence_bus_address();
  if (fence == 0 || staging_->size() < 2 * window) return;  // copy_in_staged, one chunk at a time
  const std::uint64_t fence_page = fence / page * page;
  fence_va_ = mem_->map_system(std::span(&fence_page, 1)) + (fence - fence_page);
  queue::cmd_buffer cb;  // the fence starts at the first sequence number
  const std::uint32_t zero[2] = {0, 0};
  queue::sdma::emit_write(cb, fence_va_, zero);
  run_copy(cb);
}

void am_device::copy_in(const allocation& dst, std::uint64_t offset, std::span<const std::byte> src) {
  require_range("copy_in", dst, offset, src.size());
  if (src.empty()) return;
  const std::uint64_t at = dst.pa.value + offset;
  if (mem_->bar0_mapped() && at + src.size() <= mem_->bar0_bytes()) {
    std::memcpy(mem_->bar0_mapping() + at, src.data(), src.size());
    ctx_.io.flush_hdp();  // the CPU's writes reach VRAM before an engine reads them (amdgpu_device.c: amdgpu_device_flush_hdp)
    return;
  }
  if (staging_ && src.size() <= small_copy_bytes && at % 4 == 0 && src.size() % 4 == 0 &&
      at + src.size() <= mem_->bar0_bytes()) {
    ctx_.write_vram(memory::gpu_pa{at}, src);  // bounded streaming writes through the bridge
    ctx_.io.flush_hdp();
    return;
  }
  if (staging_ && fence_va_.value != 0) return copy_in_pipelined(dst.va + offset, src);
  if (staging_) return copy_in_staged(dst.va + offset, src);
  copy_in_bounced(dst.va + offset, src);
}

void am_device::copy_out(std::span<std::byte> dst, const allocation& src, std::uint64_t offset) {
  require_range("copy_out", src, offset, dst.size());
  if (dst.empty()) return;
  const std::uint64_t at = src.pa.value + offset;
  if (mem_->bar0_mapped() && at + dst.size() <= mem_->bar0_bytes()) {
    ctx_.io.flush_hdp();
    std::memcpy(dst.data(), mem_->bar0_mapping() + at, dst.size());
    return;
  }
  if (staging_) return copy_out_staged(dst, src.va + offset);
  copy_out_bounced(dst, src.va + offset);
}

// Host -> window (0xF2 bulk), then SDMA window -> VRAM; the next chunk waits for that copy
// because it reuses the window.
void am_device::copy_in_staged(memory::gpu_va dst, std::span<const std::byte> src) {
  std::vector<std::byte> tail;
  for (std::uint64_t done = 0; done < src.size();) {
    const std::uint64_t n = std::min<std::uint64_t>(staging_->size(), src.size() - done);
    std::span<const std::byte> piece = src.subspan(done, n);
    if (n % sector) {  // the last sector goes out whole; the bytes after the copy are never used
      tail.assign(round_up(n, sector), std::byte{0});
      std::copy(piece.begin(), piece.end(), tail.begin());
      piece = tail;
    }
    staging_->write(0, piece);
    queue::cmd_buffer cb;
    queue::sdma::emit_copy_linear(cb, dst + done, staging_va_, n);
    run_copy(cb);
    done += n;
  }
}

// The packets of chunk `c` of a pipelined copy (the banner).
void am_device::emit_chunk(queue::cmd_buffer& cb, memory::gpu_va dst, std::uint64_t s, std::uint64_t bytes) {
  const memory::gpu_va win = staging_va_ + (s & 1) * window;
  queue::sdma::emit_poll_regmem(cb, win + round_up(bytes, 4), queue::compare::equal, sentinel(s));
  queue::sdma::emit_copy_linear(cb, dst, win, bytes);
  const std::uint32_t fence[2] = {std::uint32_t(s + 1), std::uint32_t((s + 1) >> 32)};
  queue::sdma::emit_write(cb, fence_va_, fence);
}

// The pipeline of the banner. Sequence numbers are taken before anything can fail, so a failed
// copy never reuses one; it leaves the windows dirty.
void am_device::copy_in_pipelined(memory::gpu_va dst, std::span<const std::byte> src) {
  const std::uint64_t chunks = (src.size() + payload_max - 1) / payload_max;
  const std::uint64_t first = copy_sequence_;
  copy_sequence_ += chunks;
  const bool was_dirty = windows_dirty_;
  windows_dirty_ = true;
  if (was_dirty) {  // zero the last slot of both windows, where full chunks' sentinels go
    const std::vector<std::byte> zeros(slot);
    staging_->write(window - slot, zeros);
    staging_->write(2 * window - slot, zeros);
  }
  auto piece = [&](std::uint64_t c) {
    return src.subspan(c * payload_max, std::min(payload_max, src.size() - c * payload_max));
  };
  const std::uint64_t last_chunk = chunks - 1;
  for (std::uint64_t group = 0; group < last_chunk; group += group_chunks) {  // all but the last chunk
    const std::uint64_t end = std::min(last_chunk, group + group_chunks);
    queue::cmd_buffer cb;
    for (std::uint64_t c = group; c < end; ++c) emit_chunk(cb, dst + c * payload_max, first + c, payload_max);
    copy_->submit(cb);
    for (std::uint64_t c = group; c < end; ++c) {
      if (c >= 2) wait_fence(first + c - 1);  // chunk c - 2 has left this window
      stream_chunk(first + c, piece(c));
    }
  }
  if (last_chunk >= 2) wait_fence(first + last_chunk - 1);
  stream_chunk(first + last_chunk, piece(last_chunk));
  queue::cmd_buffer cb;  // after its image: the poll can only see this chunk's sentinel
  emit_chunk(cb, dst + last_chunk * payload_max, first + last_chunk, piece(last_chunk).size());
  copy_->wait(copy_->submit(cb), ctx_.opt.queue_timeout);
  windows_dirty_ = false;
}

// One chunk's wire image into window (sequence & 1), from its first slot: payload, sentinel, in
// one write of whole sectors.
void am_device::stream_chunk(std::uint64_t sequence, std::span<const std::byte> payload) {
  const std::uint64_t mark_at = round_up(payload.size(), 4);
  const std::uint32_t mark = sentinel(sequence);
  chunk_buffer_.assign(std::min(window, round_up(mark_at + 4, sector)), std::byte{0});
  std::copy(payload.begin(), payload.end(), chunk_buffer_.begin());
  std::memcpy(chunk_buffer_.data() + mark_at, &mark, 4);
  staging_->write((sequence & 1) * window, chunk_buffer_);
}

// Until the fence reaches `at_least`, reading it back through the bridge; the copy queue's faults
// end the wait early.
void am_device::wait_fence(std::uint64_t at_least) {
  const auto deadline = std::chrono::steady_clock::now() + ctx_.opt.queue_timeout;
  for (std::uint64_t polls = 1;; ++polls) {
    const std::uint64_t fence = staging_->read_fence();
    if (fence >= at_least) return;
    if (polls % 64 == 0) check_faults("sdma0");
    if (std::chrono::steady_clock::now() > deadline)
      throw device_error(str(ctx_.name(), ": copy_in: queue sdma0 did not drain the USB staging window for chunk ",
                             at_least - 1, " within ", ctx_.opt.queue_timeout.count(), " ms (fence at bus ",
                             hex{staging_->fence_bus_address()}, " reads ", fence, ")"));
  }
}

// Arm the window's read, SDMA VRAM -> window, then one dword to the release address: the
// bridge streams the window back once that store lands (tinygrad/runtime/support/usb.py).
void am_device::copy_out_staged(std::span<std::byte> dst, memory::gpu_va src) {
  windows_dirty_ = true;  // VRAM data lands where copy-in looks for sentinels
  std::vector<std::byte> buffer;
  for (std::uint64_t done = 0; done < dst.size();) {
    const std::uint64_t n = std::min<std::uint64_t>(staging_->size(), dst.size() - done);
    buffer.resize(round_up(n, sector));
    staging_->arm_read(0, buffer.size());
    queue::cmd_buffer cb;
    queue::sdma::emit_copy_linear(cb, staging_va_, src + done, n);
    const std::uint32_t release_word = 0;
    queue::sdma::emit_write(cb, release_va_, std::span(&release_word, 1));
    const queue::submission s = copy_->submit(cb);
    staging_->finish_read(buffer);
    copy_->wait(s, ctx_.opt.queue_timeout);
    std::copy_n(buffer.begin(), n, dst.begin() + std::ptrdiff_t(done));
    done += n;
  }
}

void am_device::copy_in_bounced(memory::gpu_va dst, std::span<const std::byte> src) {
  if (!bounce_) {
    bounce_ = t_.allocate_dma(bounce_bytes);
    bounce_va_ = mem_->map_system(bounce_->page_bus_addresses());
  }
  for (std::uint64_t done = 0; done < src.size();) {
    const std::uint64_t n = std::min<std::uint64_t>(bounce_->size(), src.size() - done);
    bounce_->write(0, src.subspan(done, n));
    queue::cmd_buffer cb;
    queue::sdma::emit_copy_linear(cb, dst + done, bounce_va_, n);
    run_copy(cb);
    done += n;
  }
}

void am_device::copy_out_bounced(std::span<std::byte> dst, memory::gpu_va src) {
  if (!bounce_) {
    bounce_ = t_.allocate_dma(bounce_bytes);
    bounce_va_ = mem_->map_system(bounce_->page_bus_addresses());
  }
  for (std::uint64_t done = 0; done < dst.size();) {
    const std::uint64_t n = std::min<std::uint64_t>(bounce_->size(), dst.size() - done);
    queue::cmd_buffer cb;
    queue::sdma::emit_copy_linear(cb, bounce_va_, src + done, n);
    run_copy(cb);
    bounce_->read(0, dst.subspan(done, n));
    done += n;
  }
}

}  // namespace tg::amd
