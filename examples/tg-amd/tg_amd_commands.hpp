// tg_amd_commands.hpp: the subcommands of `tg-amd` (list, info, reset, copy-bench), each a
// function over the buses the user chose: the machine's own (sysfs + libusb) or an emulated one.
//
//   tg::tools::amd_context ctx{.buses = tg::transport::real_buses()};
//   return tg::tools::run_info(ctx, "AMD:0");
//
// Each returns the process exit code and prints to stdout; errors propagate as exceptions for
// main() to print.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "runtime/transport/open_transport.hpp"

namespace tg::emu {
class emulated_machine;
}

namespace tg::tools {

struct amd_context {
  transport::system_buses buses;
  std::filesystem::path firmware_dir = "/lib/firmware/amdgpu";
  emu::emulated_machine* machine = nullptr;  // set with --emulate
  bool verbose = false;
};

int run_list(amd_context& ctx);
int run_info(amd_context& ctx, const std::string& device);
int run_reset(amd_context& ctx, const std::string& device);

struct copy_bench_options {
  std::uint64_t bytes = 64ull << 20;
  int repeats = 3;
};
int run_copy_bench(amd_context& ctx, const std::string& device, const copy_bench_options& options);

}  // namespace tg::tools
