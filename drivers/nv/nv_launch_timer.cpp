// nv_launch_timer.cpp: per-kernel times on the GPU's own clock (nv_backend::make_launch_timer).
// A CUDA event is recorded on the stream before and after each launch, and nothing waits until
// finish(): the kernels run back to back as they do unprofiled, and each span is what the GPU
// took from the end of the work before (its start mark) to the end of the kernel, without the
// host's cost of a launch and a wait that a host clock would add to every kernel. (Where the host
// falls behind a very short kernel the stream idles, and the span includes the launch's travel.)
#include <tg/core/error.hpp>
#include <vector>

#include "drivers/nv/nv_backend.hpp"

namespace tg::nv {

namespace {

class nv_launch_timer final : public launch_timer {
 public:
  explicit nv_launch_timer(nv_backend& owner) : owner_(owner), cu_(owner.driver()) {}
  ~nv_launch_timer() override {
    cu_.cuCtxSetCurrent(owner_.context());
    for (CUevent e : events_) cu_.cuEventDestroy(e);
  }

  void start() override { mark(); }
  void stop() override { mark(); }

  std::vector<double> finish() override {
    if (used_ % 2 != 0) throw usage_error("launch_timer: finish() between a start() and its stop()");
    owner_.synchronize();  // with the device's timeout, where cuEventSynchronize would wait for ever
    std::vector<double> spans;
    for (std::size_t i = 0; i + 1 < used_; i += 2) {
      float ms = 0;
      check(cu_, cu_.cuEventElapsedTime(&ms, events_[i], events_[i + 1]), "cuEventElapsedTime");
      spans.push_back(double(ms) * 1e-3);
    }
    used_ = 0;  // the events are recorded again by the next batch
    return spans;
  }

 private:
  void mark() {
    owner_.make_current();
    if (used_ == events_.size()) {
      CUevent e = nullptr;
      check(cu_, cu_.cuEventCreate(&e, 0), "cuEventCreate");
      events_.push_back(e);
    }
    check(cu_, cu_.cuEventRecord(events_[used_], owner_.stream()), "cuEventRecord");
    ++used_;
  }

  nv_backend& owner_;
  const cuda_driver& cu_;
  std::vector<CUevent> events_;  // a pool, grown to the longest batch
  std::size_t used_ = 0;
};

}  // namespace

std::unique_ptr<launch_timer> nv_backend::make_launch_timer() { return std::make_unique<nv_launch_timer>(*this); }

}  // namespace tg::nv
