// weight.cpp: borrowing tensor bytes from the GGUF mapping and checking shape and type.
#include "llm/model/weight.hpp"

#include <algorithm>
#include <vector>

#include <tg/core/error.hpp>

#include "llm/gguf/gguf_file.hpp"

namespace tg::model {

bool kernels_read(gguf::tensor_type type) {
  using gguf::tensor_type;
  switch (type) {
    case tensor_type::f32: case tensor_type::f16: case tensor_type::q8_0: case tensor_type::q4_0:
    case tensor_type::q5_0: case tensor_type::q4_k: case tensor_type::q5_k: case tensor_type::q6_k:
    case tensor_type::bf16: case tensor_type::q4_1: case tensor_type::q5_1: case tensor_type::q2_k: case tensor_type::q3_k:
      return true;
    default:
      return false;
  }
}

weight describe_weight(const gguf::file& file, const std::string& name, std::int64_t rows, std::int64_t cols) {
  const gguf::tensor_info& t = file.get_tensor(name);
  if (std::int64_t(t.ne[0]) != cols || std::int64_t(t.row_count()) != rows)
    throw usage_error(str(file.name(), ": tensor ", name, " is ", t.ne[0], " x ", t.row_count(), " (in x out), expected ",
                          cols, " x ", rows));
  if (!kernels_read(t.type))
    throw usage_error(str(file.name(), ": tensor ", name, " has type ", gguf::tensor_type_name(t.type),
                          ", which the model kernels do not support (unsupported tensor type)"));
  weight w;
  w.name = name;
  w.type = t.type;
  w.rows = rows;
  w.cols = cols;
  w.row_bytes = std::int64_t(t.row_size_bytes());
  return w;
}

weight load_weight(device& dev, const gguf::file& file, const std::string& name, std::int64_t rows, std::int64_t cols) {
  weight w = describe_weight(file, name, rows, cols);
  auto bytes = file.tensor_bytes(file.get_tensor(name));
  w.data = dev.borrow_host(bytes.data(), bytes.size());
  return w;
}

std::optional<weight> stack_weights(device& dev, const gguf::file& file, const std::vector<weight>& parts,
                                    const std::string& name) {
  if (parts.empty()) return std::nullopt;
  // Vectors (one row each: biases) join end to end whatever their lengths.
  const bool vectors = std::all_of(parts.begin(), parts.end(), [](const weight& w) { return w.rows == 1; });
  for (const weight& w : parts)
    if (w.type != parts[0].type || (!vectors && (w.cols != parts[0].cols || w.row_bytes != parts[0].row_bytes)))
      return std::nullopt;
  weight stacked = parts[0];
  stacked.name = name;
  stacked.rows = vectors ? 1 : 0;
  stacked.cols = stacked.row_bytes = 0;
  std::vector<std::byte> bytes;
  for (const weight& w : parts) {
    auto b = file.tensor_bytes(file.get_tensor(w.name));
    bytes.insert(bytes.end(), b.begin(), b.end());
    if (vectors) stacked.cols += w.cols, stacked.row_bytes += w.row_bytes;
    else stacked.rows += w.rows, stacked.cols = w.cols, stacked.row_bytes = w.row_bytes;
  }
  stacked.data = dev.allocate(bytes.size());
  stacked.data.copy_in(bytes.data(), bytes.size());
  return stacked;
}

}  // namespace tg::model
