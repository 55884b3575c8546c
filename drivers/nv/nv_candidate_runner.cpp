// nv_candidate_runner.cpp: BEAM's candidates on an NVIDIA GPU (see nv_candidate_runner.hpp).
#include "drivers/nv/nv_candidate_runner.hpp"

#include <mutex>
#include <tg/core/error.hpp>
#include <tg/log.hpp>

#include "drivers/nv/nv_program.hpp"
#include "drivers/nv/nv_ptx.hpp"
#include "runtime/tune/gpu_candidates.hpp"

namespace tg::nv {

namespace {

// Sending the stand-ins (up to a few GiB for an output head) and the worker setting them up.
constexpr auto slots_timeout = std::chrono::seconds(120);

class nv_ptx_candidate final : public program {
 public:
  explicit nv_ptx_candidate(nv_ptx_kernel k) : kernel(std::move(k)) {}
  void launch(std::span<void* const>, std::span<const std::int64_t>) override {
    throw usage_error("NV: a BEAM candidate ('" + kernel.name + "') runs in the BEAM worker, not on a device");
  }
  nv_ptx_kernel kernel;
};

tune::trial_result outcome(tune::trial_result::status s, std::string detail) {
  tune::trial_result r;
  r.outcome = s;
  r.detail = std::move(detail);
  return r;
}

}  // namespace

nv_candidate_runner::nv_candidate_runner(const nv_backend& device)
    : ptx_(std::make_unique<nv_ptx_renderer>(device.info())), worker_(device.ordinal()) {}
nv_candidate_runner::~nv_candidate_runner() = default;

codegen::kernel_opts nv_candidate_runner::default_opts(const kernel_source& source) {
  return tune::gpu_default_opts(ptx_->traits(), source);
}

codegen::kernel_opts nv_candidate_runner::normalize(const codegen::kernel_opts& opts, const kernel_source& source) {
  return tune::normalize_gpu(opts, source.global_ranges);
}

std::vector<codegen::kernel_opts> nv_candidate_runner::neighbours(const codegen::kernel_opts& from,
                                                                  const kernel_source& source) {
  return tune::gpu_neighbours_for(ptx_->traits().gpu, from, source);
}

std::shared_ptr<program> nv_candidate_runner::compile(const kernel_source& source) {
  return std::make_shared<nv_ptx_candidate>(ptx_->compile(source));
}

void nv_candidate_runner::send_slots(const tune::trial_setup& setup) {
  std::vector<bool> written;
  for (const tune::slot_info& s : setup.slots) written.push_back(s.written);
  if (sent_inputs_ == *setup.inputs && sent_written_ == written) return;
  worker::message_writer m;
  m.u32(std::uint32_t(setup.slots.size()));
  for (std::size_t k = 0; k < setup.slots.size(); ++k)
    m.u64((*setup.inputs)[k].size()).u8(setup.slots[k].written ? 1 : 0).bytes((*setup.inputs)[k]);
  const auto deadline = worker::clock::now() + slots_timeout;
  worker::message answer;
  worker::received got = worker::received::closed;
  if (worker_.send(worker::kind::set_slots, m.data, deadline)) got = worker_.receive(answer, deadline);
  if (got != worker::received::ok || answer.of != worker::kind::slots_ready) {
    // Out of device memory for the stand-ins (its message), or a worker that died or stalled.
    const bool said = got == worker::received::ok && (answer.of == worker::kind::refused || answer.of == worker::kind::failed ||
                                                     answer.of == worker::kind::faulted);
    const std::string why = said ? worker::message_reader(answer.payload).text() : std::string();
    const std::string ended = worker_.stop(true);
    sent_inputs_.clear();
    throw device_error("NV: the BEAM worker could not set up the stand-in buffers (" + (said ? why : "it was " + ended) + ")");
  }
  sent_inputs_ = *setup.inputs;
  sent_written_ = std::move(written);
}

tune::trial_result nv_candidate_runner::run(program& candidate, const codegen::kernel_opts& opts,
                                            const tune::trial_setup& setup) {
  using status = tune::trial_result::status;
  auto* ptx = dynamic_cast<nv_ptx_candidate*>(&candidate);
  if (ptx == nullptr) throw usage_error("NV: the BEAM runner runs only what its own compile made (PTX for its worker)");
  if (!worker_.running()) {
    sent_inputs_.clear();
    try {
      worker_.start();
    } catch (const device_error& e) {  // the search logs it at TG_DEBUG=1 only: say it once in any case
      static std::once_flag told;
      std::call_once(told, [&] { log(log_level::warning, str("beam: ", e.what(), "; NV kernels keep their default schedules")); });
      throw;
    }
  }
  send_slots(setup);

  const nv_ptx_kernel& k = ptx->kernel;
  nv_kernel_args args;
  lay_out_kernel_args(k.shape, setup.vars, args);
  worker::message_writer m;
  m.text(k.ptx).text(k.symbol).u64(codegen::nvptx_blocks(k.nodes, k.global_ranges, k.shape, setup.vars));
  m.u32(std::uint32_t(k.shape.block_size)).u32(std::uint32_t(args.values.size()));
  for (std::size_t i = 0; i < args.values.size(); ++i) {
    const bool is_slot = i < std::size_t(k.shape.buffers);  // the worker puts in its buffer's address
    m.u8(is_slot ? 1 : 0).u64(is_slot ? i : args.values[i]);
  }
  m.u32(timed_runs);

  const auto deadline = worker::clock::now() + setup.timeout;
  worker::message answer;
  worker::received got = worker::received::closed;
  if (worker_.send(worker::kind::run, m.data, deadline)) got = worker_.receive(answer, deadline);
  if (got == worker::received::timed_out)
    return outcome(status::timed_out, str("GPU hang: no answer after ", setup.timeout.count(), " ms; the BEAM worker was ",
                                          worker_.stop(true), " and its context with it"));
  if (got == worker::received::malformed)  // not to be trusted with another candidate
    return outcome(status::failed, "a malformed answer from the BEAM worker; it was " + worker_.stop(true));
  if (got != worker::received::ok) return outcome(status::crashed, "the BEAM worker died: " + worker_.stop(false));

  try {
    worker::message_reader in(answer.payload);
    switch (answer.of) {
      case worker::kind::ran: break;
      case worker::kind::refused: return outcome(status::failed, "the driver refused it: " + in.text());
      case worker::kind::faulted: {
        tune::trial_result r = outcome(status::crashed, "GPU fault: " + in.text());
        worker_.stop(false);  // it exits: its context is lost
        return r;
      }
      default: {
        tune::trial_result r = outcome(status::failed, "the BEAM worker failed: " + in.text());
        worker_.stop(false);
        return r;
      }
    }
    tune::trial_result r = outcome(status::ok, "");
    r.seconds = in.f64();
    r.outputs.resize(setup.slots.size());
    for (std::uint32_t n = in.u32(); n > 0; --n) {
      const std::uint32_t slot = in.u32();
      const std::span<const std::byte> bytes = in.bytes();
      if (slot >= setup.slots.size() || !setup.slots[slot].written || bytes.size() != setup.slots[slot].size_bytes)
        throw std::runtime_error("the BEAM worker sent back a slot the candidate does not write");
      r.outputs[slot].assign(bytes.begin(), bytes.end());
    }
    if (setup.hook) {
      std::vector<void*> host(setup.slots.size(), nullptr);
      for (std::size_t s = 0; s < setup.slots.size(); ++s)
        if (!r.outputs[s].empty()) host[s] = r.outputs[s].data();
      setup.hook(opts, host);
    }
    return r;
  } catch (const std::runtime_error& e) {  // a malformed answer: this worker is not to be trusted
    tune::trial_result r = outcome(status::failed, e.what());
    worker_.stop(true);
    return r;
  }
}

std::string nv_tuning_target(const nv_backend& device) {
  return str("NV ", device.info().name, " ", device.info().arch, " ", device.info().multiprocessors, " SMs");
}

}  // namespace tg::nv
