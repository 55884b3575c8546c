// code_object_kernargs.cpp: natural-alignment layout of kernel arguments and the kernarg allocation.
#include "drivers/amd/code_object_kernargs.hpp"

#include <tg/core/error.hpp>

namespace tg::amd {

kernarg_layout layout_kernargs(std::span<const kernarg> args) {
  constexpr std::uint64_t max_bytes = 0xFFFFFFFFu;  // kernarg_size is a u32 in the descriptor
  kernarg_layout l;
  std::uint64_t end = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const kernarg& a = args[i];
    if (a.size_bytes == 0)
      throw usage_error(str("kernargs: argument ", i, " has size 0"));
    if (a.align_bytes == 0 || a.align_bytes > 16 || (a.align_bytes & (a.align_bytes - 1)) != 0)
      throw usage_error(str("kernargs: argument ", i, " has alignment ", a.align_bytes,
                            "; alignments are powers of two up to 16"));
    std::uint64_t at = (end + a.align_bytes - 1) / a.align_bytes * a.align_bytes;
    end = at + a.size_bytes;
    if (end > max_bytes) throw usage_error(str("kernargs: ", args.size(), " arguments take more than 4 GiB"));
    l.offsets.push_back(std::uint32_t(at));
  }
  l.explicit_bytes = l.kernarg_bytes = l.alloc_bytes = std::uint32_t(end);
  return l;
}

kernarg_layout layout_kernargs(const code_object_kernel& k, std::span<const kernarg> args) {
  kernarg_layout l = layout_kernargs(args);
  const kernel_descriptor& kd = k.descriptor;
  if (l.explicit_bytes > kd.kernarg_size)
    throw usage_error(str("kernargs: kernel '", k.name, "': ", args.size(), " arguments take ", l.explicit_bytes,
                          " bytes, but its descriptor's kernarg_size is ", kd.kernarg_size,
                          "; the argument list does not match the kernel's signature"));
  l.kernarg_bytes = kd.kernarg_size;
  l.hidden_bytes = l.kernarg_bytes - l.explicit_bytes;
  l.alloc_bytes = l.kernarg_bytes;
  if (kd.has(queue::pm4::kcp_dispatch_ptr)) {
    l.dispatch_packet_offset = l.kernarg_bytes;
    l.alloc_bytes += dispatch_packet_bytes;
  }
  return l;
}

}  // namespace tg::amd
