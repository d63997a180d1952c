// The recorder's options, in one table. `memlife run` makes its flags from
// it, checks every value (flags and variables already in its environment)
// before the program starts, and passes each in its variable; the recorder
// and the torch plugin read the variables with the same defaults and checks
// (a bad value set by hand: a one-line warning, then the default).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace memlife {

struct RecorderOption {
  const char* name;      // `memlife run --<name>` when `flag`
  const char* variable;  // the environment variable the recorder reads
  const char* default_value;
  const char* choices;  // "a|b|c"; nullptr: an integer in [min, max]
  int64_t min, max;
  bool flag;  // a `memlife run` flag; otherwise set through its variable only
  const char* help;
};

inline constexpr RecorderOption kRecorderOptions[] = {
    {"stacks", "MEMLIFE_STACKS", "python", "none|python|native|all", 0, 0, true,
     "Which stacks to record"},
    {"max-depth", "MEMLIFE_MAX_DEPTH", "32", nullptr, 1, 256, true,
     "Deepest stack recorded, in frames"},
    {"steps", "MEMLIFE_STEPS", "auto", "auto|marks", 0, 0, true,
     "Step boundaries: auto (optimizer step or marks) or marks (only marks)"},
    {"ops", "MEMLIFE_OPS", "top", "top|all", 0, 0, true,
     "Which torch ops to observe: top (ops called from Python; what they run inside is charged "
     "to them, and torch skips its per-op bookkeeping there) or all (nested ops too, slower)"},
    {"census-at-steps", "MEMLIFE_CENSUS_AT_STEPS", "1", "0|1", 0, 0, false,
     "1: a census of live tensors at each step mark"},
    {"cupti", "MEMLIFE_CUPTI", "1", "0|1", 0, 0, false,
     "1: CUPTI activity (raw CUDA allocations, NCCL kernels) on GPU processes"},
    {"holders", "MEMLIFE_HOLDERS", "1", "0|1", 0, 0, false,
     "1: walk Python references at optimizer steps 1, 2, 3, 4, 6, 8, ... to name holders"},
    {"sweep-ms", "MEMLIFE_SWEEP_MS", "50", nullptr, 0, 10000, false,
     "Milliseconds between the torch plugin's sweeps for tensor deaths (0: no sweeper thread; "
     "a death is then written only when the identity table drops the tensor or at a census)"},
    {"malloc-tune", "MEMLIFE_MALLOC_TUNE", "1", "0|1", 0, 0, false,
     "1: a fixed 128 KiB mmap threshold while the torch plugin is loaded (keeps large tensors "
     "out of a heap the plugin's small objects would fragment)"},
};

inline const RecorderOption* find_recorder_option(std::string_view name) {
  for (const RecorderOption& o : kRecorderOptions)
    if (name == o.name) return &o;
  return nullptr;
}

// Whether `value` is one of the option's choices or an integer in range.
inline bool recorder_option_valid(const RecorderOption& o, std::string_view value) {
  if (o.choices != nullptr) {
    std::string_view rest = o.choices;
    for (;;) {
      const size_t bar = rest.find('|');
      if (rest.substr(0, bar) == value) return true;
      if (bar == std::string_view::npos) return false;
      rest.remove_prefix(bar + 1);
    }
  }
  if (value.empty() || value.size() > 18) return false;
  const std::string text(value);
  char* end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  return *end == '\0' && parsed >= o.min && parsed <= o.max;
}

// What a bad value gets told: "one of a|b" or "an integer from 1 to 256".
inline std::string recorder_option_expected(const RecorderOption& o) {
  if (o.choices != nullptr) return std::string("one of ") + o.choices;
  return "an integer from " + std::to_string(o.min) + " to " + std::to_string(o.max);
}

}  // namespace memlife
