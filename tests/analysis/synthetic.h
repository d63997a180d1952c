// Builds synthetic traces the way the recorder and torch plugin write them,
// one call per event, and analyzes them in memory.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/report.h"
#include "format/reader.h"
#include "format/trace_builder.h"

namespace memlife::analysis::testing {

class Synth {
 public:
  explicit Synth(int64_t rank = -1, uint64_t pid = 4242, const std::string& run_id = "run",
                 uint64_t start_wall_ns = 0, const std::string& torch_version = "2.15.0")
      : builder_(header(rank, pid, run_id, start_wall_ns, torch_version)) {}
  // A process without torch (a plain CUDA program).
  static Synth without_torch() { return Synth(-1, 4242, "run", 0, ""); }

  uint64_t str(const std::string& s) {
    for (size_t i = 0; i < strings_.size(); ++i)
      if (strings_[i] == s) return i + 1;
    strings_.push_back(s);
    builder_.add(0, format::StringRecord{strings_.size(), s});
    return strings_.size();
  }
  // A stack with one Python frame file:line in function.
  uint64_t stack(const std::string& file, uint64_t line, const std::string& function = "f",
                 std::vector<uint64_t> native = {}) {
    return stack({{file, line, function}}, std::move(native));
  }
  struct Frame {
    std::string file;
    uint64_t line = 0;
    std::string function = "f";
  };
  // Python frames innermost first, as the recorder writes them.
  uint64_t stack(const std::vector<Frame>& frames, std::vector<uint64_t> native = {}) {
    std::vector<uint64_t> py;
    for (const Frame& f : frames) {
      py.push_back(++frames_);
      builder_.add(0, format::FrameRecord{py.back(), str(f.file), str(f.function), f.line});
    }
    const uint64_t id = ++stacks_;
    builder_.add(0, format::StackRecord{id, format::list_of<uint64_t>(py),
                                        format::list_of<uint64_t>(native)});
    return id;
  }
  // `op_string`: the op the recorder saw open (its name's string id).
  void alloc(uint64_t address, uint64_t bytes, uint64_t stack_id = 0, int64_t device = -1,
             uint64_t op_string = 0) {
    builder_.add(stream, format::AllocRecord{address, bytes, device, 0, stack_id, op_string});
  }
  void free(uint64_t address, uint64_t bytes = 0) {
    builder_.add(stream, format::FreeRecord{address, bytes, -1, FreePhase::kFree});
  }
  // A contiguous tensor of `numel` float32 elements at element `offset`.
  void tensor(uint64_t id, uint64_t storage, uint64_t address, uint64_t storage_bytes,
              int64_t numel, uint64_t flags = 0, uint64_t base = 0, const std::string& op = "",
              uint64_t stack_id = 0, uint64_t offset = 0) {
    std::vector<int64_t> sizes = {numel}, strides = {1};
    format::TensorRecord t;
    t.tensor_id = id;
    t.storage_id = storage;
    t.data_address = address;
    t.storage_bytes = storage_bytes;
    t.storage_offset = offset;
    t.sizes = format::list_of<int64_t>(sizes);
    t.strides = format::list_of<int64_t>(strides);
    t.itemsize = 4;
    t.dtype_string = str("float32");
    t.flags = flags;
    t.base_tensor_id = base;
    t.op_string = op.empty() ? 0 : str(op);
    t.stack_id = stack_id;
    builder_.add(stream, t);
  }
  void op(const std::string& name, std::vector<uint64_t> inputs, std::vector<uint64_t> outputs = {},
          uint64_t stack_id = 0) {
    const uint64_t id = ++ops_;
    builder_.add(stream,
                 format::OpBeginRecord{id, str(name), stack_id, format::list_of<uint64_t>(inputs)});
    builder_.add(stream, format::OpEndRecord{id, format::list_of<uint64_t>(outputs)});
  }
  void step(uint64_t n) {
    builder_.add(stream, format::MarkRecord{MarkKind::kStep, n, 0, 0, 0, 0});
  }
  void expect_freed(uint64_t address, const std::string& label, uint64_t stack_id = 0) {
    builder_.add(stream,
                 format::MarkRecord{MarkKind::kExpectFreed, 0, str(label), 0, address, stack_id});
  }
  // A label mark (memlife.mark, the Python hooks' marks).
  void label(const std::string& text, uint64_t stack_id = 0) {
    builder_.add(stream, format::MarkRecord{MarkKind::kLabel, 0, str(text), 0, 0, stack_id});
  }
  // A holder walk's mark: `label` is the path, then `file:line` lines.
  void holder(uint64_t address, const std::string& label, uint64_t step = 0) {
    builder_.add(stream, format::MarkRecord{MarkKind::kHolder, step, str(label), 0, address, 0});
  }
  // The end of a holder walk: memlife_holder(NULL, "") when it reached
  // everything, (NULL, "cut") when its budget cut it short.
  void walk_end(bool complete) {
    builder_.add(stream,
                 format::MarkRecord{MarkKind::kHolder, 0, complete ? 0 : str("cut"), 0, 0, 0});
  }
  struct Holder {
    uint64_t storage, address, bytes, use_count;
    std::vector<format::CensusHolder> holders;
    bool operator==(const Holder&) const = default;
  };
  // With `censuses_of_changes`, every census after the first lists only
  // what changed since the previous one, as the recorder writes it
  // (CensusPhase::kBeginChanges).
  bool censuses_of_changes = false;
  void census(uint64_t step, const std::vector<Holder>& storages,
              CensusReason reason = CensusReason::kStep) {
    const uint64_t id = ++censuses_;
    const bool changes = censuses_of_changes && id > 1;
    builder_.add(
        stream, format::CensusRecord{id, changes ? CensusPhase::kBeginChanges : CensusPhase::kBegin,
                                     reason, step, 0, format::kUnknownCount});
    std::map<uint64_t, const Holder*> listed;
    for (const Holder& h : storages) {
      listed[h.storage] = &h;
      auto before = previous_census_.find(h.storage);
      if (changes && before != previous_census_.end() && before->second == h) continue;
      builder_.add(stream,
                   format::CensusStorageRecord{id, h.storage, h.address, h.bytes, h.use_count, -1,
                                               format::list_of<format::CensusHolder>(h.holders)});
    }
    if (changes)
      for (const auto& [storage, h] : previous_census_)
        if (!listed.count(storage))
          builder_.add(stream, format::CensusStorageRecord{id, storage, h.address, h.bytes, 0, -1,
                                                           format::List<format::CensusHolder>{}});
    previous_census_.clear();
    for (const Holder& h : storages) previous_census_[h.storage] = h;
    builder_.add(stream, format::CensusRecord{id, CensusPhase::kEnd, reason, step, 0,
                                              format::kUnknownCount});
  }
  // A raw CUDA allocation (CUPTI segment) or its free.
  void segment(uint64_t address, uint64_t bytes, bool is_alloc = true, int64_t device = 0) {
    builder_.add_segment(stream, is_alloc, format::SegmentRecord{address, bytes, device, 7});
  }
  // Opens and closes an op around `inside` (collective layers nest in ops).
  template <typename F>
  void in_op(const std::string& name, F&& inside) {
    const uint64_t id = ++ops_;
    std::vector<uint64_t> none;
    builder_.add(stream, format::OpBeginRecord{id, str(name), 0, format::list_of<uint64_t>(none)});
    inside();
    builder_.add(stream, format::OpEndRecord{id, format::list_of<uint64_t>(none)});
  }
  void issue(uint64_t collective_id, const std::string& op, std::vector<uint64_t> outputs,
             uint64_t bytes, uint64_t stack_id = 0, uint64_t flags = kCollectiveAsync,
             const std::string& group = "0") {
    format::CollectiveIssueRecord c;
    c.collective_id = collective_id;
    c.op_string = str(op);
    c.group_string = group.empty() ? 0 : str(group);
    c.backend_string = str("gloo");
    c.inputs = format::list_of<uint64_t>(outputs);
    c.outputs = format::list_of<uint64_t>(outputs);
    c.bytes = bytes;
    c.stack_id = stack_id;
    c.flags = flags;
    builder_.add(stream, c);
  }
  void wait(uint64_t collective_id, std::vector<uint64_t> tensors, WaitHow how = WaitHow::kWorkWait,
            const std::string& op = "wait") {
    builder_.add(stream, format::CollectiveWaitRecord{collective_id, str(op),
                                                      format::list_of<uint64_t>(tensors), 0, how});
  }

  std::vector<uint8_t> bytes(bool clean_end = true) {
    return builder_.finish(clean_end, exit_status);
  }

  ProcessAnalysis analyze(bool clean_end = true, AnalysisOptions options = {}) {
    data_ = bytes(clean_end);
    std::string error;
    auto reader = format::TraceReader::from_memory(data_.data(), data_.size(), error);
    if (!reader) {
      ProcessAnalysis p;
      p.error = error;
      return p;
    }
    return analyze_reader(*reader, options);
  }

  format::TraceBuilder& builder() { return builder_; }
  uint64_t stream = 1;
  uint64_t exit_status = 0;  // the end record's, for a clean end

 private:
  static format::HeaderFields header(int64_t rank, uint64_t pid, const std::string& run_id,
                                     uint64_t start_wall_ns, const std::string& torch_version) {
    format::HeaderFields h;
    h.pid = pid;
    h.rank = rank;
    h.host = "testhost";
    h.run_id = run_id;
    h.start_wall_ns = start_wall_ns;
    h.torch_version = torch_version;
    h.start_monotonic_ns = 1'000'000;
    return h;
  }
  std::map<uint64_t, Holder> previous_census_;
  format::TraceBuilder builder_;
  std::vector<std::string> strings_;
  uint64_t frames_ = 0, stacks_ = 0, ops_ = 0, censuses_ = 0;
  std::vector<uint8_t> data_;
};

// Copies: callers often pass a temporary analysis.
inline std::vector<Finding> of_kind(const ProcessAnalysis& p, const std::string& kind) {
  std::vector<Finding> out;
  for (const Finding& f : p.findings)
    if (f.kind == kind) out.push_back(f);
  return out;
}

}  // namespace memlife::analysis::testing
