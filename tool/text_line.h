// Renders one record's JSON (from RecordJson) as one aligned human line:
// seq, time since the trace started, stream, type, then key=value fields.
// Resolved names replace their ids and stacks print as frame lists.
#pragma once

#include <cstdint>
#include <string>

#include "record_json.h"

namespace memlife::tool {

std::string text_line(const Json& record, uint64_t start_monotonic_ns);

// "# key=value ..." lines for the file header and the read summary.
std::string text_comment(const Json& object);

}  // namespace memlife::tool
