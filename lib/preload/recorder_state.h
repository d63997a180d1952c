// Internal state of the recorder shared by its translation units (not part
// of the interface hooks use; that is recorder.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "preload/recorder.h"
#include "preload/thread_buffer.h"

namespace memlife::rec {

enum class Phase : int {
  kInert = 0,    // not under `memlife run`, or disabled after an error
  kArmed = 1,    // under `memlife run`; the trace file opens on first use
  kRunning = 2,  // trace file open, writer thread running
  kClosed = 3,   // process exit: nothing more is recorded
};

std::atomic<int>& phase();

// Thread-local flag read by ReentryGuard; the writer thread keeps it set.
bool& in_recorder();

// The trace file being written; empty before it is opened.
const char* trace_path();

// Module records for every loaded object not reported yet.
void emit_new_modules(ThreadWriter& w);

// The torch plugin the preload loaded (MEMLIFE_TORCH_PLUGIN's, or the one
// built for the running torch in MEMLIFE_PLUGIN_CACHE); empty before and
// when none was. Its CUDA allocator tracker sits next to it.
const char* loaded_torch_plugin();

// Loads the torch plugin once libtorch is in the process (the dlopen hook
// calls it; memlife_attach does for a torch loaded before the recorder).
void load_torch_plugin();

// Called by the preload layer.
void init_from_environment();
void shutdown(uint64_t exit_status, bool from_signal);
void after_fork_child();
// Writes what is buffered from a fatal signal handler: no allocation, no
// block recycling, no end record (the trace stays marked truncated).
void flush_from_fatal_signal();
// exec is about to replace the process image: writes every buffered record
// (no end record: if the exec fails the process goes on recording into the
// same trace). Nothing in a vfork child sharing our memory.
void flush_before_exec();
void before_fork();
void after_fork_parent();

// Fork: each module that owns a lock takes it before fork and releases it
// in both processes after; the child also drops what it inherited.
void lock_strings_for_fork();
void unlock_strings_after_fork();
void reset_string_table_after_fork();
void lock_pool_for_fork();
void unlock_pool_after_fork();
void lock_modules_for_fork();
void unlock_modules_after_fork();
void reset_modules_after_fork();

}  // namespace memlife::rec
