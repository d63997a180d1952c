// Names of torch's RecordFunction ranges that both the recorder (lib/torch)
// and the analyzer (lib/analysis) give a meaning to: the trace keeps op
// names as torch spells them.
#pragma once

#include <string_view>

namespace memlife {

// `t.data = x` (set_data) fires only this op, then the old storage's free.
inline constexpr std::string_view kSetDataOp = "aten::_has_compatible_shallow_copy_type";

// The range the autograd engine opens around each node it runs
// ("autograd::engine::evaluate_function: MmBackward0"). On CUDA it runs on
// the engine's own thread, which runs no Python.
inline constexpr std::string_view kEngineNodePrefix = "autograd::engine::evaluate_function:";

}  // namespace memlife
