// memfd_mapping.hpp: host memory in a memfd, mapped once here, that a second mapping can share.
//
// The emulated GPU keeps VRAM and the doorbell page in memfds so a transport can later mmap the
// same pages as the BARs a driver maps (the reference's mock does the same, tinygrad's mock GPU (test/mockgpu/amd)). A memfd
// is sparse: pages cost nothing until touched, so a 512 MiB card is cheap.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tg::emu {

class memfd_mapping {
 public:
  // device_error when the memfd cannot be created, sized or mapped.
  memfd_mapping(const char* name, std::uint64_t size_bytes);
  ~memfd_mapping();
  memfd_mapping(const memfd_mapping&) = delete;
  memfd_mapping& operator=(const memfd_mapping&) = delete;

  int fd() const { return fd_; }
  std::byte* data() const { return data_; }
  std::uint64_t size_bytes() const { return size_; }

 private:
  int fd_ = -1;
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace tg::emu
