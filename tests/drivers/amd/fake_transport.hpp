// fake_transport.hpp: a device_transport over host memory for sequencing tests of the AM driver:
// VRAM in a vector (BAR0, mapped), registers in a map with per-register write hooks (BAR5), and
// a discovery table at VRAM end - 64 KiB (discovery_bytes.hpp), RCC_CONFIG_MEMSIZE set to match.
#pragma once
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include <tg/core/error.hpp>

#include "tests/drivers/amd/discovery_bytes.hpp"
#include "runtime/transport/transport.hpp"

namespace tg::test {

class fake_transport final : public transport::device_transport {
 public:
  explicit fake_transport(std::uint64_t vram_mib, std::vector<fake_ip> ips) : vram_(vram_mib << 20), regs_(*this) {
    const std::vector<std::byte> table = build_discovery(ips, false);
    std::memcpy(vram_.data() + vram_.size() - (64 << 10), table.data(), table.size());
    reg[0xDE3] = std::uint32_t(vram_mib);
  }

  std::map<std::uint64_t, std::uint32_t> reg;                                   // by dword index
  std::map<std::uint64_t, std::function<void(std::uint32_t)>> on_write;        // after the store
  std::vector<std::byte>& vram() { return vram_; }

  std::string name() const override { return "fake:0"; }
  transport::transport_kind kind() const override { return transport::transport_kind::pci; }
  transport::transport_limits limits() const override { return {0, 0, true}; }
  std::uint32_t config_read(std::uint32_t, unsigned) override { return 0; }
  void config_write(std::uint32_t, std::uint32_t, unsigned) override {}
  transport::bar_region bar_info(unsigned i) const override {
    return {0, i == 0 ? vram_.size() : i == 5 ? (2ull << 20) : 0x2000, true, i == 0};
  }
  transport::bar_window& bar(unsigned i) override {
    if (i == 0) return vram_bar_;
    if (i == 5) return regs_;
    return doorbells_;
  }
  std::unique_ptr<transport::dma_region> allocate_dma(std::uint64_t) override {
    throw device_error("fake transport: no DMA memory");
  }
  void reset() override {}

 private:
  struct vram_window final : transport::bar_window {
    std::vector<std::byte>& v;
    explicit vram_window(std::vector<std::byte>& m) : v(m) {}
    std::uint64_t size() const override { return v.size(); }
    std::uint32_t read32(std::uint64_t o) override {
      std::uint32_t w;
      std::memcpy(&w, v.data() + o, 4);
      return w;
    }
    void write32(std::uint64_t o, std::uint32_t w) override { std::memcpy(v.data() + o, &w, 4); }
    void write64(std::uint64_t o, std::uint64_t w) override { std::memcpy(v.data() + o, &w, 8); }
    void read(std::uint64_t o, std::span<std::byte> out) override { std::memcpy(out.data(), v.data() + o, out.size()); }
    void write(std::uint64_t o, std::span<const std::byte> in) override { std::memcpy(v.data() + o, in.data(), in.size()); }
    std::byte* mapping() override { return v.data(); }
  };
  struct reg_window final : transport::bar_window {
    fake_transport& t;
    explicit reg_window(fake_transport& f) : t(f) {}
    std::uint64_t size() const override { return 2ull << 20; }
    std::uint32_t read32(std::uint64_t o) override { return t.reg[o / 4]; }
    void write32(std::uint64_t o, std::uint32_t w) override {
      t.reg[o / 4] = w;
      if (auto it = t.on_write.find(o / 4); it != t.on_write.end()) it->second(w);
    }
    void write64(std::uint64_t o, std::uint64_t w) override { write32(o, std::uint32_t(w)); }
    void read(std::uint64_t, std::span<std::byte>) override {}
    void write(std::uint64_t, std::span<const std::byte>) override {}
  };
  struct null_window final : transport::bar_window {
    std::uint64_t size() const override { return 0x2000; }
    std::uint32_t read32(std::uint64_t) override { return 0; }
    void write32(std::uint64_t, std::uint32_t) override {}
    void write64(std::uint64_t, std::uint64_t) override {}
    void read(std::uint64_t, std::span<std::byte>) override {}
    void write(std::uint64_t, std::span<const std::byte>) override {}
  };
  std::vector<std::byte> vram_;
  vram_window vram_bar_{vram_};
  reg_window regs_;
  null_window doorbells_;
};

}  // namespace tg::test
