// emu_device_program.hpp: what the emulated GPU needs to run a loaded program's host twin: where
// the kernarg pointer sits among the user SGPRs the kernel descriptor asks for. Used by
// emu_device::load_program (emu_device_program.cpp), which registers the twin.
#pragma once
#include "drivers/emu/dispatch.hpp"
#include "runtime/queue/pm4.hpp"

namespace tg::emu {

// The SGPRs the descriptor enables ahead of the kernarg pointer (llvm/docs/AMDGPUUsage.rst): private segment
// buffer (4), dispatch pointer (2), queue pointer (2).
kernel_abi kernel_abi_of(const queue::pm4::kernel_summary& k);

}  // namespace tg::emu
