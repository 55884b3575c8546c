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
  // Drops this process's pages of the whole pages inside `range` (madvise MADV_DONTNEED): the
  // mapping stays valid and a later read pages them in from the file again. For bytes the
  // program has copied (a CPU model's weights repacked into tiles), so they stop counting in
  // its resident memory. A range outside the mapping is ignored.
  void release(std::span<const std::byte> range) const noexcept;

 private:
  void unmap() noexcept;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tg::gguf
