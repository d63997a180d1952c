// memlife dump: prints every record of one trace, as text or JSON lines.
#include <cstdio>
#include <iostream>
#include <string>

#include "analysis/terminal_text.h"
#include "format/reader.h"
#include "output_file.h"
#include "record_json.h"
#include "text_line.h"
#include "verbs.h"

namespace memlife::tool {
namespace {

struct DumpOptions {
  std::string format = "text";
  std::string trace;
};

void write_line(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
}

int dump(const DumpOptions& options) {
  std::string error;
  auto reader = format::TraceReader::open(options.trace, error);
  if (!reader) {
    std::cerr << "memlife dump: " << error << "\n";
    return 2;
  }
  const bool jsonl = options.format == "jsonl";
  const Json header = RecordJson::header(reader->header());
  write_line(jsonl ? to_line(header) : analysis::terminal_safe(text_comment(header)));

  RecordJson converter;
  const uint64_t start_ns = reader->header().start_monotonic_ns;
  const format::ReadStatus status = reader->for_each([&](const format::Record& record) {
    const Json json = converter.convert(record);
    write_line(jsonl ? to_line(json) : analysis::terminal_safe(text_line(json, start_ns)));
    return true;
  });

  const Json summary = RecordJson::summary(status);
  if (jsonl) {
    write_line(to_line(summary));
  }
  if (!finish_stdout(error)) {
    std::cerr << "memlife dump: " << error << "\n";
    return 2;
  }
  if (!jsonl) std::cerr << analysis::terminal_safe(text_comment(summary)) << "\n";
  if (!status.complete || status.damaged) {
    std::cerr << "memlife dump: warning: " << options.trace
              << (status.damaged ? " is damaged (at byte " + std::to_string(status.stop_offset) +
                                       ": " + status.stop_reason + ")"
                                 : std::string(" is truncated (no end record)"))
              << (status.damaged && !status.complete ? " and has no end record" : "")
              << "; printed the " << status.records << " records it could read\n";
  }
  return 0;
}

}  // namespace

void register_dump_verb(CLI::App& app) {
  auto options = std::make_shared<DumpOptions>();
  CLI::App* verb = app.add_subcommand("dump", "Print every record of a trace");
  verb->add_option("--format", options->format, "text (one aligned line per record) or jsonl")
      ->check(CLI::IsMember({"text", "jsonl"}))
      ->capture_default_str();
  verb->add_option("trace", options->trace, "The .mltrace file")->required();
  verb->callback([options] {
    if (int code = dump(*options); code != 0) throw ExitWith{code};
  });
}

}  // namespace memlife::tool
