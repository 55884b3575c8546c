// weight.cpp: borrowing tensor bytes from the GGUF mapping and checking shape and type.
#include "llm/model/weight.hpp"

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

weight load_weight(device& dev, const gguf::file& file, const std::string& name, std::int64_t rows, std::int64_t cols) {
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
  auto bytes = file.tensor_bytes(t);
  w.data = dev.borrow_host(bytes.data(), bytes.size());
  return w;
}

}  // namespace tg::model
