// weight.hpp: one GGUF tensor on a device, still in its file encoding (quantized blocks).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llm/gguf/tensor_type.hpp"
#include <tg/device.hpp>

namespace tg::gguf {
class file;
}

namespace tg::model {

// rows x cols (out x in), each row `row_bytes` bytes of `type` blocks.
struct weight {
  std::string name;
  gguf::tensor_type type = gguf::tensor_type::f32;
  std::int64_t rows = 0, cols = 0, row_bytes = 0;
  buffer data;
  // A copy in row tiles for prefill (matmul_tiles.hpp), when made: tile_rows rows per tile,
  // values in pairs (int8 or int16, vpdpwssd) or, with tile_quads, in quads of unsigned bytes
  // (vpdpbusd with AVX-512 VNNI, else vpmaddubsw + vpmaddwd; the Q4 types as their nibbles).
  buffer tiles;
  std::int64_t tile_rows = 0;
  bool tile_quads = false;
  // Q5_0 / Q5_1 as quads: a second tiled copy in the file's own bits (nibbles and fifth bits,
  // matmul_tiles.hpp), which decode reads in place of the file; prefill keeps `tiles` (whole
  // bytes, cheaper to unpack for several tokens). Empty for the other types.
  buffer decode_tiles;
};

// Borrows the tensor's bytes from the mapped file (zero-copy on the CPU). Throws usage_error
// when the tensor is missing, has the wrong shape, or has a type the kernels cannot read.
weight load_weight(device& dev, const gguf::file& file, const std::string& name, std::int64_t rows, std::int64_t cols);
// The same checks and description, without the bytes on a device (data empty).
weight describe_weight(const gguf::file& file, const std::string& name, std::int64_t rows, std::int64_t cols);
// Described weights (describe_weight) of one type, width and row size as one matrix, their rows
// one after another in one new buffer on dev (a copy, even on the CPU), named `name`; nullopt
// where they differ in type or row size. Vectors (one row each) join end to end into one.
std::optional<weight> stack_weights(device& dev, const gguf::file& file, const std::vector<weight>& parts,
                                    const std::string& name);

// The types the matmul and embedding kernels dequantize.
bool kernels_read(gguf::tensor_type type);

}  // namespace tg::model
