// A canonical text rendering of records, so tests can compare what went into
// a TraceBuilder with what came out of a TraceReader without caring that the
// reader's lists and strings are views that die with the visitor call.
#pragma once

#include <string>
#include <vector>

#include "format/reader.h"
#include "format/records.h"

namespace memlife::format::testing {

// The fields of one record body, rendered in the order the spec lists them.
std::string body_text(const ProcessRecord& r);
std::string body_text(const ThreadRecord& r);
std::string body_text(const ModuleRecord& r);
std::string body_text(const StringRecord& r);
std::string body_text(const FrameRecord& r);
std::string body_text(const StackRecord& r);
std::string body_text(const AllocRecord& r);
std::string body_text(const FreeRecord& r);
std::string body_text(const SegmentRecord& r);
std::string body_text(const TensorRecord& r);
std::string body_text(const OpBeginRecord& r);
std::string body_text(const OpEndRecord& r);
std::string body_text(const CollectiveIssueRecord& r);
std::string body_text(const CollectiveWaitRecord& r);
std::string body_text(const MarkRecord& r);
std::string body_text(const CensusRecord& r);
std::string body_text(const CensusStorageRecord& r);
std::string body_text(const OomRecord& r);
std::string body_text(const LostRecord& r);
std::string body_text(const TensorDeathRecord& r);
std::string body_text(const EndRecord& r);

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
