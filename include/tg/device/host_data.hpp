// host_data.hpp: host-side data going into and out of a device: borrowed input views,
// variable bindings, and the owned result of a run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>
#include <tg/core/dtype.hpp>
#include <tg/core/error.hpp>

namespace tg {

// A borrowed, typed view of host memory: tg::host_view(std::vector<float>&) or a span.
struct host_view {
  const void* data = nullptr;
  std::size_t count = 0;
  dtype dt = dtype::float32;

  host_view() = default;
  template <class T> requires has_dtype<T>
  host_view(const std::vector<T>& v) : data(v.data()), count(v.size()), dt(dtype_of<T>) {}  // NOLINT: implicit
  template <class T> requires has_dtype<T>
  host_view(std::span<const T> v) : data(v.data()), count(v.size()), dt(dtype_of<T>) {}  // NOLINT: implicit
  template <class T> requires has_dtype<T>
  host_view(std::span<T> v) : data(v.data()), count(v.size()), dt(dtype_of<T>) {}  // NOLINT: implicit
  std::size_t size_bytes() const { return count * std::size_t(tg::size_bytes(dt)); }
};

struct named_input {
  std::string_view name;
  host_view data;
};

struct var_binding {
  std::string_view name;
  std::int64_t value = 0;
};

// The result of a run: dtype, concrete shape and the bytes.
class host_tensor {
 public:
  host_tensor() = default;
  host_tensor(dtype dt, std::vector<std::int64_t> shape)
      : dt_(dt), shape_(std::move(shape)), bytes_(std::size_t(numel()) * std::size_t(size_bytes(dt))) {}

  dtype dt() const { return dt_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : shape_) n *= d;
    return n;
  }
  std::span<std::byte> bytes() { return bytes_; }
  std::span<const std::byte> bytes() const { return bytes_; }

  template <class T>
  std::vector<T> to_vector() const {
    if (dtype_of<T> != dt_)
      throw usage_error(str("host_tensor::to_vector: the tensor holds ", name(dt_), ", not ", name(dtype_of<T>)));
    std::vector<T> out(static_cast<std::size_t>(numel()));
    if constexpr (std::is_same_v<T, bool>) {  // vector<bool> is packed: copy one by one
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = bytes_[i] != std::byte{0};
    } else if (!out.empty()) {
      std::memcpy(out.data(), bytes_.data(), bytes_.size());
    }
    return out;
  }

 private:
  dtype dt_ = dtype::float32;
  std::vector<std::int64_t> shape_;
  std::vector<std::byte> bytes_;
};

}  // namespace tg
