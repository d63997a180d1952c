// JSON that can sit inside <script type="application/json"> whatever the
// trace put in its strings: '<', '>', '&' and U+2028/U+2029 become \u
// escapes, so no "</script>" or "<!--" can close or confuse the element,
// and invalid UTF-8 is replaced.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace memlife::views {

std::string script_safe_json(const nlohmann::json& j);

}  // namespace memlife::views
