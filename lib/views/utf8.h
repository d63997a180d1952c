// Trace strings are raw bytes (file names, labels); pickles and JSON need
// valid UTF-8, so every string leaving a trace goes through here.
#pragma once

#include <string>
#include <string_view>

namespace memlife::views {

// `bytes` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view bytes);

}  // namespace memlife::views
