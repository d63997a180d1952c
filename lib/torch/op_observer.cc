#include "torch/op_observer.h"

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/core/StorageImpl.h>

#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "gpu/gpu_hooks.h"
#include "preload/recorder.h"
#include "torch/identity.h"
#include "torch/thread_state.h"

namespace memlife::torch_plugin {
namespace {

constexpr std::string_view kOptimizerStepPrefix = "Optimizer.step#";

// Dispatcher ops of c10d that start a collective.
constexpr std::string_view kCollectiveOps[] = {
    "c10d::allreduce_",
    "c10d::allreduce_coalesced_",
    "c10d::allgather_",
    "c10d::_allgather_base_",
    "c10d::allgather_coalesced_",
    "c10d::allgather_into_tensor_coalesced_",
    "c10d::reduce_scatter_",
    "c10d::_reduce_scatter_base_",
    "c10d::reduce_scatter_tensor_coalesced_",
    "c10d::broadcast_",
    "c10d::reduce_",
    "c10d::gather_",
    "c10d::scatter_",
    "c10d::alltoall_",
    "c10d::alltoall_base_",
    "c10d::barrier",
    "c10d::send",
    "c10d::recv_",
    "c10d::recv_any_source_",
};

// Collectives issued and not waited yet, by the storage of their outputs.
std::mutex g_pending_mutex;
std::unordered_map<uint64_t, uint64_t>* g_pending = new std::unordered_map<uint64_t, uint64_t>();

OpName classify(const at::RecordFunction& fn, const char* name) {
  const std::string_view n(name);
  OpName result;
  result.string_id = rec::intern_string(n);
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
    for (std::string_view c : kCollectiveOps) {
      if (n == c) result.kind = OpKind::kCollective;
    }
  }
  if (result.kind == OpKind::kCollective) {
    // The schema is copied, so read it once per name and thread.
    if (auto schema = fn.operator_schema()) {
      const auto& args = schema->arguments();
      for (size_t i = 0; i < args.size(); ++i) {
        if (args[i].name() == "asyncOp" || args[i].name() == "async_op")
          result.async_arg = static_cast<int>(i);
      }
    }
  }
  return result;
}

const OpName& op_name(ThreadState& ts, const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (const OpName* cached = ts.names.find(name)) return *cached;
  ts.names.insert(name, classify(fn, name));
  return *ts.names.find(name);
}

template <typename F>
void for_each_tensor(const c10::IValue& v, const F& f) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.defined()) f(t);
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList().vec()) {
      if (t.defined()) f(t);
    }
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) {
      if (e.isTensor() || e.isTensorList() || e.isList()) for_each_tensor(e, f);
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
      if (frame->inputs[i].storage == s.storage && frame->inputs[i].tensor_id != s.tensor_id) {
        base = frame->inputs[i].tensor_id;
        break;
      }
    }
  }
  const uint64_t flags = as_input && s.is_new ? kTensorFromInput : 0;
  const uint64_t op = frame != nullptr ? frame->name.string_id : 0;
  emit_tensor_record(w, impl, s, is_view, flags, base, op, stack_for(w, ts, s, is_view));
  return s.tensor_id;
}

uint64_t tensor_bytes(const at::Tensor& t) {
  return static_cast<uint64_t>(t.numel()) * t.element_size();
}

void start_op(const at::RecordFunction& fn) {
  if (fn.isAsync()) return;  // async ranges end on other threads
  rec::ReentryGuard guard;
  if (!guard.entered()) return;
  rec::ThreadWriter* w = rec::current_thread_writer();
  if (w == nullptr) return;
  ThreadState& ts = thread_state();
  const int depth = ts.depth++;
  if (depth >= ThreadState::kMaxDepth) return;
  OpFrame& f = ts.frames[depth];
  f.range = &fn;
  f.op_id = rec::next_id();
  f.name = op_name(ts, fn);
  f.async = false;
  f.input_count = 0;
  f.collective_inputs.clear();
  std::vector<uint64_t>& ids = ts.scratch_inputs;
  ids.clear();
  if (fn.needsInputs()) {
    const auto inputs = fn.inputs();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const c10::IValue& v = inputs[i];
      if (static_cast<int>(i) == f.name.async_arg && v.isBool()) f.async = v.toBool();
      for_each_tensor(v, [&](const at::Tensor& t) {
        const c10::StorageImpl* storage = nullptr;
        const uint64_t id = observe(*w, ts, t, true, nullptr, &storage);
        if (id == 0) return;
        ids.push_back(id);
        if (f.input_count < OpFrame::kMaxInputs) f.inputs[f.input_count++] = {storage, id};
      });
    }
  }
  if (f.name.kind != OpKind::kPlain) f.collective_inputs = ids;
  rec::emit(*w,
            format::OpBeginRecord{f.op_id, f.name.string_id, 0, format::list_of<uint64_t>(ids)});
}

void issue_collective(rec::ThreadWriter& w, const at::RecordFunction& fn, const OpFrame& f,
                      const std::vector<uint64_t>& outputs, uint64_t bytes,
                      const std::vector<uint64_t>& output_storages) {
  format::CollectiveIssueRecord r;
  r.collective_id = rec::next_id();
  r.op_string = f.name.string_id;
  if (fn.needsInputs()) {
    // The functional ops name their group in a string argument.
    for (const c10::IValue& v : fn.inputs()) {
      if (v.isString()) {
        r.group_string = rec::intern_string(v.toStringRef());
        break;
      }
    }
  }
  r.inputs = format::list_of<uint64_t>(f.collective_inputs);
  r.outputs = format::list_of<uint64_t>(outputs);
  r.bytes = bytes;
  r.stack_id = rec::capture_stack(w, 3);
  if (f.name.kind == OpKind::kFunctionalCollective) r.flags |= kCollectiveFunctional;
  if (f.async || f.name.kind == OpKind::kFunctionalCollective) r.flags |= kCollectiveAsync;
  rec::emit(w, r);
  std::lock_guard<std::mutex> lock(g_pending_mutex);
  for (uint64_t storage : output_storages) (*g_pending)[storage] = r.collective_id;
}

uint64_t take_pending(uint64_t storage_id) {
  std::lock_guard<std::mutex> lock(g_pending_mutex);
  auto it = g_pending->find(storage_id);
  if (it == g_pending->end()) return 0;
  const uint64_t id = it->second;
  g_pending->erase(it);
  return id;
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
  std::vector<uint64_t>& ids = ts.scratch_outputs;
  ids.clear();
  const bool is_collective =
      f.name.kind == OpKind::kCollective || f.name.kind == OpKind::kFunctionalCollective;
  uint64_t collective_bytes = 0;
  std::vector<uint64_t> output_storages;
  std::vector<uint64_t> waited_collectives;
  if (fn.needsOutputs()) {
    for (const c10::IValue& v : fn.outputs()) {
      for_each_tensor(v, [&](const at::Tensor& t) {
        const uint64_t id = observe(*w, ts, t, false, &f, nullptr);
        if (id == 0) return;
        ids.push_back(id);
        if (!is_collective && f.name.kind != OpKind::kWaitTensor) return;
        uint64_t storage_id = 0;
        known_tensor_id(t.unsafeGetTensorImpl(), &storage_id);
        if (is_collective) {
          collective_bytes += tensor_bytes(t);
          output_storages.push_back(storage_id);
        } else if (storage_id != 0) {
          waited_collectives.push_back(take_pending(storage_id));
        }
      });
    }
  }
  if (is_collective) {
    issue_collective(*w, fn, f, ids, collective_bytes, output_storages);
  } else if (f.name.kind == OpKind::kWaitTensor) {
    format::CollectiveWaitRecord r;
    r.collective_id = waited_collectives.empty() ? 0 : waited_collectives.front();
    r.op_string = f.name.string_id;
    r.tensors = format::list_of<uint64_t>(ids);
    r.stack_id = rec::capture_stack(*w, 3);
    r.how = WaitHow::kWaitTensor;
    rec::emit(*w, r);
  }
  rec::emit(*w, format::OpEndRecord{f.op_id, format::list_of<uint64_t>(ids)});
  const OpName name = f.name;
  ts.depth = index;
  if (name.kind == OpKind::kOptimizerStep && rec::settings().steps_from_optimizer) {
    rec::mark_step(fn.name(), true);
  }
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  // An exception out of a callback is a disaster on some torch releases:
  // nothing leaves this function.
  try {
    // CUDA's allocator exists only after lazy init, so keep trying (one
    // atomic load once attached).
    memlife_torch_cuda_attach_if_ready(&current_op_name);
    start_op(fn);
  } catch (...) {
  }
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  try {
    end_op(fn);
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
  rec::ReentryGuard guard;
  if (!guard.entered()) return;
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

void reset_op_observer_after_fork() {
  // Leaked on purpose, like the identity tables.
  new (&g_pending_mutex) std::mutex();
  g_pending = new std::unordered_map<uint64_t, uint64_t>();
}

}  // namespace memlife::torch_plugin
