// A canonical text rendering of records, so tests can compare what went into
// a TraceBuilder with what came out of a TraceReader without caring that the
// reader's lists and strings are views that die with the visitor call.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "format/reader.h"
#include "format/records.h"

namespace memlife::format::testing {

// Renders each field of a record as "name=value " (record_fields.h's
// visitor): strings in hex, lists and holders in brackets, enums and flags
// as numbers.
class FieldText {
 public:
  void varint(const char* name, uint64_t v, Meaning) { out_ << name << '=' << v << ' '; }
  void svarint(const char* name, int64_t v) { out_ << name << '=' << v << ' '; }
  void address(const char* name, uint64_t v) { out_ << name << '=' << v << ' '; }
  void bytes(const char* name, std::string_view v, Meaning) {
    out_ << name << '=' << quoted(v) << ' ';
  }
  template <typename T>
  void ids(const char* name, List<T> v) {
    out_ << name << "=[";
    for (size_t i = 0; i < v.size; ++i) out_ << (i ? "," : "") << v[i];
    out_ << "] ";
  }
  void sids(const char* name, List<int64_t> v) { ids(name, v); }
  void holders(const char* name, List<CensusHolder> v) {
    out_ << name << "=[";
    for (const CensusHolder& h : v) out_ << h.tensor_id << ':' << h.reachable_bytes << ',';
    out_ << "] ";
  }
  template <typename E>
  void enumeration(const char* name, E v) {
    out_ << name << '=' << static_cast<uint64_t>(v) << ' ';
  }
  template <size_t N>
  void flags(const char* name, uint64_t v, const std::array<FlagName, N>&) {
    out_ << name << '=' << v << ' ';
  }
  std::string str() const { return out_.str(); }

 private:
  // Strings may hold NUL and non-printable bytes: hex, so that a mismatch
  // is visible and an embedded NUL cannot truncate the comparison.
  static std::string quoted(std::string_view s);
  std::ostringstream out_;
};

// The fields of one record body, in wire order.
template <typename R>
std::string body_text(const R& r) {
  FieldText text;
  fields(r, text);
  return text.str();
}

// "kind seq=.. t=.. stream=.. | body" for a decoded record.
std::string record_text(const Record& r);
// The same line for a record the test is about to add.
std::string record_text(RecordKind kind, uint64_t seq, uint64_t time_ns, uint64_t stream,
                        const std::string& body);

// Reads all records of a trace held in memory; `error` gets the open error.
struct ReadResult {
  bool opened = false;
  std::string error;
  ReadStatus status;
  std::vector<std::string> records;  // record_text of each, in read order
  std::vector<uint64_t> seqs;
};
ReadResult read_all(const std::vector<uint8_t>& bytes);
ReadResult read_all(const uint8_t* data, size_t bytes);

}  // namespace memlife::format::testing
