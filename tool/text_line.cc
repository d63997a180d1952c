#include "text_line.h"

#include <cstdio>
#include <string_view>

namespace memlife::tool {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string scalar(const Json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s.find_first_of(" \t\n\"=") != std::string::npos)
      return v.dump(-1, ' ', false, Json::error_handler_t::replace);
    return s;
  }
  if (v.is_null()) return "?";
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// "ns::f<long, ...>::g(int, ...)" -> "ns::f<>::g": a symbolized C++ name
// without its argument list and template arguments, for one line.
std::string short_function(std::string_view name) {
  std::string out;
  int depth = 0;
  for (char c : name) {
    if (c == '(' && depth == 0) break;
    if (c == '<' && depth++ == 0) out += "<>";
    if (c == '>' && depth > 0) {
      --depth;
      continue;
    }
    if (depth == 0) out += c;
  }
  return out;
}

std::string frame_text(const Json& frame) {
  if (frame.contains("address")) {
    if (frame.contains("function") && frame["function"].is_string())
      return short_function(frame["function"].get_ref<const std::string&>());
    const Json& module = frame["module"];
    if (module.is_string()) return std::string(basename(module.get_ref<const std::string&>()));
    return frame["address"].get<std::string>();
  }
  std::string out = frame["file"].is_string() ? frame["file"].get<std::string>() : "?";
  out += ":" + scalar(frame["line"]);
  if (frame["function"].is_string()) out += " " + frame["function"].get<std::string>();
  return out;
}

std::string stack_text(const Json& stack) {
  if (!stack.is_array()) return "?";
  std::string out = "[";
  for (size_t i = 0; i < stack.size(); ++i) {
    if (i) out += " < ";
    out += frame_text(stack[i]);
  }
  return out + "]";
}

bool is_zero(const Json& record, const std::string& key) {
  auto it = record.find(key);
  return it != record.end() && it->is_number_unsigned() && it->get<uint64_t>() == 0;
}

// Fields a human line leaves out: raw ids that a resolved neighbour already
// shows ("name_string" next to "name", "stack_id" next to "stack"), and
// references that are 0, meaning none.
bool omitted(const Json& record, const std::string& key) {
  if (ends_with(key, "_string")) {
    auto it = record.find(key.substr(0, key.size() - 7));
    return is_zero(record, key) || (it != record.end() && it->is_string());
  }
  if (record.contains(key + "_string")) return is_zero(record, key + "_string");
  if (key == "stack_id") return is_zero(record, key) || record["stack"].is_array();
  if (key == "stack") return is_zero(record, "stack_id");
  if (key == "python_frames" || key == "native_addresses") return record.contains("stack");
  return false;
}

bool is_address(const std::string& key) {
  return key == "address" || ends_with(key, "_address") || key == "base" || key == "size";
}

}  // namespace

std::string text_line(const Json& record, uint64_t start_monotonic_ns) {
  const uint64_t time_ns = record["time_ns"].get<uint64_t>();
  const double seconds =
      static_cast<double>(static_cast<int64_t>(time_ns - start_monotonic_ns)) / 1e9;
  std::string type = record["type"].get<std::string>();
  if (record.contains("phase") && type == "op") type += "_" + record["phase"].get<std::string>();

  char prefix[96];
  std::snprintf(prefix, sizeof prefix, "%10llu %12.6f %3llu %-16s",
                static_cast<unsigned long long>(record["seq"].get<uint64_t>()), seconds,
                static_cast<unsigned long long>(record["stream"].get<uint64_t>()), type.c_str());
  std::string out = prefix;
  for (auto it = record.begin(); it != record.end(); ++it) {
    const std::string& key = it.key();
    if (key == "type" || key == "seq" || key == "time_ns" || key == "stream") continue;
    if (key == "phase" && record["type"] == "op") continue;
    if (omitted(record, key)) continue;
    out += ' ';
    out += key;
    out += '=';
    if (key == "stack") {
      out += stack_text(*it);
    } else if (key == "holders") {
      std::string holders;
      for (const Json& h : *it) {
        if (!holders.empty()) holders += ',';
        holders += scalar(h["tensor_id"]) + ":" + scalar(h["reachable_bytes"]);
      }
      out += "[" + holders + "]";
    } else if (is_address(key) && it->is_number_unsigned()) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "0x%llx",
                    static_cast<unsigned long long>(it->get<uint64_t>()));
      out += buf;
    } else {
      out += scalar(*it);
    }
  }
  return out;
}

std::string text_comment(const Json& object) {
  std::string out = "#";
  for (auto it = object.begin(); it != object.end(); ++it) {
    out += ' ';
    out += it.key();
    out += '=';
    out += scalar(*it);
  }
  return out;
}

}  // namespace memlife::tool
