// am_graph.cpp: graphs on the AMD backend: the captured launches as one indirect buffer, replayed
// with one submission (INDIRECT_BUFFER + one RELEASE_MEM of the timeline) and one doorbell.
//
// At capture the graph takes one CPU-visible allocation holding two frames; a frame is the IB's
// commands (the full cache acquire a job opens with, then each launch's dispatch sequence as
// am_program::launch emits it) followed by every launch's kernarg block, which its dispatch points
// at. A replay writes the replay's parameters into the next frame: the kernarg words of variable
// and buffer parameters and, for launches whose variables are parameters, the grid in
// DISPATCH_DIRECT (a grid of no workgroups turns the packet into a NOP of the same length). Only
// words that changed are written, in runs. Over USB each run is a bridge write (two transfers), so
// when a replay's changes fall in more than a few runs (a decode step's position sits in a third
// of the launches' kernargs: 34 runs for 2 layers, over 500 for 32) the span holding them goes as
// one copy instead, through the SRAM window and SDMA (about 20 transfers, ~300 MB/s). Then the
// frame's IB is submitted. Nothing is allocated or mapped on replay.
//
// Reuse protocol (runtime/queue/indirect_buffer.hpp): a frame is patched only once the GPU is done
// with its previous submission (wait_idle, then indirect_buffer::patch_words refuses otherwise).
// With two frames the host writes replay N+1 while the GPU may still run replay N.
//
// Ordering inside the IB is a launch's: each dispatch sequence ends with CS_PARTIAL_FLUSH (the
// next dispatch starts after it finished) and opens with an ACQUIRE_MEM of the shader caches, so
// a launch reads what the one before wrote; the full invalidate (L2 and I$) is needed once per
// job, for kernargs and code the host wrote since the last one, as am_program::launch does.
//
// When the device's scratch moved (a kernel loaded after capture needed more) or a launch's
// workgroup size changed with its variables, the frame's commands are emitted again (that path
// allocates; neither happens with the kernels of a graph loaded before it was captured).
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include <tg/core/error.hpp>
#include <tg/log.hpp>
#include <tg/device.hpp>

#include "drivers/amd/am_backend.hpp"
#include "runtime/codegen/amdgpu_kernel.hpp"
#include "runtime/jit/graph_arguments.hpp"
#include "runtime/queue/indirect_buffer.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/tune/tuned_compile.hpp"

namespace tg::amd {
namespace {

namespace pm4 = queue::pm4;

constexpr std::size_t frame_count = 2;      // the host patches one frame while the GPU reads the other
constexpr std::uint64_t block_align = 256;  // kernarg blocks as am_program's slots are aligned
constexpr std::size_t run_gap_dwords = 16;  // changed words this close are written as one run
constexpr std::size_t max_bridge_runs = 8;  // behind the USB bridge, more runs than this go as one copy

std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }

// Where a parameter lands in a frame's kernargs.
struct kernarg_site {
  std::size_t dword;    // first dword, from the frame's start
  std::uint32_t words;  // 1 or 2
  std::size_t launch, slot;
  bool is_buffer;
};

class am_graph final : public executable_graph {
 public:
  am_graph(am_backend& owner, const graph_capture& c);
  ~am_graph() override;
  void replay(std::span<const std::int64_t> vars, std::span<void* const> buffers) override;

 private:
  struct frame {
    std::uint64_t offset = 0;  // in memory_
    std::optional<queue::indirect_buffer> ib;
    std::vector<std::uint32_t> image;  // what the frame's memory holds
    std::vector<am_dispatch_plan> plans;
    memory::gpu_va scratch;
    std::uint32_t tmpring = 0;
  };

  am_dispatch_plan plan(std::size_t launch) {
    return programs_[launch]->plan_launch(args_.buffers(launch).size(), args_.vars(launch));
  }
  queue::cmd_buffer emit_commands(memory::gpu_va frame_va, std::span<const am_dispatch_plan> plans);
  // Each frame's IB: the commands for where it lies, then `image`'s kernargs, written to the GPU.
  void fill_frames(const std::vector<std::uint32_t>& image, const std::vector<am_dispatch_plan>& plans,
                   std::uint64_t frame_bytes);
  void write(frame& f, std::size_t dword, std::uint32_t value) {
    if (f.image[dword] == value) return;
    f.image[dword] = value;
    dirty_.push_back(dword);
  }
  void write_grid(frame& f, std::size_t launch);
  void flush(frame& f);

  am_backend& owner_;
  am_device& dev_;
  jit::graph_arguments args_;
  std::vector<std::shared_ptr<program>> keep_;
  std::vector<am_dispatchable*> programs_;
  std::vector<std::size_t> header_dword_;  // each launch's DISPATCH_DIRECT header
  std::vector<std::uint64_t> block_byte_;  // each launch's kernarg block, from the frame's start
  std::vector<kernarg_site> sites_;
  std::size_t command_dwords_ = 0;
  allocation memory_;
  std::array<frame, frame_count> frames_;
  std::size_t next_ = 0;
  std::vector<std::size_t> dirty_;  // reserved for every dword of a frame: push_back never allocates
  bool bridge_ = false;  // behind the USB bridge: each write to the frame is a round trip
};

queue::cmd_buffer am_graph::emit_commands(memory::gpu_va frame_va, std::span<const am_dispatch_plan> plans) {
  queue::cmd_buffer cb;
  pm4::emit_acquire_mem(cb, pm4::gcr_full_invalidate);
  header_dword_.clear();
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const am_dispatch_plan& p = plans[i];
    pm4::emit_dispatch(cb, p.kernel->summary(),
                       {.gfx = dev_.gfx(),
                        .workgroups = p.shape.workgroups,
                        .workgroup_size = p.shape.workgroup_size,
                        .kernargs = frame_va + block_byte_[i],
                        .scratch = dev_.scratch(),
                        .tmpring_size = dev_.tmpring_size()});
    const std::size_t header = cb.size() - pm4::event_write_dwords - pm4::dispatch_direct_dwords;
    if (cb[header] != pm4::type3_header(pm4::PACKET3_DISPATCH_DIRECT, pm4::dispatch_direct_dwords - 1))
      TG_UNREACHABLE("emit_dispatch no longer ends with DISPATCH_DIRECT and one EVENT_WRITE");
    if (p.is_empty()) cb[header] = pm4::type3_header(pm4::PACKET3_NOP, pm4::dispatch_direct_dwords - 1);
    header_dword_.push_back(header);
  }
  return cb;
}

am_graph::am_graph(am_backend& owner, const graph_capture& c) : owner_(owner), dev_(owner.device()), args_(c) {
  std::vector<am_dispatch_plan> plans;
  for (std::size_t i = 0; i < c.launches.size(); ++i) {
    // Under TG_BEAM (AMD:EMU) a kernel not launched yet is a searching wrapper: search now, and
    // capture the program it settles on (runtime/tune/tuned_compile.hpp).
    std::shared_ptr<program> compiled = tune::resolve_tuned(c.launches[i].compiled, args_.vars(i));
    auto* p = dynamic_cast<am_dispatchable*>(compiled.get());
    if (p == nullptr)
      throw usage_error(str(owner.name(), ": graph launch ", i, ": the kernel was not compiled for an AMD device"));
    keep_.push_back(std::move(compiled));
    programs_.push_back(p);
    plans.push_back(plan(i));
    if (&plans.back().kernel->owner() != &owner)
      throw usage_error(str(owner.name(), ": graph launch ", i, ": the kernel was compiled for another device"));
  }
  // Sizes first (emit with the blocks at offset 0), then the real addresses.
  block_byte_.assign(plans.size(), 0);
  command_dwords_ = emit_commands(memory::gpu_va{0}, plans).size();
  std::uint64_t at = round_up(4 * command_dwords_, block_align);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    block_byte_[i] = at;
    at += round_up(plans[i].kernel->kernarg_block_bytes(), block_align);
  }
  const std::uint64_t frame_bytes = round_up(at, block_align);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const am_dispatch_plan& p = plans[i];
    const kernarg_layout& layout = p.kernel->layout();
    const std::span<const kernarg> args = p.kernel->args();
    auto site = [&](std::size_t arg, std::size_t slot, bool is_buffer) {
      const std::uint32_t size = args[arg].size_bytes;
      if ((size != 4 && size != 8) || layout.offsets[arg] % 4 != 0)
        throw usage_error(str(owner.name(), ": graph launch ", i, ": argument ", arg, " of ", size,
                              " bytes cannot be a parameter (4 or 8 aligned bytes)"));
      sites_.push_back({std::size_t((block_byte_[i] + layout.offsets[arg]) / 4), size / 4, i, slot, is_buffer});
    };
    for (const graph_binding& b : c.var_bindings)
      if (b.launch == i && b.slot < p.vars && programs_[i]->reads_variable(b.slot)) site(p.buffers + b.slot, b.slot, false);
    for (const graph_binding& b : c.buffer_bindings)
      if (b.launch == i && b.slot < p.buffers) site(b.slot, b.slot, true);
  }
  std::sort(sites_.begin(), sites_.end(), [](const kernarg_site& a, const kernarg_site& b) { return a.dword < b.dword; });

  // The kernargs do not depend on where the frame lies: written (and their buffers checked)
  // before anything is allocated.
  std::vector<std::uint32_t> image(frame_bytes / 4, 0);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const std::span<std::byte> block =
        std::as_writable_bytes(std::span(image)).subspan(block_byte_[i], plans[i].kernel->kernarg_block_bytes());
    plans[i].kernel->write_kernargs(block, args_.buffers(i).first(plans[i].buffers), args_.vars(i).first(plans[i].vars));
  }
  try {
    memory_ = dev_.allocate(frame_bytes * frame_count, true);
  } catch (const device_error& e) {
    throw device_error(str(owner.name(), ": graph of ", plans.size(), " dispatches: its ", frame_count, " command frames (",
                           frame_bytes * frame_count, " bytes, CPU-visible) do not fit: ", e.what()));
  }
  try {
    fill_frames(image, plans, frame_bytes);
  } catch (...) {
    dev_.release(memory_);  // nothing was submitted from it
    throw;
  }
  dirty_.reserve(frame_bytes / 4);
  bridge_ = dev_.info().kind == transport::transport_kind::usb;
  if (debug_level() >= 1)
    log(log_level::debug, str(owner.name(), ": graph of ", plans.size(), " dispatches: an IB of ", command_dwords_,
                              " dwords, ", frame_bytes, " bytes a frame, ", frame_count, " frames, ", sites_.size(),
                              " kernarg words patched per replay at most"));
}

void am_graph::fill_frames(const std::vector<std::uint32_t>& image, const std::vector<am_dispatch_plan>& plans,
                           std::uint64_t frame_bytes) {
  const queue::queue_memory all = dev_.host_memory(memory_);
  for (std::size_t f = 0; f < frame_count; ++f) {
    frame& fr = frames_[f];
    fr.offset = f * frame_bytes;
    const queue::queue_memory mem = all.slice(fr.offset, frame_bytes);
    const queue::cmd_buffer commands = emit_commands(mem.va, plans);
    fr.image = image;
    std::copy(commands.begin(), commands.end(), fr.image.begin());
    fr.ib.emplace(str("graph", f), mem, commands);
    fr.ib->patch_words(0, fr.image);
    fr.plans = plans;
    fr.scratch = dev_.scratch();
    fr.tmpring = dev_.tmpring_size();
  }
}

am_graph::~am_graph() {
  // The GPU may still read the frames; after a queue failure nobody can say, so they stay (leaked).
  try {
    for (frame& f : frames_)
      if (f.ib) f.ib->wait_idle(owner_.queue_timeout());
    dev_.release(memory_);
  } catch (const device_error&) {
  }
}

void am_graph::write_grid(frame& f, std::size_t launch) {
  const am_dispatch_plan& p = f.plans[launch];
  const std::size_t h = header_dword_[launch];
  write(f, h, pm4::type3_header(p.is_empty() ? pm4::PACKET3_NOP : pm4::PACKET3_DISPATCH_DIRECT,
                                pm4::dispatch_direct_dwords - 1));
  for (std::size_t d = 0; d < 3; ++d) write(f, h + 1 + d, p.shape.workgroups[d]);
}

// Calls write(first, end) for each run of dirty_ (sorted): changed words closer than run_gap_dwords
// go in one run. Returns the number of runs.
template <class Write>
std::size_t for_each_run(const std::vector<std::size_t>& dirty, Write write) {
  std::size_t runs = 0;
  for (std::size_t i = 0; i < dirty.size(); ++runs) {
    const std::size_t first = dirty[i];
    std::size_t end = first + 1;
    for (++i; i < dirty.size() && dirty[i] <= end + run_gap_dwords; ++i) end = std::max(end, dirty[i] + 1);
    write(first, end);
  }
  return runs;
}

void am_graph::flush(frame& f) {
  std::sort(dirty_.begin(), dirty_.end());
  const std::size_t runs = for_each_run(dirty_, [](std::size_t, std::size_t) {});
  if (bridge_ && runs > max_bridge_runs) {
    // One copy from the first changed word to the last: the words between them are the image's too.
    const std::size_t first = dirty_.front(), end = dirty_.back() + 1;
    if (!f.ib->is_idle()) TG_UNREACHABLE("am_graph: a frame is patched while the GPU may read it");
    const std::span<const std::byte> bytes = std::as_bytes(std::span(f.image).subspan(first, end - first));
    const queue::queue_memory view = dev_.host_memory(memory_).slice(f.offset + 4 * first, bytes.size());
    std::copy(bytes.begin(), bytes.end(), view.host_view.begin());  // the host's view of the frame, as a patch leaves it
    dev_.copy_in(memory_, f.offset + 4 * first, bytes);
  } else {
    for_each_run(dirty_, [&](std::size_t first, std::size_t end) {
      f.ib->patch_words(first, std::span(f.image).subspan(first, end - first));
    });
  }
  dirty_.clear();
}

void am_graph::replay(std::span<const std::int64_t> vars, std::span<void* const> buffers) {
  args_.apply(vars, buffers);
  for (const kernarg_site& s : sites_) {  // before anything is written: a refused replay changes nothing
    const std::uint64_t address = s.is_buffer ? reinterpret_cast<std::uintptr_t>(args_.buffers(s.launch)[s.slot]) : 0;
    if (address % codegen::amdgpu_buffer_align != 0)  // the message is made only then: a replay allocates nothing
      check_buffer_alignment(owner_.name(), str("(a graph's launch ", s.launch, ")"), s.slot, address);
  }
  frame& f = frames_[next_];
  next_ = (next_ + 1) % frame_count;
  f.ib->wait_idle(owner_.queue_timeout());

  bool reemit = f.scratch != dev_.scratch() || f.tmpring != dev_.tmpring_size();
  for (std::size_t i = 0; i < programs_.size(); ++i) {
    if (!args_.has_var_params(i)) continue;
    const am_dispatch_plan p = plan(i);
    reemit = reemit || p.shape.workgroup_size != f.plans[i].shape.workgroup_size;
    f.plans[i] = p;
    write_grid(f, i);
  }
  if (reemit) {
    const queue::cmd_buffer commands = emit_commands(f.ib->va(), f.plans);
    for (std::size_t d = 0; d < commands.size(); ++d) write(f, d, commands[d]);
    f.scratch = dev_.scratch();
    f.tmpring = dev_.tmpring_size();
  }
  for (const kernarg_site& s : sites_) {
    const std::uint64_t value = s.is_buffer ? reinterpret_cast<std::uintptr_t>(args_.buffers(s.launch)[s.slot])
                                            : std::uint64_t(args_.vars(s.launch)[s.slot]);
    write(f, s.dword, std::uint32_t(value));  // little-endian: the low word first
    if (s.words == 2) write(f, s.dword + 1, std::uint32_t(value >> 32));
  }
  flush(f);
  dev_.compute().submit_ib(*f.ib);
}

}  // namespace

std::unique_ptr<executable_graph> am_backend::make_graph(const graph_capture& capture) {
  return std::make_unique<am_graph>(*this, capture);
}

}  // namespace tg::amd
