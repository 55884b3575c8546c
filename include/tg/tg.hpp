// tg.hpp: everything a user of the DSL needs: tensors, ops, tg::lower, tg::bind_kernels, the
// kernel builder. Header-only; the devices that run plans are <tg/device.hpp>.
#pragma once
#include <tg/ast/builder.hpp>
#include <tg/ast/kernel_builder.hpp>
#include <tg/ast/plan.hpp>
#include <tg/dsl/members.hpp>
#include <tg/core/error.hpp>
#include <tg/lower/bind.hpp>
#include <tg/lower/pipeline.hpp>
