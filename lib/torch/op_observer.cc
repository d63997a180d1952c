#include "torch/op_observer.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#if __has_include(<torch/csrc/distributed/c10d/ProcessGroup.hpp>)
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#define MEMLIFE_HAVE_C10D_PROCESS_GROUP 1
#else
#define MEMLIFE_HAVE_C10D_PROCESS_GROUP 0  // torch built without distributed: groups unnamed
#endif

#include <pthread.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string_view>
#include <vector>

#include "gpu/gpu_hooks.h"
#include "memlife/torch_op_names.h"
#include "preload/recorder.h"
#include "torch/deaths.h"
#include "torch/identity.h"
#include "torch/storage_watch.h"
#include "torch/thread_state.h"

namespace memlife::torch_plugin {
namespace {

// Calls into torch that take one of its process-wide locks: switching
// RecordFunction for this thread (at::enableRecordFunction rebuilds the
// thread's callback cache from a snapshot copied under one mutex) and
// looking up an operator (the dispatcher's operator table). A fork while
// another thread holds such a lock leaves the child's copy locked for good,
// and the child hangs at its first op that takes it. So these calls run
// under a reader lock that a fork takes as its writer
// (hold_torch_calls_for_fork): none is under way at a fork. Writers first,
// so that threads calling without pause cannot hold a fork off.
pthread_rwlock_t g_fork_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

class NoForkDuringScope {
 public:
  NoForkDuringScope() { pthread_rwlock_rdlock(&g_fork_lock); }
  ~NoForkDuringScope() { pthread_rwlock_unlock(&g_fork_lock); }
  NoForkDuringScope(const NoForkDuringScope&) = delete;
  NoForkDuringScope& operator=(const NoForkDuringScope&) = delete;
};

void switch_record_function(bool enabled) {
  const NoForkDuringScope no_fork;
  at::enableRecordFunction(enabled);
}

constexpr std::string_view kOptimizerStepPrefix = "Optimizer.step#";

// Dispatcher ops of c10d that start a collective, and whether each is a
// send or receive between two ranks (not in its group's collective order).
struct CollectiveOp {
  std::string_view name;
  bool point_to_point = false;
};
constexpr CollectiveOp kCollectiveOps[] = {
    {"c10d::allreduce_"},
    {"c10d::allreduce_coalesced_"},
    {"c10d::allgather_"},
    {"c10d::_allgather_base_"},
    {"c10d::allgather_coalesced_"},
    {"c10d::allgather_into_tensor_coalesced_"},
    {"c10d::reduce_scatter_"},
    {"c10d::_reduce_scatter_base_"},
    {"c10d::reduce_scatter_tensor_coalesced_"},
    {"c10d::broadcast_"},
    {"c10d::reduce_"},
    {"c10d::gather_"},
    {"c10d::scatter_"},
    {"c10d::alltoall_"},
    {"c10d::alltoall_base_"},
    {"c10d::barrier"},
    {"c10d::send", true},
    {"c10d::recv_", true},
    {"c10d::recv_any_source_", true},
};

// Collectives issued and not waited yet, by the storage of their outputs.
// Tiny (one entry per output of an unwaited collective); the count lets the
// per-op path skip the lock when nothing is pending.
struct Pending {
  uint64_t storage_id;
  const void* storage;
  uint64_t collective_id;
};
std::mutex g_pending_mutex;
using PendingList = std::vector<Pending, arena::Allocator<Pending>>;
PendingList* g_pending = arena::make<PendingList>();
std::atomic<size_t> g_pending_count{0};

bool any_input_pending(const OpFrame& f) {
  if (g_pending_count.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard<std::mutex> lock(g_pending_mutex);
  for (uint8_t i = 0; i < f.input_count; ++i) {
    for (const Pending& p : *g_pending) {
      if (p.storage == f.inputs[i].storage) return true;
    }
  }
  return false;
}

// The group a collective runs on, as c10d names it ("0" for the default
// group, "1", ... for new_group's): a c10d op passes its ProcessGroup, a
// functional op the group's name. Read as the op begins: the kernel takes
// its inputs (at the op's end they are gone). Ranks order collectives per
// group: two groups' calls interleave differently on each rank (a
// checkpoint thread's group beside the training's, tensor- beside
// data-parallel groups).
uint64_t group_name_of(const c10::IValue& v) {
  if (v.isString()) return rec::intern_string(v.toStringRef());
#if MEMLIFE_HAVE_C10D_PROCESS_GROUP
  // A hook must never throw into the program: another class than c10d's
  // ProcessGroup (a torch with another layout) leaves the group unnamed.
  try {
    if (v.isCustomClass()) {
      if (auto pg = v.toCustomClass<c10d::ProcessGroup>())
        return rec::intern_string(pg->getGroupName());
    }
  } catch (...) {
  }
#endif
  return 0;
}

// Whether an aten op writes the data of its first argument: `Tensor(a!)
// self`, and not one that changes only the tensor's metadata (`squeeze_`,
// `as_strided_`: tagged inplace_view). The schema is copied, so this runs
// once per name and thread.
bool writes_first_input(const at::RecordFunction& fn) {
  const auto schema = fn.operator_schema();
  if (!schema || schema->arguments().empty()) return false;
  const c10::AliasInfo* alias = schema->arguments()[0].alias_info();
  if (alias == nullptr || !alias->isWrite()) return false;
  const NoForkDuringScope no_fork;
  const auto op = c10::Dispatcher::singleton().findOp(schema->operator_name());
  return !op || !op->hasTag(at::Tag::inplace_view);
}

OpName classify(const at::RecordFunction& fn, const char* name) {
  const std::string_view n(name);
  OpName result;
  result.string_id = rec::intern_string(n);
  // Ops nested in an aten op (its decomposition, its kernels' ops) or in
  // an autograd engine node (the backward formula) are that op's own work:
  // with --ops top they are charged to it. Other FUNCTION ranges run the
  // program's code: an autograd.Function's apply (torch.compile's
  // CompiledFunction runs the whole compiled graph inside one) or a custom
  // op (DeepSpeed's dc::*): what runs inside them is recorded.
  const bool engine_node = n.substr(0, kEngineNodePrefix.size()) == kEngineNodePrefix &&
                           n.find("CompiledFunction") == std::string_view::npos;
  result.function =
      fn.scope() == at::RecordScope::FUNCTION && (n.substr(0, 6) == "aten::" || engine_node);
  // Only aten ops: an autograd engine node (DDP's reducer issues its
  // all-reduces from a hook inside AccumulateGrad), a custom op (DeepSpeed's
  // dc::*) or a profiler range may run collectives, which must never be
  // silenced.
  result.may_silence = result.function && n.substr(0, 6) == "aten::";
  // `t.data = x` fires only this op (then the old storage's free).
  result.always_record = n == kSetDataOp;
  result.writes_first_input = result.may_silence && writes_first_input(fn);
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    if (n.substr(0, kOptimizerStepPrefix.size()) == kOptimizerStepPrefix) {
      result.kind = OpKind::kOptimizerStep;
    }
    return result;
  }
  if (n == "_c10d_functional::wait_tensor" || n == "c10d::wait_tensor") {
    result.kind = OpKind::kWaitTensor;
  } else if (n.substr(0, 18) == "_c10d_functional::" ||
             n.substr(0, 27) == "_c10d_functional_autograd::") {
    result.kind = OpKind::kFunctionalCollective;
  } else {
    for (const CollectiveOp& c : kCollectiveOps) {
      if (n != c.name) continue;
      result.kind = OpKind::kCollective;
      result.point_to_point = c.point_to_point;
    }
  }
  if (result.kind == OpKind::kCollective || result.kind == OpKind::kFunctionalCollective) {
    // The schema is copied, so read it once per name and thread.
    if (auto schema = fn.operator_schema()) {
      const auto& args = schema->arguments();
      for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].name() == "asyncOp" || args[i].name() == "async_op")
          result.async_arg = static_cast<int>(i);
        if (args[i].name() == "process_group" || args[i].name() == "group_name")
          result.group_arg = static_cast<int>(i);
      }
    }
  }
  return result;
}

OpName& op_name(ThreadState& ts, const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (OpName* cached = ts.names.find(name)) return *cached;
  ts.names.insert(name, classify(fn, name));
  return *ts.names.find(name);
}

// A top-level op ended with RecordFunction on inside it: learn whether
// switching it off pays. Under callgrind (torch 2.15, CPU) one off/on pair
// costs about 5,000 instructions (torch rebuilds its callback cache each
// time) and a skipped nested op about 2,000: it pays from 3 nested ops.
void learn_nesting(const OpFrame& f) {
  OpName* e = f.name_entry;
  if (e == nullptr || e->string_id != f.name.string_id) return;  // slot reused meanwhile
  if (e->learn_calls >= OpName::kLearnCalls) return;
  e->learn_nested = static_cast<uint16_t>(e->learn_nested + f.nested_calls);
  if (++e->learn_calls == OpName::kLearnCalls) {
    e->silences_nested = e->may_silence && e->learn_nested >= 3 * e->learn_calls;
  }
}

template <typename F>
void for_each_tensor(const c10::IValue& v, const F& f) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.defined()) f(t);
  } else if (v.isList()) {  // tensor lists too, without copying them
    for (const c10::IValue& e : v.toListRef()) {
      if (e.isTensor() || e.isList()) for_each_tensor(e, f);
    }
  }
}

bool wants_stack(const TensorSighting& s, bool is_view) {
  return rec::settings().stacks != rec::StackMode::kNone &&
         (s.storage_fresh || s.aliases || is_view);
}

uint64_t stack_for(rec::ThreadWriter& w, ThreadState& ts, const TensorSighting& s, bool is_view) {
  if (!wants_stack(s, is_view)) return 0;
  // A fresh storage was usually allocated by this very op: same stack.
  if (s.storage_fresh && s.data_address == ts.last_alloc_address && ts.last_alloc_stack != 0) {
    return ts.last_alloc_stack;
  }
  return rec::capture_stack(w, 3);
}

// Sights a tensor and writes its record when new or changed; returns its id.
uint64_t observe(rec::ThreadWriter& w, ThreadState& ts, const at::Tensor& t, bool as_input,
                 const OpFrame* frame, const c10::StorageImpl** storage_out) {
  const bool is_view = t.is_view();
  const TensorSighting s = sight_tensor(t.getIntrusivePtr(), is_view);
  if (storage_out != nullptr) *storage_out = s.storage;
  if (!s.needs_record()) return s.tensor_id;
  const c10::TensorImpl& impl = *t.unsafeGetTensorImpl();
  uint64_t base = 0;
  if (frame != nullptr && !as_input) {
    for (uint8_t i = 0; i < frame->input_count; ++i) {
      const InputRef& in = frame->inputs[i];
      if (in.storage != s.storage || in.impl == &impl) continue;
      // Inputs of unrecorded ops were not sighted: look the id up now.
      base = in.tensor_id != 0
                 ? in.tensor_id
                 : known_tensor_id(static_cast<const c10::TensorImpl*>(in.impl), nullptr);
      if (base != 0 && base != s.tensor_id) break;
      base = 0;
    }
  }
  const uint64_t flags = as_input && s.is_new ? uint64_t{kTensorFromInput} : 0;
  const uint64_t op = frame != nullptr ? frame->name.string_id : 0;
  emit_tensor_record(w, impl, s, is_view, flags, base, op, stack_for(w, ts, s, is_view));
  return s.tensor_id;
}

uint64_t tensor_bytes(const at::Tensor& t) {
  return static_cast<uint64_t>(t.numel()) * t.element_size();
}

bool is_collective_kind(OpKind k) {
  return k == OpKind::kCollective || k == OpKind::kFunctionalCollective;
}

// Whether this top-level op may run with RecordFunction off inside it.
// Python may run inside ops on tensor subclasses or under a dispatch mode
// (AsyncCollectiveTensor waits there): those keep their nested ops. So
// does anyone else's callback (the profiler wants every op).
bool may_silence_nested(const OpFrame& f) {
  if (rec::settings().nested_ops || f.name_entry == nullptr || !f.name_entry->silences_nested)
    return false;
  if (c10::impl::TorchDispatchModeTLS::stack_len() > 0) return false;
  for (uint8_t i = 0; i < f.input_count; ++i) {
    const auto* impl = static_cast<const c10::TensorImpl*>(f.inputs[i].impl);
    if (impl->key_set().has(c10::DispatchKey::Python)) return false;
  }
  if (at::hasThreadLocalCallbacks()) return false;
  return at::getStepCallbacks(at::RecordScope::FUNCTION).callbacks_.size() == 1;
}

void start_op(const at::RecordFunction& fn) {
  if (fn.isAsync()) return;  // async ranges end on other threads
  ensure_death_sweeper();    // a forked child starts its own
  rec::ReentryGuard guard;
  if (!guard.entered()) return;
  rec::ThreadWriter* w = rec::current_thread_writer();
  if (w == nullptr) return;
  ThreadState& ts = thread_state();
  const int depth = ts.depth;
  if (depth >= ThreadState::kMaxDepth) {
    ++ts.depth;
    return;
  }
  OpName& name = op_name(ts, fn);
  const int outer_function_depth = depth > 0 ? ts.frames[depth - 1].function_depth : 0;
  if (outer_function_depth > 0 && name.function && name.kind == OpKind::kPlain &&
      !name.always_record && !rec::settings().nested_ops) {
    // --ops top: a plain op inside another is charged to it. Not pushed,
    // so its end finds no frame.
    ++ts.frames[depth - 1].nested_calls;
    return;
  }
  ts.depth = depth + 1;
  OpFrame& f = ts.frames[depth];
  f.range = &fn;
  f.name = name;
  f.name_entry = &name;
  f.nested_calls = 0;
  f.kind = f.name.kind;
  f.function_depth = outer_function_depth + (f.name.function ? 1 : 0);
  if (is_collective_kind(f.kind)) {
    // One collective_issue per user-level collective: a functional
    // collective runs c10d::allgather_into_tensor_coalesced_ inside itself.
    for (int i = 0; i < depth; ++i) {
      if (is_collective_kind(ts.frames[i].kind)) f.kind = OpKind::kPlain;
    }
  } else if (f.kind == OpKind::kOptimizerStep) {
    // One step per outermost optimizer step: torchtitan's
    // OptimizersContainer is an Optimizer whose step() steps each model
    // part's optimizer, and counting both made 40 steps of 20.
    for (int i = 0; i < depth; ++i) {
      if (ts.frames[i].kind == OpKind::kOptimizerStep) f.kind = OpKind::kPlain;
    }
  }
  f.async = false;
  f.group_string = 0;
  f.saw_untracked = false;
  f.silenced_nested = false;
  f.input_count = 0;
  f.alloc_mark = ts.allocs;
  f.op_id = 0;
  f.collective_inputs.clear();
  if (!fn.needsInputs()) return;
  const auto inputs = fn.inputs();
  // Cheap pass: pointers only, no table lookups.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const c10::IValue& v = inputs[i];
    if (static_cast<int>(i) == f.name.async_arg && v.isBool()) f.async = v.toBool();
    if (static_cast<int>(i) == f.name.group_arg) f.group_string = group_name_of(v);
    for_each_tensor(v, [&](const at::Tensor& t) {
      if (f.input_count == OpFrame::kMaxInputs) return;
      const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
      const void* storage =
          impl->has_storage() ? impl->unsafe_storage().unsafeGetStorageImpl() : nullptr;
      f.inputs[f.input_count++] = {impl, storage, 0};
    });
  }
  // The hand-update probe's parameters, updated through `.data` or on a GPU.
  if (f.name.writes_first_input && watching_storages() && !inputs.empty()) {
    for_each_tensor(inputs[0], [](const at::Tensor& t) {
      const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
      if (impl->has_storage()) note_inplace_write(impl->unsafe_storage().unsafeGetStorageImpl());
    });
  }
  if (outer_function_depth == 0 && may_silence_nested(f)) {
    // Restored when this op ends (its RecordFunction still ends: end
    // callbacks do not look at the flag), even when it throws.
    switch_record_function(false);
    f.silenced_nested = true;
  }
  const bool reads_pending = f.kind == OpKind::kPlain && any_input_pending(f);
  const bool recorded = outer_function_depth == 0 || f.kind != OpKind::kPlain ||
                        f.name.always_record || reads_pending;
  if (!recorded) return;
  f.op_id = rec::next_id();
  auto& ids = ts.scratch_inputs;
  ids.clear();
  uint8_t index = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for_each_tensor(inputs[i], [&](const at::Tensor& t) {
      const uint64_t id = observe(*w, ts, t, true, nullptr, nullptr);
      if (index < f.input_count && f.inputs[index].impl == t.unsafeGetTensorImpl()) {
        f.inputs[index].tensor_id = id;
      }
      ++index;
      if (id == 0) {
        f.saw_untracked = true;
        return;
      }
      ids.push_back(id);
    });
  }
  if (f.kind != OpKind::kPlain) f.collective_inputs = ids;
  // `t.data = x` is where an owner lets go of its storage, and a read of a
  // collective's output before its wait is a bug: the analyzer names those
  // lines. Both are rare, so their stacks are worth taking.
  const uint64_t stack_id = f.name.always_record || reads_pending ? rec::capture_stack(*w, 2) : 0;
  rec::emit(*w, format::OpBeginRecord{f.op_id, f.name.string_id, stack_id,
                                      format::list_of<uint64_t>(ids)});
}

// Outputs of an op memlife does not record: only those that alias an input
// (views, including nested ones) or own a storage this op allocated.
void end_unrecorded_op(rec::ThreadWriter& w, ThreadState& ts, const at::RecordFunction& fn,
                       const OpFrame& f) {
  if (!fn.needsOutputs()) return;
  const bool allocated = ts.allocs != f.alloc_mark;
  for (const c10::IValue& v : fn.outputs()) {
    for_each_tensor(v, [&](const at::Tensor& t) {
      const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
      if (!impl->has_storage()) return;
      const c10::StorageImpl* storage = impl->unsafe_storage().unsafeGetStorageImpl();
      bool aliases = false;
      for (uint8_t i = 0; i < f.input_count; ++i) {
        if (f.inputs[i].impl == impl) return;  // in-place or returned as is
        aliases |= f.inputs[i].storage == storage;
      }
      if (!aliases) {
        if (!allocated || storage == nullptr) return;
        const auto address = reinterpret_cast<uint64_t>(storage->data_ptr().get());
        if (!ts.allocated_since(f.alloc_mark, address)) return;
      }
      observe(w, ts, t, false, &f, nullptr);
    });
  }
}

void issue_collective(rec::ThreadWriter& w, const OpFrame& f,
                      const std::vector<uint64_t, arena::Allocator<uint64_t>>& outputs,
                      uint64_t bytes, std::vector<Pending>& output_storages) {
  format::CollectiveIssueRecord r;
  r.collective_id = rec::next_id();
  r.op_string = f.name.string_id;
  r.group_string = f.group_string;
  r.inputs = format::list_of<uint64_t>(f.collective_inputs);
  r.outputs = format::list_of<uint64_t>(outputs);
  r.bytes = bytes;
  r.stack_id = rec::capture_stack(w, 3);
  if (f.name.kind == OpKind::kFunctionalCollective) r.flags |= kCollectiveFunctional;
  if (f.name.point_to_point) r.flags |= kCollectivePointToPoint;
  if (f.async || f.name.kind == OpKind::kFunctionalCollective) r.flags |= kCollectiveAsync;
  rec::emit(w, r);
  std::lock_guard<std::mutex> lock(g_pending_mutex);
  for (Pending& p : output_storages) {
    if (p.storage_id == 0) continue;
    p.collective_id = r.collective_id;
    bool replaced = false;
    for (Pending& q : *g_pending) {
      if (q.storage_id == p.storage_id) {
        q = p;
        replaced = true;
      }
    }
    if (!replaced) g_pending->push_back(p);
  }
  g_pending_count.store(g_pending->size(), std::memory_order_relaxed);
}

uint64_t take_pending(uint64_t storage_id) {
  std::lock_guard<std::mutex> lock(g_pending_mutex);
  for (size_t i = 0; i < g_pending->size(); ++i) {
    if ((*g_pending)[i].storage_id != storage_id) continue;
    const uint64_t id = (*g_pending)[i].collective_id;
    (*g_pending)[i] = g_pending->back();
    g_pending->pop_back();
    g_pending_count.store(g_pending->size(), std::memory_order_relaxed);
    return id;
  }
  return 0;
}

void end_op(const at::RecordFunction& fn) {
  if (fn.isAsync()) return;
  rec::ReentryGuard guard;
  if (!guard.entered()) return;
  rec::ThreadWriter* w = rec::current_thread_writer();
  if (w == nullptr) return;
  ThreadState& ts = thread_state();
  if (ts.depth == 0) return;
  if (ts.depth > ThreadState::kMaxDepth) {
    --ts.depth;
    return;
  }
  // Ends come in LIFO order; a range whose start we did not see is skipped.
  int index = ts.depth - 1;
  while (index >= 0 && ts.frames[index].range != &fn) --index;
  if (index < 0) return;
  ts.depth = index + 1;
  OpFrame& f = ts.frames[index];
  if (f.silenced_nested) {
    switch_record_function(true);
    f.silenced_nested = false;
  } else if (f.function_depth == 1 && f.name.function) {
    learn_nesting(f);
  }
  if (f.op_id == 0) {
    end_unrecorded_op(*w, ts, fn, f);
    ts.depth = index;
    return;
  }
  auto& ids = ts.scratch_outputs;
  ids.clear();
  const bool is_collective = is_collective_kind(f.kind);
  uint64_t collective_bytes = 0;
  std::vector<Pending> output_storages;
  std::vector<uint64_t> waited_collectives;
  if (fn.needsOutputs()) {
    for (const c10::IValue& v : fn.outputs()) {
      for_each_tensor(v, [&](const at::Tensor& t) {
        const c10::StorageImpl* storage = nullptr;
        const uint64_t id = observe(*w, ts, t, false, &f, &storage);
        if (id == 0) {
          f.saw_untracked = true;
          return;
        }
        ids.push_back(id);
        if (!is_collective && f.kind != OpKind::kWaitTensor) return;
        uint64_t storage_id = 0;
        known_tensor_id(t.unsafeGetTensorImpl(), &storage_id);
        if (is_collective) {
          collective_bytes += tensor_bytes(t);
          output_storages.push_back({storage_id, storage, 0});
        } else if (storage_id != 0) {
          waited_collectives.push_back(take_pending(storage_id));
        }
      });
    }
  }
  // A collective or wait on tensors memlife does not describe (FakeTensors
  // while torch.compile traces) is not a real one.
  const bool untracked_only = f.saw_untracked && ids.empty() && f.collective_inputs.empty();
  if (is_collective && !untracked_only) {
    issue_collective(*w, f, ids, collective_bytes, output_storages);
  } else if (f.kind == OpKind::kWaitTensor && !untracked_only) {
    format::CollectiveWaitRecord r;
    r.collective_id = waited_collectives.empty() ? 0 : waited_collectives.front();
    r.op_string = f.name.string_id;
    r.tensors = format::list_of<uint64_t>(ids);
    r.stack_id = rec::capture_stack(*w, 3);
    r.how = WaitHow::kWaitTensor;
    rec::emit(*w, r);
  }
  rec::emit(*w, format::OpEndRecord{f.op_id, format::list_of<uint64_t>(ids)});
  const OpKind kind = f.kind;
  ts.depth = index;
  if (kind == OpKind::kOptimizerStep && rec::settings().steps_from_optimizer) {
    rec::optimizer_stepped(fn.name());
  }
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  // An exception out of a callback is a disaster on some torch releases:
  // nothing leaves this function.
  try {
    start_op(fn);
  } catch (...) {
  }
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  try {
    end_op(fn);
    // CUDA's allocator exists only after lazy init, which happens inside
    // an op: try after each one (one atomic load once attached).
    memlife_torch_cuda_attach_if_ready(&current_op_name);
  } catch (...) {
  }
}

std::unique_ptr<at::ObserverContext> on_start_empty(const at::RecordFunction&) { return nullptr; }
void on_end_empty(const at::RecordFunction&, at::ObserverContext*) {}

void add_callback(at::RecordFunctionCallback::StartCallback start,
                  at::RecordFunctionCallback::EndCallback end) {
  at::addGlobalCallback(at::RecordFunctionCallback(start, end)
                            .needsInputs(true)
                            .needsOutputs(true)
                            .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
}

}  // namespace

void install_op_observer() { add_callback(&on_start, &on_end); }
void install_floor_observer() { add_callback(&on_start_empty, &on_end_empty); }

void record_work_wait(const uintptr_t* tensor_impls, size_t count) {
  // Only through memlife_work_wait, which holds the re-entry guard already.
  rec::ThreadWriter* w = rec::current_thread_writer();
  if (w == nullptr) return;
  std::vector<uint64_t> ids;
  uint64_t collective = 0;
  for (size_t i = 0; i < count; ++i) {
    uint64_t storage_id = 0;
    const uint64_t id =
        known_tensor_id(reinterpret_cast<const c10::TensorImpl*>(tensor_impls[i]), &storage_id);
    if (id == 0) continue;
    ids.push_back(id);
    if (storage_id != 0) {
      const uint64_t c = take_pending(storage_id);
      if (collective == 0) collective = c;
    }
  }
  format::CollectiveWaitRecord r;
  r.collective_id = collective;
  r.op_string = rec::intern_string("Work.wait");
  r.tensors = format::list_of<uint64_t>(ids);
  r.stack_id = rec::capture_stack(*w, 2);
  r.how = WaitHow::kWorkWait;
  rec::emit(*w, r);
}

void hold_torch_calls_for_fork() { pthread_rwlock_wrlock(&g_fork_lock); }

void release_torch_calls_after_fork() { pthread_rwlock_unlock(&g_fork_lock); }

void reset_op_observer_after_fork() {
  // The forking thread held the fork lock as its writer.
  pthread_rwlock_t fresh = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
  g_fork_lock = fresh;
  // Leaked on purpose, like the identity tables.
  new (&g_pending_mutex) std::mutex();
  g_pending = arena::make<PendingList>();
  g_pending_count.store(0, std::memory_order_relaxed);
}

}  // namespace memlife::torch_plugin
