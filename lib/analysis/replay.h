// Replays one trace in sequence order into a Model and drives the
// detectors' hooks. Dead things (freed allocations, their storages and
// tensors, tensors a census no longer lists) are dropped as the replay goes.
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/collective_nesting.h"
#include "analysis/detector.h"
#include "analysis/model.h"
#include "format/reader.h"
#include "memlife/torch_op_names.h"

namespace memlife::analysis {

class Replayer final : public format::RecordVisitor {
 public:
  Replayer(Model& model, std::vector<Detector*> detectors)
      : model_(model), detectors_(std::move(detectors)) {}
  bool on_record(const format::Record& record) override;

 private:
  void on_alloc(const format::AllocRecord& r, const When& at, uint64_t stream);
  void on_free(uint64_t address, const When& at);
  void on_tensor(const format::TensorRecord& r, const When& at, uint64_t stream);
  void on_op_begin(const format::OpBeginRecord& r, const When& at, uint64_t stream);
  void on_collective_issue(const format::CollectiveIssueRecord& r, const When& at, uint64_t thread);
  void on_collective_wait(const format::CollectiveWaitRecord& r, const When& at);
  void on_mark(const format::MarkRecord& r, const When& at, uint64_t stream);
  // Counts the open calls of a DDP communication hook on `stream`.
  void note_comm_hook(std::string_view label, uint64_t stream);
  // Opens or closes a backward pass begun on `stream` (the stack of its call).
  void note_backward(std::string_view label, uint64_t stream, uint64_t stack_id);
  // Whether the autograd engine is running a node on `stream`.
  bool in_engine_node(uint64_t stream) const;
  void on_tensor_death(const format::TensorDeathRecord& r, const When& at);
  void on_census(const format::CensusRecord& r, const When& at);
  void on_census_storage(const format::CensusStorageRecord& r);
  void on_segment(const format::SegmentRecord& r, bool is_alloc, const When& at);
  void bind_storage(Storage& s, uint64_t data_address);
  // Gives `stack_id` (an output of the op that just ran on `stream`) to the
  // allocations that op made without a stack.
  void lend_stack_to_op_allocations(uint64_t stream, uint64_t op_string, uint64_t stack_id);
  // The outermost custom (non-aten) op open on `stream`, as (op id, name
  // string); zeros when none.
  std::pair<uint64_t, uint64_t> enclosing_custom_op(uint64_t stream) const;

  Model& model_;
  std::vector<Detector*> detectors_;
  // The layers of one collective call (c10d -> NCCL): a synchronous outer
  // call completes its inner layers too.
  CollectiveNesting nesting_;
  uint64_t next_synthetic_collective_ = uint64_t{1} << 63;
  // Per stream, (address, op name) of allocations made inside an op with no
  // stack and no tensor yet: the CUDA caching allocator's tracker records
  // none inside an op, and a library's workspace (cuBLAS's, 32 MiB on an
  // H100) never becomes a tensor's storage. They take the Python stack of
  // the op's output tensor, which is the call that made them.
  std::unordered_map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> stackless_in_op_;
  // Backward passes open now (MEMLIFE_BACKWARD_BEGIN/END marks), as (stream,
  // stack of the call), in the order they began. What an engine node
  // allocates without a stack (CUDA's engine thread runs no Python) takes
  // the stack of the oldest: a backward begun inside another (a reentrant
  // checkpoint's, on the engine's thread) is the outer call's work.
  std::vector<std::pair<uint64_t, uint64_t>> open_backwards_;
};

// Replays the whole trace of `reader` into `model`.
format::ReadStatus replay(format::TraceReader& reader, Model& model,
                          const std::vector<Detector*>& detectors);

// Whether a library, not the program, issued this c10d collective: C++
// code (DDP's reducer inside backward, `_broadcast_coalesced`, an
// extension: the innermost Python frame is library code that called into
// C++, or the thread runs no Python at all), or library Python code calling
// torch.distributed (DDP's Join notifying its context: `dist.all_reduce(
// async_op=True)` whose Work the reducer keeps and waits, or drops, in C++).
// The library waits such works itself, often in C++, where memlife sees no
// wait, so their waits are not judged. False when the stack is unknown
// (--stacks none).
bool issued_by_library(const Model& model, uint64_t stack_id);

}  // namespace memlife::analysis
