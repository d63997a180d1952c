// The recorder core, inside libmemlife_preload.so: per-thread record
// buffers, the background writer thread, process-wide ids and interning.
// Hooks (the torch plugin, NCCL and CUPTI interposers, the C API) call only
// this interface. It has no libtorch dependency.
//
// Hot-path rules this interface keeps:
//  - emit() appends to the calling thread's own buffer with no lock and no
//    malloc; a block switch (every kBlockBytes) takes the slow path.
//  - Every hook enters through ReentryGuard: a hook that runs inside
//    memlife's own code (or inside another hook on the same thread) records
//    nothing instead of recursing.
//  - Nothing is formatted or symbolized here: stacks are raw addresses and
//    interned ids; the analyzer resolves them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "format/encoder.h"

namespace memlife::rec {

enum class StackMode : uint8_t { kNone = 0, kPython = 1, kNative = 2, kAll = 3 };

struct Settings {
  StackMode stacks = StackMode::kPython;
  uint32_t max_depth = 32;
  bool steps_from_optimizer = true;  // --steps auto; false for --steps marks
  bool census_at_steps = true;
  // --ops top: torch skips RecordFunction (and its boxing) inside a
  // top-level op; --ops all observes nested ops too (MEMLIFE_OPS).
  bool nested_ops = false;
};

// Settings parsed from the environment `memlife run` sets (MEMLIFE_*).
const Settings& settings();

// The value of a recorder option (include/memlife/recorder_options.h) from
// its variable: the default when unset, or (with a one-line warning) when
// not valid. `name` must be in the table.
const char* option_value(std::string_view name);
inline bool option_on(std::string_view name) { return option_value(name)[0] == '1'; }

// True once recording started in this process (a trace file is open).
bool active();

// Starts recording if it has not started: opens the trace file and starts
// the writer thread. Hooks call it when they first have something to
// record, so processes that never touch torch, CUDA or NCCL leave no trace.
// Returns false when recording is disabled or the file cannot be created.
bool ensure_started();

// Monotonic nanoseconds (CLOCK_MONOTONIC).
uint64_t now_ns();

// Process-wide unique ids (tensors, storages, ops, collectives, censuses).
// Never 0.
uint64_t next_id();

// Per-thread recording state. Null when recording is off.
class ThreadWriter;
ThreadWriter* current_thread_writer();

// Reserves `max_bytes` in the calling thread's buffer, encodes one record
// with a fresh global sequence number, and commits it. Callers pass the
// record's bound_bytes().
uint8_t* reserve(ThreadWriter& w, size_t max_bytes);
void commit(ThreadWriter& w, uint8_t* end);
format::StreamState& stream_state(ThreadWriter& w);
uint64_t next_seq();

template <typename R>
inline void emit(ThreadWriter& w, const R& record) {
  uint8_t* out = reserve(w, format::bound_bytes(record));
  commit(w, format::encode_record(out, stream_state(w), next_seq(), now_ns(), record));
}
// Emits on the current thread; a no-op when recording is off.
template <typename R>
inline void emit(const R& record) {
  if (ThreadWriter* w = current_thread_writer()) emit(*w, record);
}
void emit_segment(bool is_alloc, const format::SegmentRecord& record);

// Interns a string process-wide; the string record is written (on the
// calling thread) before any record can use the id. Thread-safe; takes a
// lock only on the first sight of a given string on this thread.
uint64_t intern_string(std::string_view s);

// Interns a stack on the calling thread; emits the stack record on first
// sight. Returns 0 for an empty stack.
uint64_t intern_stack(ThreadWriter& w, const uint64_t* python_frames, size_t python_count,
                      const uint64_t* native_addresses, size_t native_count);

// Captures up to `max` native return addresses of the caller, skipping
// `skip` innermost frames. No allocation, no symbolization.
size_t capture_native_stack(uint64_t* out, size_t max, int skip);

// RAII re-entry guard. entered() is false when the thread is already inside
// a memlife hook; the caller must then record nothing.
class ReentryGuard {
 public:
  ReentryGuard();
  ~ReentryGuard();
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

// Extension points the torch plugin registers when it loads.
struct PluginHooks {
  // Writes a census of live tensors and storages; called from the thread
  // that asked (a step mark, the C API, process exit).
  void (*census)(CensusReason reason) = nullptr;
  // Resolves a storage's identity from the data address of one of its
  // tensors, for memlife_expect_freed; 0 when unknown.
  uint64_t (*storage_id_for_address)(const void* address) = nullptr;
  // Captures the calling thread's Python stack as interned frame ids
  // (innermost first); returns the count.
  size_t (*python_stack)(uint64_t* frame_ids, size_t max) = nullptr;
  // Fork: before_fork runs first, before the recorder takes its own locks
  // (the plugin's lock may wait for a thread that records meanwhile), and
  // after_fork_parent last. after_fork_child runs in a forked child before
  // it records anything: drop every per-process table inherited from the
  // parent, and every lock before_fork took.
  void (*before_fork)() = nullptr;
  void (*after_fork_parent)() = nullptr;
  void (*after_fork_child)() = nullptr;
  // memlife_work_wait: Work.wait() seen from Python (the C++ Work::wait
  // fires no RecordFunction), with the TensorImpl addresses of the work's
  // tensors.
  void (*work_wait)(const uintptr_t* tensor_impls, size_t count) = nullptr;
  // memlife_watch_storages and memlife_watched_storage_written: writes by
  // in-place ops to the hand-update probe's parameters.
  int (*watch_storages)(const uintptr_t* storages, size_t count) = nullptr;
  int (*watched_storage_written)() = nullptr;
};
void register_plugin(const PluginHooks& hooks);
const PluginHooks& plugin();

// Captures the calling thread's stack per settings() and interns it.
// Python frames come from the plugin when it is loaded.
uint64_t capture_stack(ThreadWriter& w, int native_skip);

// Current step number (incremented by each step mark).
uint64_t current_step();
// Where a step mark comes from, weakest first. With --steps auto, the ends
// of backward passes mark steps until the first optimizer step (a program
// that updates its parameters by hand has no other), optimizer steps until
// the program marks its own (memlife.mark_step): from then on only the
// strongest source seen counts, so a loop that gives several signals counts
// one step per iteration.
enum class StepSource : uint8_t { kBackward, kOptimizer, kProgram };
// Marks a step boundary: writes the mark and, when the plugin is loaded and
// settings allow, a census. Returns whether it marked one: a step from a
// weaker source than one already seen is ignored, and so is the first step
// from a stronger source right after a weaker one's (that step closed this
// iteration).
bool mark_step(std::string_view label, StepSource source);
// Whether a stronger source than `source` has marked a step: from then on
// `source` never will.
bool step_source_outranked(StepSource source);
// An optimizer's step (StepSource::kOptimizer): marked now, or, while a
// backward pass runs, once when the outermost one ends however many
// optimizers stepped inside it (an optimizer per parameter stepped from its
// grad hook, on the autograd engine's thread on CUDA).
void optimizer_stepped(std::string_view label);
// The backward passes Python threads run (the MEMLIFE_BACKWARD_BEGIN and
// MEMLIFE_BACKWARD_END marks of memlife's wrapper).
void backward_pass_began();
void backward_pass_ended();
// Forgets which sources marked steps: a memlife.record() block starts, and
// its code (a loop updating its parameters by hand) may mark steps as a
// program of its own would.
void restart_step_sources();

// Records the rank once a process group tells it (rank -1 keeps the old).
void set_process_identity(int64_t rank, int64_t local_rank, int64_t world_size,
                          std::string_view torch_version, std::string_view note);

// Writes all buffered records of all threads to the file now.
void flush();

}  // namespace memlife::rec
