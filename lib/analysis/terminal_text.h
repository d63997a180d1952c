// Text from a trace (function and file names, op names, messages) shown on
// a terminal goes through terminal_safe first: a name holding an escape
// sequence must not clear the screen or set the window title (issue 15
// item 7). The one function every verb's terminal output uses.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace memlife::analysis {

// `text` with C0 controls, DEL, ESC and C1 controls (U+0080..U+009F, and
// stray bytes 0x80..0x9F outside a UTF-8 sequence) written as \xNN or
// \u00NN. `keep_newlines` keeps '\n' and '\t' (multi-line tables).
inline std::string terminal_safe(std::string_view text, bool keep_newlines = false) {
  std::string out;
  out.reserve(text.size());
  char buf[8];
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      if (keep_newlines && (c == '\n' || c == '\t')) {
        out += static_cast<char>(c);
      } else {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      }
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      continue;
    }
    // A well-formed UTF-8 sequence is kept, unless it encodes a C1 control.
    size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    if (c >= 0xf5) len = 0;
    bool valid = len > 0 && i + len <= text.size();
    for (size_t k = 1; valid && k < len; ++k)
      valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (!valid) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      continue;
    }
    const auto c1 = static_cast<unsigned char>(text[i + 1]);
    if (len == 2 && c == 0xc2 && c1 < 0xa0) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c1);
      out += buf;
    } else {
      out.append(text.substr(i, len));
    }
    i += len - 1;
  }
  return out;
}

}  // namespace memlife::analysis
