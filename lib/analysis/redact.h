// Secrets on a traced command line (--password=..., --token X,
// HF_TOKEN=...) stay out of the reports memlife writes (issue 15 item 8):
// the value becomes "***". `--keep-secrets` skips this.
#pragma once

#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace memlife::analysis {

namespace redact_detail {

inline std::string normalized(std::string_view name) {
  std::string out;
  for (char c : name)
    out += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A name (flag without its dashes, or an environment-style NAME) whose
// value is a secret.
inline bool secret_name(std::string_view raw) {
  const std::string n = normalized(raw);
  if (n.find("secret") != std::string::npos || n.find("password") != std::string::npos ||
      n.find("passwd") != std::string::npos || n.find("credential") != std::string::npos)
    return true;
  for (std::string_view suffix : {"token", "api-key", "apikey", "-key", "auth"})
    if (n == suffix.substr(suffix[0] == '-' ? 1 : 0) || ends_with(n, suffix)) return true;
  return false;
}

inline bool env_style(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace redact_detail

// `command_line` (words joined by spaces, as the recorder stores it) with
// each secret value replaced by "***": --password=V, --token V (the next
// word), --api-key=V, NAME_KEY=V, NAME_TOKEN=V, *SECRET*=V.
inline std::string redact_command_line(std::string_view command_line) {
  using namespace redact_detail;
  std::string out;
  bool redact_next = false;
  size_t i = 0;
  while (i <= command_line.size()) {
    size_t end = command_line.find(' ', i);
    if (end == std::string_view::npos) end = command_line.size();
    const std::string_view word = command_line.substr(i, end - i);
    if (i) out += ' ';
    if (redact_next && !word.empty()) {
      out += "***";
      redact_next = false;
    } else if (!word.empty() && word[0] == '-') {
      const size_t dashes = word.find_first_not_of('-');
      const size_t eq = word.find('=');
      const std::string_view name =
          word.substr(dashes == std::string_view::npos ? word.size() : dashes,
                      eq == std::string_view::npos ? std::string_view::npos : eq - dashes);
      if (dashes != std::string_view::npos && secret_name(name)) {
        if (eq == std::string_view::npos) {
          out += word;
          redact_next = true;
        } else {
          out += word.substr(0, eq + 1);
          out += "***";
        }
      } else {
        out += word;
      }
    } else if (const size_t eq = word.find('='); eq != std::string_view::npos &&
                                                 env_style(word.substr(0, eq)) &&
                                                 secret_name(word.substr(0, eq))) {
      out += word.substr(0, eq + 1);
      out += "***";
    } else {
      out += word;
    }
    i = end + 1;
  }
  return out;
}

// Redacts every "command_line" string in `j` (a report, or a page's data).
inline void redact_secrets(nlohmann::json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "command_line" && it->is_string())
        *it = redact_command_line(it->get_ref<const std::string&>());
      else
        redact_secrets(*it);
    }
  } else if (j.is_array()) {
    for (auto& e : j) redact_secrets(e);
  }
}

}  // namespace memlife::analysis
