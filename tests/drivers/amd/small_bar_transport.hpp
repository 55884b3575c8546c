// small_bar_transport.hpp: a test-only device_transport over another one that shows only the first
// `bar0_bytes` of BAR0, as a card without ReBAR does (facts 8.2), and answers the MM_INDEX /
// MM_INDEX_HI / MM_DATA VRAM window itself from the full BAR0 (Linux amdgpu_device_mm_access:
// MM_INDEX = address bits 30:0 | bit 31, MM_INDEX_HI = address >> 31). The emulator routes that
// window to registers today, so the AM driver's small-BAR path is tested through this shim.
#pragma once
#include <memory>

#include <tg/error.hpp>

#include "runtime/transport/transport.hpp"

namespace tg::test {

class small_bar_transport final : public transport::device_transport {
 public:
  small_bar_transport(std::unique_ptr<transport::device_transport> inner, std::uint64_t bar0_bytes)
      : inner_(std::move(inner)), bar0_(*inner_, bar0_bytes), bar5_(*inner_) {}

  std::string name() const override { return inner_->name(); }
  transport::transport_kind kind() const override { return inner_->kind(); }
  transport::transport_limits limits() const override { return inner_->limits(); }
  std::uint32_t config_read(std::uint32_t o, unsigned b) override { return inner_->config_read(o, b); }
  void config_write(std::uint32_t o, std::uint32_t v, unsigned b) override { inner_->config_write(o, v, b); }
  transport::bar_region bar_info(unsigned i) const override {
    transport::bar_region r = inner_->bar_info(i);
    if (i == 0) r.size = bar0_.size();
    return r;
  }
  transport::bar_window& bar(unsigned i) override {
    if (i == 0) return bar0_;
    if (i == 5) return bar5_;
    return inner_->bar(i);
  }
  std::unique_ptr<transport::dma_region> allocate_dma(std::uint64_t b) override { return inner_->allocate_dma(b); }
  transport::staging_window* staging() override { return inner_->staging(); }
  void reset() override { inner_->reset(); }

 private:
  // The first bytes of the real BAR0.
  class window final : public transport::bar_window {
   public:
    window(transport::device_transport& t, std::uint64_t bytes) : t_(t), size_(bytes) {}
    std::uint64_t size() const override { return size_; }
    std::uint32_t read32(std::uint64_t o) override { return t_.bar(0).read32(check(o, 4)); }
    void write32(std::uint64_t o, std::uint32_t v) override { t_.bar(0).write32(check(o, 4), v); }
    void write64(std::uint64_t o, std::uint64_t v) override { t_.bar(0).write64(check(o, 8), v); }
    void read(std::uint64_t o, std::span<std::byte> out) override { t_.bar(0).read(check(o, out.size()), out); }
    void write(std::uint64_t o, std::span<const std::byte> in) override { t_.bar(0).write(check(o, in.size()), in); }
    std::byte* mapping() override { return t_.bar(0).mapping(); }

   private:
    std::uint64_t check(std::uint64_t o, std::uint64_t n) const {
      if (o + n > size_) throw usage_error(str("small BAR0: access at ", o, " of ", n, " bytes beyond ", size_));
      return o;
    }
    transport::device_transport& t_;
    std::uint64_t size_;
  };

  // BAR5 with the VRAM window answered here (dword registers 0, 1 and 6).
  class registers final : public transport::bar_window {
   public:
    explicit registers(transport::device_transport& t) : t_(t) {}
    std::uint64_t size() const override { return t_.bar(5).size(); }
    std::uint32_t read32(std::uint64_t o) override {
      if (o == 4) return t_.bar(0).read32(address());
      return t_.bar(5).read32(o);
    }
    void write32(std::uint64_t o, std::uint32_t v) override {
      if (o == 0) index_ = v;
      else if (o == 24) index_hi_ = v;
      else if (o == 4) t_.bar(0).write32(address(), v);
      else t_.bar(5).write32(o, v);
    }
    void write64(std::uint64_t o, std::uint64_t v) override { t_.bar(5).write64(o, v); }
    void read(std::uint64_t o, std::span<std::byte> out) override { t_.bar(5).read(o, out); }
    void write(std::uint64_t o, std::span<const std::byte> in) override { t_.bar(5).write(o, in); }

   private:
    std::uint64_t address() const { return std::uint64_t{index_hi_} << 31 | (index_ & 0x7FFFFFFF); }
    transport::device_transport& t_;
    std::uint32_t index_ = 0, index_hi_ = 0;
  };

  std::unique_ptr<transport::device_transport> inner_;
  window bar0_;
  registers bar5_;
};

}  // namespace tg::test
