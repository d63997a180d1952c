// Identity of TensorImpls and StorageImpls without extending lifetimes:
// tables keyed by address hold c10::weak_intrusive_ptr, which keeps the
// object's address reserved (so a live object at a known address is the
// same object) and the object itself, not what it released when it died;
// dead entries are let go at the next sweep (see weak_table.h).
#pragma once

#include <c10/core/TensorImpl.h>
#include <c10/core/UndefinedTensorImpl.h>

#include <cstdint>
#include <vector>

#include "format/records.h"
#include "preload/recorder.h"
#include "torch/arena.h"

namespace memlife::torch_plugin {

using TensorPtr = c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;

// What a sighting of a tensor found out.
struct TensorSighting {
  uint64_t tensor_id = 0;  // 0: not tracked (no storage, meta, subclass...)
  bool is_new = false;     // first sighting of this TensorImpl
  bool changed = false;    // storage or geometry changed since last recorded
  uint64_t storage_id = 0;
  const c10::StorageImpl* storage = nullptr;
  bool storage_fresh = false;  // first sighting of the storage
  bool aliases = false;        // the storage was known through another tensor
  uint64_t data_address = 0;
  uint64_t storage_bytes = 0;
  bool needs_record() const { return tensor_id != 0 && (is_new || changed); }
};

// Whether memlife can describe the tensor without calling into Python or
// tripping a throwing accessor.
bool trackable(const c10::TensorImpl& impl);

// `is_view` comes from autograd (TensorBase::is_view), which marks a view
// only after the kernel that made it returned: a later sighting that sees
// the flag appear records the tensor again.
TensorSighting sight_tensor(const TensorPtr& tensor, bool is_view);

// The id of a live TensorImpl seen before, or 0.
uint64_t known_tensor_id(const c10::TensorImpl* impl, uint64_t* storage_id);

// Storage id of a live storage whose data starts at `address`, or 0.
uint64_t storage_id_for_address(const void* address);

// Writes the tensor record for a sighting.
void emit_tensor_record(rec::ThreadWriter& w, const c10::TensorImpl& impl, const TensorSighting& s,
                        bool is_view, uint64_t flags, uint64_t base_tensor_id, uint64_t op_string,
                        uint64_t stack_id);

// Bytes of the elements the tensor addresses: the smaller of its strided
// span and its element count (0 when it has none).
uint64_t reachable_bytes(const c10::TensorImpl& impl);

// What a table lock's holder found dead, dealt with after the lock: the
// ids of tracked tensors that died while their storage lives on (views or
// aliases hold it), and the weak references of the dropped entries. Giving
// those back deletes the TensorImpl, and a subclass's deletion frees what
// it owns (a quantized tensor's scales: tensors of any shard, whose Python
// wrappers need the GIL), so never under a table lock.
struct DeadTensors {
  std::vector<uint64_t, arena::Allocator<uint64_t>> ids;
  std::vector<c10::intrusive_ptr_target*, arena::Allocator<c10::intrusive_ptr_target*>> dropped;
  void emit(DeathHow how);  // one tensor_death record per 1024 ids; clears
  void give_back();         // the dropped entries' weak references; clears
};

// Marks every tracked tensor that died since the last sweep; adds those
// whose storage lives on to `dead`. Returns how many tracked views are
// alive (the candidates for sweep_views_bases). Giving a dead subclass's
// weak reference back may let tensors it owned die (a quantized tensor's
// scales): up to `passes` passes over the tables follow such a cascade;
// what is left goes at the next sweep.
size_t sweep_dead_tensors(DeadTensors& dead, int passes);

// Live tracked views, locked. Needs the GIL when Python runs (dropping a
// reference may free a Python object).
std::vector<TensorPtr> lock_live_views();

// The id of a tracked tensor the first time it is found kept only as live
// views' `_base`; 0 when unknown or already reported.
uint64_t first_report_as_only_views_base(const c10::TensorImpl* impl);

// Live tracked tensors, locked; expired entries are dropped on the way.
struct LiveTensor {
  TensorPtr tensor;
  uint64_t id;
};
std::vector<LiveTensor> lock_live_tensors();

void reset_identity_after_fork();

}  // namespace memlife::torch_plugin
