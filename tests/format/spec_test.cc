// The spec comment in include/memlife/trace_format.h against the field
// descriptions the encoder and reader use (format/record_fields.h): for
// every record kind, the wire types the comment lists, in order, are the
// ones the bytes hold. A field added to a description and not to the spec,
// or the other way round, fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "format/reader.h"
#include "format/record_fields.h"

namespace memlife::format {
namespace {

// The wire type of each field as the spec spells it.
struct WireTypes {
  std::vector<std::string> types;
  void varint(const char*, uint64_t, Meaning) { types.emplace_back("varint"); }
  void svarint(const char*, int64_t) { types.emplace_back("svarint"); }
  void address(const char*, uint64_t) { types.emplace_back("ptr"); }
  void bytes(const char*, std::string_view, Meaning) { types.emplace_back("str"); }
  template <typename T>
  void ids(const char*, List<T>) {
    types.emplace_back("list<varint>");
  }
  void sids(const char*, List<int64_t>) { types.emplace_back("list<svarint>"); }
  void holders(const char*, List<CensusHolder>) { types.emplace_back("list<pair>"); }
  template <typename E>
  void enumeration(const char*, E) {
    types.emplace_back("varint");
  }
  template <size_t N>
  void flags(const char*, uint64_t, const std::array<FlagName, N>&) {
    types.emplace_back("varint");
  }
};

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n");
  const size_t e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Each RecordKind value's comment block, read from the header. A value
// without a comment of its own shares the block above it
// (segment_alloc / segment_free).
std::map<int, std::string> spec_comments() {
  std::ifstream in(MEMLIFE_SOURCE_DIR "/include/memlife/trace_format.h");
  std::map<int, std::string> out;
  std::string line, block, last;
  bool inside = false;
  const std::regex enumerator(R"(^\s*k\w+\s*=\s*(\d+),)");
  while (std::getline(in, line)) {
    if (line.find("enum class RecordKind") != std::string::npos) inside = true;
    if (!inside) continue;
    if (line.find("};") == 0) break;
    const std::string t = trim(line);
    std::smatch m;
    if (t.rfind("//", 0) == 0) {
      block += " " + t.substr(2);
    } else if (std::regex_search(line, m, enumerator)) {
      if (!block.empty()) last = block;
      out[std::stoi(m[1])] = last;
      block.clear();
    }
  }
  return out;
}

// "alloc: ptr address; varint bytes; svarint device (-1 = CPU); ..." ->
// ptr, varint, svarint, ...: the field list runs from the first colon to the
// first full stop outside parentheses; "svarint a, b, c" is three fields.
std::vector<std::string> spec_types(const std::string& comment) {
  std::string text;
  int depth = 0;
  for (size_t i = comment.find(':') + 1; i < comment.size(); ++i) {
    const char c = comment[i];
    if (c == '(') ++depth;
    if (depth == 0 && c == '.' && (i + 1 == comment.size() || comment[i + 1] == ' ')) break;
    if (depth == 0) text += c;
    if (c == ')') --depth;
  }
  std::vector<std::string> types;
  std::stringstream fields(text);
  std::string field;
  while (std::getline(fields, field, ';')) {
    field = trim(field);
    if (field.rfind("list<pair", 0) == 0) {
      types.emplace_back("list<pair>");
    } else if (field.rfind("list<", 0) == 0) {
      const std::string element = field.substr(5, field.find_first_of(" >", 5) - 5);
      types.push_back("list<" + element + ">");
    } else {
      const std::string type = field.substr(0, field.find(' '));
      const size_t names = 1 + std::count(field.begin(), field.end(), ',');
      for (size_t i = 0; i < names; ++i) types.push_back(type);
    }
  }
  return types;
}

TEST(Spec, EveryRecordKindsCommentListsTheWireTypesItsBytesHold) {
  const auto comments = spec_comments();
  ASSERT_EQ(comments.size(), static_cast<size_t>(kMaxRecordKind)) << "RecordKind values found";
  Record record;
  for (const auto& [value, comment] : comments) {
    const auto kind = static_cast<RecordKind>(value);
    WireTypes wire;
    ASSERT_TRUE(with_body(kind, record, [&](const auto& body) { fields(body, wire); }))
        << "no field description for " << record_kind_name(kind);
    EXPECT_EQ(spec_types(comment), wire.types)
        << record_kind_name(kind) << " (kind " << value << "): the spec says\n " << comment;
  }
}

TEST(Spec, TheParserReadsTheSpecsNotations) {
  EXPECT_EQ(spec_types("process: svarint rank, local_rank, world_size; str note. Prose, more."),
            (std::vector<std::string>{"svarint", "svarint", "svarint", "str"}));
  EXPECT_EQ(spec_types("census: varint phase (0 begin, 1 end); list<pair<varint a, varint b>>."),
            (std::vector<std::string>{"varint", "list<pair>"}));
  EXPECT_EQ(spec_types("stack: list<varint frame_id> python (innermost first); list<svarint> s."),
            (std::vector<std::string>{"list<varint>", "list<svarint>"}));
}

}  // namespace
}  // namespace memlife::format
