// The state rebuilt by replaying one process's trace: name tables, the live
// allocations, storages and tensors, steps, the current census and the
// collectives still in flight. Replay keeps only what is still alive (plus
// the tables), so memory follows the live set, not the trace length; the
// detectors keep whatever history they need themselves.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "format/reader.h"
#include "format/trace_tables.h"
#include "memlife/memlife.h"

namespace memlife::analysis {

using format::Module;
using format::Stack;

// Where and when something happened on the timeline.
struct When {
  uint64_t seq = 0, time_ns = 0, step = 0;
};

struct Geometry {
  uint64_t storage_offset = 0;  // elements
  std::vector<int64_t> sizes, strides;
  uint64_t itemsize = 0;
};

// Bytes of a storage a tensor with this geometry can touch, as the
// half-open byte range [begin, end). Empty tensors reach nothing.
struct ByteRange {
  uint64_t begin = 0, end = 0;
};
ByteRange reachable_range(const Geometry& g);
// Bytes of the elements a tensor addresses: its element count, or its span
// when smaller (broadcast strides). A column view spans a whole matrix but
// holds a column.
uint64_t addressed_bytes(const Geometry& g);
// Whether a tensor with this geometry spans its whole storage from byte 0.
bool covers_storage(const Geometry& g, uint64_t storage_bytes);

struct Tensor {
  uint64_t id = 0, storage_id = 0, data_address = 0;
  uint64_t flags = 0, base_tensor_id = 0, op_string = 0, stack_id = 0;
  // The custom (non-aten) op the tensor was made inside, when its own op
  // ran inside one (DeepCompile's dc::allgather_param slicing its buffer).
  uint64_t made_in_op_string = 0;
  int64_t device = -1;
  Geometry geometry;
  When first_seen, last_seen;
  // The last `t.data = x` that named this tensor as its target.
  uint64_t set_data_stack = 0;
  When set_data_at;
  // When a tensor_death record said it let go of a storage that lives on
  // (seq 0: not said).
  When died_at;
};

struct Allocation {
  uint64_t address = 0, bytes = 0;
  int64_t device = -1;
  uint64_t stack_id = 0, op_string = 0;
  When at;
  uint64_t storage_id = 0;  // 0 until a tensor record names this address
};

// Why an owner no longer holds its storage.
enum class LetGo : uint8_t { kNone, kRebound, kDied };

struct Storage {
  uint64_t id = 0, bytes = 0, data_address = 0;
  int64_t device = -1;
  bool data_live = false;  // an allocation backs it right now
  Allocation alloc;        // the allocation that made its memory
  uint64_t owner_tensor = 0;
  std::vector<uint64_t> tensors;  // every tensor that referred to it, in order
  LetGo let_go = LetGo::kNone;
  When let_go_at;
  uint64_t let_go_stack = 0;
  // The custom op the owner let go inside (DeepCompile's dc::release_param
  // running set_data in C++): the release site when the Python stack is
  // compiled code.
  uint64_t let_go_op_string = 0;
  uint64_t let_go_op_id = 0;  // that op's call; 0 when none
  // Model::ops_begun when the owner let go: a free with no op begun since
  // is the owner's own release, not a residual holder's.
  uint64_t ops_at_let_go = 0;
};

struct Census {
  uint64_t id = 0;
  CensusReason reason = CensusReason::kStep;
  uint64_t step = 0, live_tensors = 0, c10d_unwaited_works = format::kUnknownCount;
  When begin, end;
  struct Entry {
    uint64_t storage_id = 0, data_address = 0, storage_bytes = 0, use_count = 0;
    int64_t device = -1;
    std::vector<format::CensusHolder> holders;
  };
  std::vector<Entry> storages;
};

struct Collective {
  uint64_t id = 0, op_string = 0, group_string = 0, backend_string = 0;
  uint64_t thread = 0;  // recording stream (thread) of the issue
  std::vector<uint64_t> inputs, outputs, output_storages;
  uint64_t bytes = 0, stack_id = 0, flags = 0;
  When issued;
  // Earlier records of the same call that this one adopts as its inner
  // layers (functional -> c10d -> NCCL; see CollectiveNesting).
  std::vector<uint64_t> layers;
};

// Raw device (or pinned host) memory from the CUDA driver/runtime, seen by
// CUPTI. The torch caching allocator carves its blocks out of these; a
// framework-free program uses them directly.
struct Segment {
  uint64_t address = 0, bytes = 0, stream = 0;
  int64_t device = -1;
  When at;
  bool holds_allocations = false;  // an alloc record fell inside it
};

// A Python reference path that reached an allocation, and the step of the
// walk that found it.
struct HolderPath {
  std::string path;
  uint64_t step = 0;
  uint64_t walk = 0;  // which walk found it (1, 2, ...: Model::walks_ended)
  // The program lines that store into the container the path names
  // (`file:line`): the line that keeps the memory.
  std::vector<std::string> stored_at;

  // Memory no root reaches that a reference cycle keeps, one gc.collect()
  // could not free (MEMLIFE_HOLDER_CYCLE_ROOT in memlife.h).
  bool in_uncollectable_cycle() const { return path.starts_with(kCycleRoot); }
  static constexpr std::string_view kCycleRoot = MEMLIFE_HOLDER_CYCLE_ROOT ".";
};

struct StepMark {
  uint64_t step = 0;
  When at;
  uint64_t live_bytes = 0;  // all devices, at the mark
  uint64_t peak_bytes = 0;  // all devices, highest since the previous mark
  uint64_t label_string = 0;
};

struct Model {
  format::TraceHeader header;
  int64_t rank = -1, world_size = -1;
  std::string torch_version;

  format::TraceTables tables;  // strings, frames, stacks, modules

  std::unordered_map<uint64_t, Allocation> allocations;          // live, by address
  std::unordered_map<uint64_t, Storage> storages;                // by storage id
  std::unordered_map<uint64_t, uint64_t> storage_at;             // data address -> storage id
  std::unordered_map<uint64_t, Tensor> tensors;                  // by tensor id
  std::unordered_map<uint64_t, Collective> pending_collectives;  // by collective id
  std::map<uint64_t, Segment> segments;                          // live, by address

  std::vector<StepMark> steps;
  uint64_t current_step = 0;
  uint64_t allocation_count = 0;
  // A framework's device allocator (torch's caching allocator) handed out
  // device memory: the process runs a framework whose libraries (cuBLAS,
  // NCCL, cuDNN, the pinned host allocator) also take raw CUDA memory.
  bool device_allocator_seen = false;
  uint64_t live_bytes = 0, peak_bytes = 0, peak_since_step = 0;
  std::unordered_map<int64_t, uint64_t> live_bytes_by_device;
  uint64_t records = 0;
  uint64_t ops_begun = 0;
  // Ops begun and not yet ended on each recording stream, outermost first:
  // (op id, name string).
  std::unordered_map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> open_ops;
  // The call that adopted each inner layer of a collective (c10d -> NCCL).
  std::unordered_map<uint64_t, uint64_t> outer_collective;
  // The Python reference path that reached each allocation (by its
  // allocation sequence number) when the program's holders were walked.
  std::unordered_map<uint64_t, HolderPath> holder_of_alloc;
  // Holder walks ended so far, and the last one that reached everything
  // (0: none; traces before walks marked their end).
  uint64_t walks_ended = 0, last_complete_walk = 0;
  // Where the last complete walk ended: allocations made before it were
  // there to be reached.
  When last_complete_walk_end;
  // Whether a complete walk after the one that found `h` no longer reached
  // its memory. For memory still allocated (what is judged at the end), no
  // Python path holds it now (a frozen TorchScript module's constants, kept
  // by its compilation unit after the program dropped the module; a
  // reference cycle awaiting the collector): the path says what held the
  // memory when it grew, not what holds it at the end.
  bool holder_gone(const HolderPath& h) const { return h.walk < last_complete_walk; }
  // c10d collectives a library issued to wait itself (issued_by_library),
  // or a DDP communication hook issued for the reducer to wait.
  uint64_t collectives_waited_by_libraries = 0;
  // Calls of a DDP communication hook open on each recording stream
  // (MEMLIFE_COMM_HOOK_BEGIN/END marks).
  std::unordered_map<uint64_t, int> open_comm_hooks;
  Census census;  // the census being read; valid while in_census
  bool in_census = false;
  // A census of changes (CensusPhase::kBeginChanges) starts as the previous
  // census's storages and applies what it lists; census_index finds each
  // storage's entry while it is read.
  std::vector<Census::Entry> previous_census_storages;
  std::unordered_map<uint64_t, size_t> census_index;
  bool census_of_changes = false;
  uint64_t last_time_ns = 0;
  uint64_t records_lost = 0;
  // The end record's exit status (0 without one: see ProcessAnalysis).
  uint64_t exit_status = 0;
  bool exit_recorded = false;  // the trace has its end record
  // What a step census cost when the recorder began spacing them
  // (MEMLIFE_CENSUS_SPACED_LABEL); 0: a census at every step.
  uint64_t census_spaced_cost_ns = 0;
  uint64_t ooms = 0;
  // The last process record note about the torch plugin ("torch plugin
  // loaded", "torch plugin not loaded: ..."); empty when none was written.
  std::string plugin_note;
  bool python_hooks = false;  // a "python hooks installed" note was read
  // The `memlife.record()` block judged (AnalysisOptions::block; 0: none):
  // its begin mark, and whether its end mark was read (replay stops there).
  uint64_t block = 0;
  When block_begin;
  bool block_begun = false, block_ended = false;
  uint64_t blocks_begun = 0;  // begin marks of any block read

  std::string_view str(uint64_t id) const { return tables.str(id); }
  const Tensor* tensor(uint64_t id) const {
    auto it = tensors.find(id);
    return it == tensors.end() ? nullptr : &it->second;
  }
  // The live segment holding `address`, or null.
  Segment* segment_at(uint64_t address) {
    auto it = segments.upper_bound(address);
    if (it == segments.begin()) return nullptr;
    --it;
    return address < it->first + it->second.bytes ? &it->second : nullptr;
  }
  const Storage* storage(uint64_t id) const {
    auto it = storages.find(id);
    return it == storages.end() ? nullptr : &it->second;
  }
  // The storage a tensor refers to now, 0 when unknown.
  uint64_t storage_of(uint64_t tensor_id) const {
    const Tensor* t = tensor(tensor_id);
    return t ? t->storage_id : 0;
  }
  When now(const format::RecordHeader& h) const { return When{h.seq, h.time_ns, current_step}; }
  // Whether op `op_id` has begun and not ended, on any stream.
  bool op_open(uint64_t op_id) const {
    for (const auto& [stream, open] : open_ops)
      for (const auto& op : open)
        if (op.first == op_id) return true;
    return false;
  }
  // The outermost call a collective layer belongs to (itself when none).
  uint64_t root_collective(uint64_t id) const {
    for (auto it = outer_collective.find(id); it != outer_collective.end();
         it = outer_collective.find(id))
      id = it->second;
    return id;
  }
};

}  // namespace memlife::analysis
