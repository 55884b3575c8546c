// am_device_copy.cpp: allocations, zeroing and host <-> VRAM copies of an am_device (see
// am_device.hpp): the BAR0 mapping, the USB staging window (facts 7.9, 7.10) or a DMA bounce
// buffer, each moved by SDMA in chunks of the window.
#include <algorithm>
#include <cstring>
#include <vector>

#include <tg/error.hpp>

#include "drivers/amd/am_device.hpp"
#include "runtime/queue/sdma.hpp"

namespace tg::amd {

namespace {
constexpr std::uint64_t page = 4096;
constexpr std::uint64_t sector = 512;                // the bridge moves whole sectors (usb_sram.hpp)
constexpr std::uint64_t bounce_bytes = 2ull << 20;   // PCI without a BAR mapping of the range
std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }
queue::gpu_va qva(memory::gpu_va va, std::uint64_t offset = 0) { return {va.value + offset}; }
}  // namespace

allocation am_device::allocate(std::uint64_t bytes, bool cpu_visible, std::uint64_t align) {
  // Until SDMA runs, zeroing goes through BAR0, so everything allocated before must lie inside it.
  allocation a = mem_->allocate(bytes, cpu_visible || !sdma_ready_, align);
  try {
    zero(a);
  } catch (...) {
    mem_->release(a);
    throw;
  }
  return a;
}

void am_device::release(const allocation& a) { mem_->release(a); }

void am_device::zero(const allocation& a) {
  if (!sdma_ready_) return ctx_.zero_vram(a.pa, a.bytes);  // bounded BAR0 writes (am_context)
  queue::cmd_buffer cb;
  queue::sdma::emit_const_fill(cb, qva(a.va), 0, a.bytes);
  run_copy(cb);
}

void am_device::run_copy(const queue::cmd_buffer& cb) { copy_->wait(copy_->submit(cb), ctx_.opt.queue_timeout); }

void am_device::require_range(const char* op, const allocation& a, std::uint64_t offset, std::uint64_t bytes) const {
  if (offset > a.bytes || bytes > a.bytes - offset)
    throw usage_error(str(ctx_.name(), ": ", op, " of ", bytes, " bytes at offset ", offset, " leaves the ", a.bytes,
                          "-byte allocation at VA ", memory::hex{a.va.value}));
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
}

void am_device::copy_in(const allocation& dst, std::uint64_t offset, std::span<const std::byte> src) {
  require_range("copy_in", dst, offset, src.size());
  if (src.empty()) return;
  const std::uint64_t at = dst.pa.value + offset;
  if (mem_->bar0_mapped() && at + src.size() <= mem_->bar0_bytes()) {
    std::memcpy(mem_->bar0_mapping() + at, src.data(), src.size());
    ctx_.io.flush_hdp();  // the CPU's writes reach VRAM before an engine reads them (facts 3.11)
    return;
  }
  if (staging_) return copy_in_staged(qva(dst.va, offset), src);
  copy_in_bounced(qva(dst.va, offset), src);
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
  if (staging_) return copy_out_staged(dst, qva(src.va, offset));
  copy_out_bounced(dst, qva(src.va, offset));
}

// Host -> window (0xF2 bulk), then SDMA window -> VRAM; the next chunk waits for that copy
// because it reuses the window.
void am_device::copy_in_staged(queue::gpu_va dst, std::span<const std::byte> src) {
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
    queue::sdma::emit_copy_linear(cb, dst + done, qva(staging_va_), n);
    run_copy(cb);
    done += n;
  }
}

// Arm the window's read, SDMA VRAM -> window, then one dword to the release address: the
// bridge streams the window back once that store lands (facts 7.10).
void am_device::copy_out_staged(std::span<std::byte> dst, queue::gpu_va src) {
  std::vector<std::byte> buffer;
  for (std::uint64_t done = 0; done < dst.size();) {
    const std::uint64_t n = std::min<std::uint64_t>(staging_->size(), dst.size() - done);
    buffer.resize(round_up(n, sector));
    staging_->arm_read(0, buffer.size());
    queue::cmd_buffer cb;
    queue::sdma::emit_copy_linear(cb, qva(staging_va_), src + done, n);
    const std::uint32_t release_word = 0;
    queue::sdma::emit_write(cb, qva(release_va_), std::span(&release_word, 1));
    const queue::submission s = copy_->submit(cb);
    staging_->finish_read(buffer);
    copy_->wait(s, ctx_.opt.queue_timeout);
    std::copy_n(buffer.begin(), n, dst.begin() + std::ptrdiff_t(done));
    done += n;
  }
}

void am_device::copy_in_bounced(queue::gpu_va dst, std::span<const std::byte> src) {
  if (!bounce_) {
    bounce_ = t_.allocate_dma(bounce_bytes);
    bounce_va_ = mem_->map_system(bounce_->page_bus_addresses());
  }
  for (std::uint64_t done = 0; done < src.size();) {
    const std::uint64_t n = std::min<std::uint64_t>(bounce_->size(), src.size() - done);
    bounce_->write(0, src.subspan(done, n));
    queue::cmd_buffer cb;
    queue::sdma::emit_copy_linear(cb, dst + done, qva(bounce_va_), n);
    run_copy(cb);
    done += n;
  }
}

void am_device::copy_out_bounced(std::span<std::byte> dst, queue::gpu_va src) {
  if (!bounce_) {
    bounce_ = t_.allocate_dma(bounce_bytes);
    bounce_va_ = mem_->map_system(bounce_->page_bus_addresses());
  }
  for (std::uint64_t done = 0; done < dst.size();) {
    const std::uint64_t n = std::min<std::uint64_t>(bounce_->size(), dst.size() - done);
    queue::cmd_buffer cb;
    queue::sdma::emit_copy_linear(cb, qva(bounce_va_), src + done, n);
    run_copy(cb);
    bounce_->read(0, dst.subspan(done, n));
    done += n;
  }
}

}  // namespace tg::amd
