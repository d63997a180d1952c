// Per-thread plugin state: the stack of open ops (allocations are charged
// to the innermost one) and small caches that keep the per-op path to a
// few lookups. No torch headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch/arena.h"

namespace memlife::torch_plugin {

enum class OpKind : uint8_t {
  kPlain,
  kCollective,            // c10d::allreduce_ and friends (return a Work)
  kFunctionalCollective,  // _c10d_functional::* (need wait_tensor)
  kWaitTensor,            // _c10d_functional::wait_tensor
  kOptimizerStep,         // USER_SCOPE "Optimizer.step#..."
};

struct OpName {
  uint64_t string_id = 0;
  OpKind kind = OpKind::kPlain;
  int async_arg = -1;           // index of the bool input async_op (older: asyncOp)
  int group_arg = -1;           // index of the group input (ProcessGroup or group_name)
  bool point_to_point = false;  // a send or receive, not a collective of its group
  bool function = false;        // RecordScope::FUNCTION (a dispatcher op)
  // Always worth an op_begin/op_end even when nested: set_data's only trace.
  bool always_record = false;
  // Writes the data of its first argument (an in-place op: `add_`,
  // `copy_`, `index_add_`): see storage_watch.h.
  bool writes_first_input = false;
  // Under --ops top, torch may skip RecordFunction inside this op when it
  // is called from Python (never for profiler ranges: Optimizer.step#
  // lives inside one). Switching it off and on costs about as much as a
  // couple of nested ops, so it is done only for ops seen running several
  // nested ops in their first kLearnCalls calls.
  static constexpr uint8_t kLearnCalls = 4;
  bool may_silence = false;
  bool silences_nested = false;
  uint8_t learn_calls = 0;
  uint16_t learn_nested = 0;
};

struct InputRef {
  const void* impl = nullptr;     // TensorImpl
  const void* storage = nullptr;  // StorageImpl, null when none
  uint64_t tensor_id = 0;         // 0 until sighted
};

struct OpFrame {
  static constexpr int kMaxInputs = 8;
  const void* range = nullptr;  // the RecordFunction: unique while it runs
  uint64_t op_id = 0;           // 0: not recorded (no op_begin/op_end)
  OpName name;
  OpKind kind = OpKind::kPlain;  // name.kind, or plain for a collective nested in another
  bool async = false;
  uint64_t group_string = 0;     // a collective's group name, read as it begins
  bool saw_untracked = false;    // a tensor memlife does not describe (Fake, meta)
  bool silenced_nested = false;  // RecordFunction is off on this thread until it ends
  uint16_t nested_calls = 0;     // nested ops started directly inside (not recorded)
  OpName* name_entry = nullptr;  // this thread's cache entry, for learning
  uint8_t input_count = 0;
  int function_depth = 0;   // open FUNCTION-scope frames including this one
  uint64_t alloc_mark = 0;  // ThreadState::allocs when the op began
  InputRef inputs[kMaxInputs];
  // Input tensor ids of collectives (kept whole, not capped).
  std::vector<uint64_t, arena::Allocator<uint64_t>> collective_inputs;
};

// Op names by the pointer torch hands out, checked against a copy of the
// text because names of string-built ranges live in the range itself.
class OpNameCache {
 public:
  OpName* find(const char* name);
  void insert(const char* name, const OpName& value);
  void clear();

 private:
  static constexpr size_t kSlots = 1024;
  struct Slot {
    const char* pointer = nullptr;
    std::basic_string<char, std::char_traits<char>, arena::Allocator<char>> text;
    OpName value;
  };
  static size_t slot_of(const char* p) { return (reinterpret_cast<uintptr_t>(p) >> 3) % kSlots; }
  std::vector<Slot, arena::Allocator<Slot>> slots_ =
      std::vector<Slot, arena::Allocator<Slot>>(kSlots);
};

struct ThreadState {
  static constexpr int kMaxDepth = 64;
  OpFrame frames[kMaxDepth];
  int depth = 0;  // may exceed kMaxDepth: deeper frames are counted only
  uint64_t last_alloc_address = 0;
  uint64_t last_alloc_stack = 0;
  // Data addresses of this thread's latest allocations (a ring indexed by
  // allocs): an op's output owns a fresh storage when its data is here.
  static constexpr uint64_t kRecentAllocs = 16;
  uint64_t allocs = 0;
  uint64_t recent_allocs[kRecentAllocs] = {};
  bool allocated_since(uint64_t mark, uint64_t address) const {
    const uint64_t n = allocs - mark;
    for (uint64_t i = 0; i < n && i < kRecentAllocs; ++i) {
      if (recent_allocs[(allocs - 1 - i) % kRecentAllocs] == address) return true;
    }
    return false;
  }
  OpNameCache names;
  std::vector<uint64_t, arena::Allocator<uint64_t>> scratch_inputs, scratch_outputs;
};

ThreadState& thread_state();
// The innermost open op's name string on this thread, 0 when none.
uint64_t current_op_name();
// Called in a forked child: string ids interned by the parent are not in
// the child's trace.
void reset_thread_state_after_fork();

}  // namespace memlife::torch_plugin
