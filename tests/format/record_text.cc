#include "record_text.h"

#include <sstream>

namespace memlife::format::testing {
std::string FieldText::quoted(std::string_view s) {
  static const char* digits = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out + "\"";
}

std::string record_text(RecordKind kind, uint64_t seq, uint64_t time_ns, uint64_t stream,
                        const std::string& body) {
  std::ostringstream out;
  out << static_cast<int>(kind) << " seq=" << seq << " t=" << time_ns << " stream=" << stream
      << " | " << body;
  return out.str();
}

std::string record_text(const Record& r) {
  std::string body;
  with_body(r.header.kind, r, [&](const auto& record) { body = body_text(record); });
  return record_text(r.header.kind, r.header.seq, r.header.time_ns, r.header.stream_id, body);
}

ReadResult read_all(const uint8_t* data, size_t bytes) {
  ReadResult result;
  auto reader = TraceReader::from_memory(data, bytes, result.error);
  if (!reader) return result;
  result.opened = true;
  result.status = reader->for_each([&](const Record& r) {
    result.records.push_back(record_text(r));
    result.seqs.push_back(r.header.seq);
    return true;
  });
  return result;
}

ReadResult read_all(const std::vector<uint8_t>& bytes) {
  return read_all(bytes.data(), bytes.size());
}

}  // namespace memlife::format::testing

#include <algorithm>

#include "scripted_trace.h"

namespace memlife::format::testing {

Framing walk_framing(const std::vector<uint8_t>& bytes) {
  auto u32 = [&](size_t at) {
    return static_cast<uint32_t>(bytes[at]) | static_cast<uint32_t>(bytes[at + 1]) << 8 |
           static_cast<uint32_t>(bytes[at + 2]) << 16 | static_cast<uint32_t>(bytes[at + 3]) << 24;
  };
  Framing f;
  f.header_end = 16 + u32(12);
  size_t at = f.header_end;
  while (at + 12 <= bytes.size()) {
    f.chunk_begin.push_back(at);
    at += 12 + u32(at);
    f.chunk_end.push_back(at);
  }
  return f;
}

std::vector<std::string> expected_texts(const std::vector<std::vector<ExpectedRecord>>& chunks,
                                        size_t chunks_kept) {
  std::vector<size_t> lost;
  for (size_t i = chunks_kept; i < chunks.size(); ++i) lost.push_back(i);
  return expected_texts_without(chunks, lost);
}

std::vector<std::string> expected_texts_without(
    const std::vector<std::vector<ExpectedRecord>>& chunks, const std::vector<size_t>& lost) {
  std::vector<ExpectedRecord> all;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (std::find(lost.begin(), lost.end(), i) != lost.end()) continue;
    all.insert(all.end(), chunks[i].begin(), chunks[i].end());
  }
  std::sort(all.begin(), all.end(),
            [](const ExpectedRecord& a, const ExpectedRecord& b) { return a.seq < b.seq; });
  std::vector<std::string> texts;
  texts.reserve(all.size());
  for (const ExpectedRecord& r : all) texts.push_back(r.text);
  return texts;
}

}  // namespace memlife::format::testing
