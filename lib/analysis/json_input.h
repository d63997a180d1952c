// The one way memlife reads a JSON input (report.json, --baseline,
// --report): the whole file, its nesting checked before it is parsed, so a
// hostile or corrupt file is a clear error, never a stack overflow
// (issue 15 item 4).
#pragma once

#include <cstddef>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace memlife::analysis {

// Deeper than any report memlife writes (about 8 levels) by far.
constexpr size_t kMaxJsonDepth = 256;

// The deepest nesting of arrays and objects in `text`, counting only
// brackets outside strings; stops counting past `limit`.
inline size_t json_nesting_depth(const std::string& text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// Parses `text`; false with `error` when it is not JSON or nests deeper
// than kMaxJsonDepth.
inline bool parse_json_text(const std::string& text, nlohmann::json& out, std::string& error) {
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    error = "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return false;
  }
  out = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded()) {
    error = "not valid JSON";
    return false;
  }
  return true;
}

// Reads and parses the file at `path`; errors name the path.
inline bool read_json_file(const std::string& path, nlohmann::json& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error = path + ": cannot open", false;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return error = path + ": read failed", false;
  if (!parse_json_text(ss.str(), out, error)) return error = path + ": " + error, false;
  return true;
}

}  // namespace memlife::analysis
