// am_device.hpp: one AMD gfx11 / gfx12 GPU booted and run by tg's AM driver over any
// device_transport (PCI or the USB bridge; real or emulated): memory, copies, the PM4 compute
// queue and the SDMA copy queue.
//
// Boot (tinygrad/runtime/support/am/amdev.py: AMDev): discovery, then warm or full (SCRATCH_REG7 =
// tg's own marker am_boot_marker, SCRATCH_REG6 = 0 and no GC fault latched take the warm path
// unless am_options::force_full_boot; tinygrad keeps the same pair of flags with its own value).
// Full: firmware, an SMU mode-1 reset when PSP sOS and SMU are alive (then the PCI header
// restored and RCC_CONFIG_MEMSIZE polled until the card answers: soc21.hpp), SOC, MM hub over our page
// tables, IH, PSP (msg1 in boot VRAM on PCI, in bridge memory from allocate_dma on USB, as
// tinygrad/runtime/support/usb.py does), SMU, GFX (RLC autoload, MEC, compute queue through MQD/HQD), SDMA. Warm: hubs, IH, MEC
// reset, queues. Each step calls am_options::progress. Destruction dequeues the compute queue,
// disables the SDMA ring and writes SCRATCH_REG6 = 0, so the next session boots warm.
//
// Memory: allocate() maps physically contiguous VRAM at a fresh VA and zeroes it (SDMA
// CONST_FILL once the copy queue runs, bounded BAR0 writes before). copy_in / copy_out use the
// BAR0 mapping when the range is mapped, else the transport's staging window (USB) or a DMA
// bounce buffer, moved by SDMA, in chunks of the window; they are ordered after earlier copies
// but not after compute work: synchronize() first to read what a kernel wrote. On USB, copy_in
// is the pipeline of tinygrad/runtime/support/usb.py (two 256 KiB windows, a sentinel per chunk, a fence the host
// reads back; am_device_copy.cpp) when the window has a fence, so the host streams one window
// while SDMA drains the other.
//
// Faults: the queues' wait hook drains the IH ring and reads GCVM_L2_PROTECTION_FAULT_STATUS;
// a fault throws device_error naming the device, the waiting queue and the faulting VA, and
// the queue stays failed until recover_compute() / recover_copy() restart it empty. The queue
// objects stay: their timelines go on in a new epoch, where everything submitted before the
// failure counts as complete (it will never run), so programs, kernarg slots and graphs made
// before a recovery keep working after it.
//
// The AMD backend loads a code object this way (drivers/amd/am_backend_program.cpp):
//   tg::amd::am_device dev(transport, options);
//   tg::amd::allocation code = dev.allocate(co.image_bytes(), false, co.load_alignment());
//   dev.copy_in(code, 0, co.image_at(code.va));
//   dev.ensure_scratch(co.kernel(kernel).descriptor.private_segment_fixed_size);
//   tg::queue::pm4::emit_dispatch(cb, co.summary(kernel, code.va),
//                                 {.gfx = dev.gfx(), ..., .scratch = dev.scratch(),
//                                  .tmpring_size = dev.tmpring_size()});
//   dev.compute().submit(cb);
//   dev.synchronize(std::chrono::seconds(30));
//
// Not thread-safe: one host thread drives a device.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivers/amd/am_context.hpp"
#include "drivers/amd/am_memory.hpp"
#include "drivers/amd/am_options.hpp"
#include "drivers/amd/ip/gfx_v11.hpp"
#include "drivers/amd/ip/gmc_v11.hpp"
#include "drivers/amd/ip/ih_v6.hpp"
#include "drivers/amd/ip/sdma_v6.hpp"
#include "runtime/queue/doorbell.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/queue_compute.hpp"
#include "runtime/queue/queue_copy.hpp"

namespace tg::amd {

// SCRATCH_REG7 once tg's AM driver booted the GPU: "TG" and a layout version. Not tinygrad's
// AMDev.Version (0xA0000008): a card either driver left is booted fully by the other, which cannot
// know what state it is in (queues, firmware, page tables of another layout). Bump the low half
// when what a warm boot relies on changes.
inline constexpr std::uint32_t am_boot_marker = 0x54470001;

struct am_info {
  std::string transport;  // "pci:0000:c3:00.0", "usb:1-2"
  transport::transport_kind kind = transport::transport_kind::pci;
  std::string gfx_target;  // "gfx1100"
  ip_version gc, sdma0, mmhub, osssys, mp0, mp1;
  std::uint64_t vram_bytes = 0;
  transport::bar_region bar0, bar2, bar5;
  bool large_bar = false;  // BAR0 covers all of VRAM
  bool warm_boot = false;  // this session skipped PSP / SMU (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
};

class am_device {
 public:
  am_device(transport::device_transport& t, const am_options& options);
  ~am_device();  // never throws; a failing teardown leaves SCRATCH_REG6 = 1 (the next boot is full)
  am_device(const am_device&) = delete;
  am_device& operator=(const am_device&) = delete;

  const am_info& info() const { return info_; }

  // `bytes` rounded up to 4 KiB, zeroed. cpu_visible: inside BAR0 (device_error when BAR0 has
  // no room left). align: 0 = 4 KiB.
  allocation allocate(std::uint64_t bytes, bool cpu_visible = false, std::uint64_t align = 0);
  void release(const allocation& a);
  // What allocate can still take, page tables included (am_memory::allocatable_bytes).
  std::uint64_t free_bytes() const;
  void copy_in(const allocation& dst, std::uint64_t offset, std::span<const std::byte> src);
  void copy_out(std::span<std::byte> dst, const allocation& src, std::uint64_t offset);
  // For graphs (am_graph.cpp): the CPU's view of a cpu_visible allocation (the BAR0 mapping, or a
  // shadow mirrored over BAR0), and the number of allocate calls so far (replays make none).
  queue::queue_memory host_memory(const allocation& a);
  std::uint64_t allocations_made() const { return allocations_made_; }

  queue::queue_compute& compute() { return *compute_; }
  queue::queue_copy& copy() { return *copy_; }
  // Waits for both queues; device_error (naming the queue) on a fault or a queue that makes no
  // progress for `timeout`.
  void synchronize(std::chrono::milliseconds timeout = queue::default_wait_timeout);
  void recover_compute();  // MEC reset, the same queue_compute restarted empty, a fresh MQD
  void recover_copy();     // RB off, an empty queue_copy, RB on
  std::uint64_t recoveries() const { return recoveries_; }

  // What a dispatch needs besides its code: the packet generation, the scratch area
  // (COMPUTE_DISPATCH_SCRATCH_BASE, 256-byte aligned) and COMPUTE_TMPRING_SIZE describing it
  // (0 until a kernel with a private segment asked for scratch: no scratch waves).
  queue::pm4::gfx_version gfx() const;
  memory::gpu_va scratch() const { return scratch_.va; }
  std::uint32_t tmpring_size() const { return tmpring_size_; }
  // Grows scratch for a kernel needing `private_bytes` per work-item (its descriptor's
  // private_segment_fixed_size; am_scratch.hpp sizes it). Waits for the compute queue before the
  // old area is freed; on failure the old area and TMPRING value stay. No-op when it fits.
  void ensure_scratch(std::uint32_t private_bytes);

  am_context& context() { return ctx_; }  // for tests and tools: registers, discovery

 private:
  struct queue_parts {
    allocation ring, page, eop;
    std::unique_ptr<queue::doorbell> bell;
  };
  void boot_full();
  void boot_warm();
  bool is_warm_bootable();
  const char* fault_status_register() const;
  void init_mm_hub_and_ih();
  void init_gc_hub();
  void start_queues();
  queue_parts make_parts(std::uint64_t ring_bytes, std::uint64_t doorbell, bool eop);
  void start_compute();
  void start_copy();
  void set_up_staging();
  void zero(const allocation& a);
  void check_faults(const std::string& queue_name);
  void run_copy(const queue::cmd_buffer& cb);  // submit on the copy queue and wait for it
  void require_range(const char* op, const allocation& a, std::uint64_t offset, std::uint64_t bytes) const;
  void copy_in_staged(memory::gpu_va dst, std::span<const std::byte> src);
  void copy_in_pipelined(memory::gpu_va dst, std::span<const std::byte> src);
  void emit_chunk(queue::cmd_buffer& cb, memory::gpu_va dst, std::uint64_t sequence, std::uint64_t bytes);
  void stream_chunk(std::uint64_t sequence, std::span<const std::byte> payload);
  void wait_fence(std::uint64_t at_least);
  void copy_out_staged(std::span<std::byte> dst, memory::gpu_va src);
  void copy_in_bounced(memory::gpu_va dst, std::span<const std::byte> src);
  void copy_out_bounced(std::span<std::byte> dst, memory::gpu_va src);

  transport::device_transport& t_;
  am_context ctx_;
  am_info info_;
  gmc_v11 gmc_;
  ih_v6 ih_;
  gfx_v11 gfx_;
  sdma_v6 sdma_;
  memory::gpu_pa memscratch_, dummy_page_;
  std::unique_ptr<am_memory> mem_;
  queue_parts compute_parts_, copy_parts_;
  allocation scratch_;
  std::uint32_t tmpring_size_ = 0, scratch_lane_bytes_ = 0;
  std::unique_ptr<queue::queue_compute> compute_;
  std::unique_ptr<queue::queue_copy> copy_;
  bool sdma_ready_ = false;
  // USB: the staging window and the release word mapped as system pages (tinygrad/runtime/support/usb.py).
  transport::staging_window* staging_ = nullptr;
  memory::gpu_va staging_va_, release_va_;
  // The copy-in pipeline (tinygrad/runtime/support/usb.py): the fence the GPU writes after each chunk, the next chunk's
  // sequence number, and whether the windows' sentinel dwords may hold stale data (boot staging,
  // copy-out, a failed copy) and must be zeroed before the next pipelined copy-in.
  memory::gpu_va fence_va_;
  std::uint64_t copy_sequence_ = 0;
  bool windows_dirty_ = true;
  std::vector<std::byte> chunk_buffer_;
  // Neither a BAR mapping nor a window: a DMA bounce buffer.
  std::unique_ptr<transport::dma_region> bounce_;
  memory::gpu_va bounce_va_;
  std::uint64_t recoveries_ = 0;
  std::uint64_t allocations_made_ = 0;
};

}  // namespace tg::amd
