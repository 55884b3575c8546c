// mapped_file.hpp: a whole file mapped read-only into memory, unmapped on destruction.
#pragma once
#include <cstddef>
#include <filesystem>
#include <span>

namespace tg::gguf {

class mapped_file {
 public:
  mapped_file() = default;
  // Throws usage_error when the path cannot be opened or is not a regular file, and
  // device_error when the kernel refuses the mapping.
  explicit mapped_file(const std::filesystem::path& path);
  mapped_file(mapped_file&& other) noexcept;
  mapped_file& operator=(mapped_file&& other) noexcept;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  ~mapped_file();

  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  void unmap() noexcept;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tg::gguf
