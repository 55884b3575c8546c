// tg.hpp: everything a user of the DSL needs: tensors, ops, tg::lower, the kernel builder.
#pragma once
#include "ast/builder.hpp"
#include "ast/kernel_builder.hpp"
#include "ast/plan.hpp"
#include "dsl/members.hpp"
#include "error.hpp"
#include "lower/pipeline.hpp"
