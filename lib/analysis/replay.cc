#include "analysis/replay.h"

#include <algorithm>
#include <iterator>
#include <tuple>

#include "analysis/attribution.h"
#include "analysis/stacks.h"
#include "memlife/memlife.h"

namespace memlife::analysis {

bool issued_by_library(const Model& m, uint64_t stack_id) {
  const Stack* s = m.tables.stack(stack_id);
  if (s == nullptr) return false;
  if (s->python_frames.empty()) return true;
  for (uint64_t frame_id : s->python_frames) {
    const format::PythonFrame* f = m.tables.frame(frame_id);
    if (f == nullptr) return false;
    const std::string_view file = m.str(f->file_string);
    // torch.distributed's own API (dist.all_reduce and its logging
    // wrapper): who called it decides.
    if (file.ends_with("distributed/distributed_c10d.py") ||
        file.ends_with("distributed/c10d_logger.py"))
      continue;
    return is_library_file(file);
  }
  return false;
}

using format::Record;

// Whether `t` is the buffer a custom op kept for itself when it returned a
// view of it (DeepCompile's ZeRO-3 all-gather keeps its gathered buffer in
// a C++ registry): memlife sees the op only from outside, so the view it
// returned came first and looks like the owner, and the buffer's tensor is
// first seen later, as an input, sharing the storage. Such a tensor, spanning
// the whole storage, is its owner.
bool kept_by_custom_op(const Model& m, const Storage& s, const Tensor& t) {
  if (s.owner_tensor == t.id || s.let_go != LetGo::kNone) return false;
  constexpr uint64_t kUnseenBuffer = kTensorFromInput | kTensorAliases;
  if ((t.flags & kUnseenBuffer) != kUnseenBuffer || (t.flags & kTensorIsView) ||
      !covers_storage(t.geometry, s.bytes))
    return false;
  // The op's output: the storage's owner so far, or the view it returned
  // (autograd may mark an op's output a view, and then nothing owned it).
  const uint64_t shown_by = s.owner_tensor != 0 ? s.owner_tensor
                            : s.tensors.empty() ? 0
                                                : s.tensors.front();
  const Tensor* output = m.tensor(shown_by);
  if (output == nullptr || output->id == t.id || (output->flags & kTensorFromInput)) return false;
  const std::string_view op = m.str(output->op_string);
  return !op.empty() && !op.starts_with("aten::") && op.find("::") != std::string_view::npos;
}

ByteRange reachable_range(const Geometry& g) {
  uint64_t last = 0;  // highest element offset reachable, relative to the start
  for (size_t i = 0; i < g.sizes.size(); ++i) {
    if (g.sizes[i] <= 0) return {};
    const int64_t stride = i < g.strides.size() ? g.strides[i] : 0;
    last += static_cast<uint64_t>(g.sizes[i] - 1) *
            static_cast<uint64_t>(stride < 0 ? -stride : stride);
  }
  const uint64_t begin = g.storage_offset * g.itemsize;
  return {begin, begin + (last + 1) * g.itemsize};
}

bool covers_storage(const Geometry& g, uint64_t storage_bytes) {
  const ByteRange span = reachable_range(g);
  return storage_bytes != 0 && span.begin == 0 && span.end >= storage_bytes;
}

uint64_t addressed_bytes(const Geometry& g) {
  const ByteRange span = reachable_range(g);
  uint64_t numel = 1;
  for (int64_t size : g.sizes) numel *= static_cast<uint64_t>(std::max<int64_t>(size, 0));
  return std::min(span.end - span.begin, numel * g.itemsize);
}

format::ReadStatus replay(format::TraceReader& reader, Model& model,
                          const std::vector<Detector*>& detectors) {
  model.header = reader.header();
  model.rank = model.header.rank;
  model.world_size = model.header.world_size;
  model.torch_version = model.header.torch_version;
  Replayer replayer(model, detectors);
  return reader.read(replayer);
}

bool Replayer::on_record(const Record& r) {
  Model& m = model_;
  ++m.records;
  m.last_time_ns = r.header.time_ns;
  const When at = m.now(r.header);
  switch (r.header.kind) {
    case RecordKind::kProcess:
      if (r.process.rank >= 0) m.rank = r.process.rank;
      if (r.process.world_size >= 0) m.world_size = r.process.world_size;
      if (!r.process.torch_version.empty()) m.torch_version = std::string(r.process.torch_version);
      if (r.process.note.rfind("torch plugin ", 0) == 0)
        m.plugin_note = std::string(r.process.note);
      if (r.process.note == "python hooks installed") m.python_hooks = true;
      break;
    case RecordKind::kModule:
    case RecordKind::kString:
    case RecordKind::kFrame:
    case RecordKind::kStack:
      m.tables.add(r);
      break;
    case RecordKind::kAlloc:
      on_alloc(r.alloc, at, r.header.stream_id);
      break;
    case RecordKind::kFree:
      on_free(r.free.address, at);
      break;
    case RecordKind::kTensor:
      on_tensor(r.tensor, at, r.header.stream_id);
      break;
    case RecordKind::kOpBegin:
      on_op_begin(r.op_begin, at, r.header.stream_id);
      break;
    case RecordKind::kOpEnd: {
      // Pop to the op that ended: a lost op_end must not wedge the stack.
      auto& open = m.open_ops[r.header.stream_id];
      for (size_t i = open.size(); i-- > 0;)
        if (open[i].first == r.op_end.op_id) {
          open.resize(i);
          break;
        }
      if (open.empty()) stackless_in_op_.erase(r.header.stream_id);
      nesting_.op_end(r.header.stream_id, r.op_end.op_id);
      for (Detector* d : detectors_) d->on_op_end(m, r.op_end, r.header.stream_id);
      break;
    }
    case RecordKind::kCollectiveIssue:
      on_collective_issue(r.collective_issue, at, r.header.stream_id);
      break;
    case RecordKind::kCollectiveWait:
      on_collective_wait(r.collective_wait, at);
      break;
    case RecordKind::kMark:
      on_mark(r.mark, at, r.header.stream_id);
      break;
    case RecordKind::kCensus:
      on_census(r.census, at);
      break;
    case RecordKind::kCensusStorage:
      on_census_storage(r.census_storage);
      break;
    case RecordKind::kSegmentAlloc:
    case RecordKind::kSegmentFree:
      on_segment(r.segment, r.header.kind == RecordKind::kSegmentAlloc, at);
      break;
    case RecordKind::kOom:
      ++m.ooms;
      break;
    case RecordKind::kLost:
      m.records_lost += r.lost.records_lost;
      break;
    case RecordKind::kTensorDeath:
      on_tensor_death(r.tensor_death, at);
      break;
    case RecordKind::kEnd:
      m.exit_status = r.end.exit_status;
      m.exit_recorded = true;
      break;
    default:
      break;
  }
  // The judged block ended: what follows is outside it, as after an exit.
  return !m.block_ended;
}

void Replayer::on_alloc(const format::AllocRecord& r, const When& at, uint64_t stream) {
  Model& m = model_;
  uint64_t stack_id = r.stack_id;
  if (stack_id == 0 && !open_backwards_.empty() && in_engine_node(stream))
    stack_id = open_backwards_.front().second;
  // Only inside a recorded op, whose end clears the list: on a thread that
  // runs no Python nothing else would.
  if (stack_id == 0 && r.op_string != 0 && !m.open_ops[stream].empty())
    stackless_in_op_[stream].emplace_back(r.address, r.op_string);
  // A second alloc at a live address means its free was lost: retire the
  // old one first so the byte counts stay right.
  if (m.allocations.count(r.address)) on_free(r.address, at);
  Allocation& a = m.allocations[r.address];
  a = Allocation{r.address, r.bytes, r.device, stack_id, r.op_string, at, 0};
  ++m.allocation_count;
  if (r.device >= 0) m.device_allocator_seen = true;
  m.live_bytes += r.bytes;
  m.live_bytes_by_device[r.device] += r.bytes;
  m.peak_bytes = std::max(m.peak_bytes, m.live_bytes);
  m.peak_since_step = std::max(m.peak_since_step, m.live_bytes);
  if (r.device >= 0 && !m.segments.empty())
    if (Segment* seg = m.segment_at(r.address)) seg->holds_allocations = true;
  for (Detector* d : detectors_) d->on_alloc(m, a);
}

void Replayer::on_free(uint64_t address, const When& at) {
  Model& m = model_;
  auto it = m.allocations.find(address);
  if (it == m.allocations.end()) return;  // allocated before tracing, or freed twice
  const Allocation a = it->second;
  m.allocations.erase(it);
  m.live_bytes -= std::min(m.live_bytes, a.bytes);
  uint64_t& dev = m.live_bytes_by_device[a.device];
  dev -= std::min(dev, a.bytes);

  Storage* storage = nullptr;
  auto s = m.storage_at.find(address);
  if (s != m.storage_at.end()) {
    auto st = m.storages.find(s->second);
    if (st != m.storages.end()) storage = &st->second;
  }
  for (Detector* d : detectors_) d->on_free(m, a, storage, at);
  if (!storage) return;
  m.storage_at.erase(address);
  // The memory is gone; tensors still on this storage (after a
  // storage resize to 0) hold nothing worth tracking any more.
  for (uint64_t tid : storage->tensors) {
    auto t = m.tensors.find(tid);
    if (t != m.tensors.end() && t->second.storage_id == storage->id) m.tensors.erase(t);
  }
  m.storages.erase(storage->id);
}

void Replayer::bind_storage(Storage& s, uint64_t data_address) {
  Model& m = model_;
  if (s.data_live && s.data_address == data_address) return;
  if (s.data_live && m.storage_at.count(s.data_address) && m.storage_at[s.data_address] == s.id)
    m.storage_at.erase(s.data_address);
  s.data_address = data_address;
  s.data_live = false;
  auto a = m.allocations.find(data_address);
  if (a == m.allocations.end()) return;
  a->second.storage_id = s.id;
  s.alloc = a->second;
  s.data_live = true;
  m.storage_at[data_address] = s.id;
}

void Replayer::on_tensor(const format::TensorRecord& r, const When& at, uint64_t stream) {
  Model& m = model_;
  auto [it, fresh] = m.tensors.try_emplace(r.tensor_id);
  Tensor& t = it->second;
  if (fresh) {
    t.id = r.tensor_id;
    t.first_seen = at;
    t.flags = r.flags;
    t.base_tensor_id = r.base_tensor_id;
    t.op_string = r.op_string;
    t.stack_id = r.stack_id;
    t.made_in_op_string = enclosing_custom_op(stream).second;
  } else if (t.storage_id != r.storage_id) {
    auto old = m.storages.find(t.storage_id);
    if (old != m.storages.end() && old->second.owner_tensor == t.id &&
        old->second.let_go == LetGo::kNone) {
      // Rebound behind the dispatcher; the set_data op (if seen) already
      // recorded the exact point.
      old->second.let_go = LetGo::kRebound;
      old->second.let_go_at = t.set_data_at.seq ? t.set_data_at : at;
      old->second.let_go_stack = t.set_data_stack;
      old->second.ops_at_let_go = m.ops_begun;
    }
  }
  t.storage_id = r.storage_id;
  t.data_address = r.data_address;
  t.device = r.device;
  t.geometry.storage_offset = r.storage_offset;
  t.geometry.sizes.assign(r.sizes.begin(), r.sizes.end());
  t.geometry.strides.assign(r.strides.begin(), r.strides.end());
  t.geometry.itemsize = r.itemsize;
  t.last_seen = at;
  if (r.storage_id == 0) return;

  auto [sit, new_storage] = m.storages.try_emplace(r.storage_id);
  Storage& s = sit->second;
  if (new_storage) {
    s.id = r.storage_id;
    s.device = r.device;
  }
  s.bytes = r.storage_bytes;
  if (r.data_address != 0) {
    bind_storage(s, r.data_address);
    // The CUDA caching allocator's tracker runs under the allocator's lock
    // and records no Python stack; the tensor that owns the new storage was
    // recorded with one. Lend it to the allocation.
    auto a = m.allocations.find(r.data_address);
    if (r.stack_id != 0 && a != m.allocations.end() && a->second.stack_id == 0) {
      a->second.stack_id = r.stack_id;
      if (s.alloc.address == r.data_address) s.alloc.stack_id = r.stack_id;
    }
  }
  if (r.stack_id != 0 && r.op_string != 0)
    lend_stack_to_op_allocations(stream, r.op_string, r.stack_id);
  if (s.owner_tensor == 0 && !(r.flags & kTensorAliases) && !(r.flags & kTensorIsView))
    s.owner_tensor = t.id;
  if (std::find(s.tensors.begin(), s.tensors.end(), t.id) == s.tensors.end())
    s.tensors.push_back(t.id);
}

void Replayer::lend_stack_to_op_allocations(uint64_t stream, uint64_t op_string,
                                            uint64_t stack_id) {
  auto pending = stackless_in_op_.find(stream);
  if (pending == stackless_in_op_.end()) return;
  auto& list = pending->second;
  // Only the same op's allocations: an op recorded without begin and end
  // (nested, or silenced) must not lend its stack to another's.
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const std::pair<uint64_t, uint64_t>& entry) {
                              if (entry.second != op_string) return false;
                              auto a = model_.allocations.find(entry.first);
                              if (a != model_.allocations.end() && a->second.stack_id == 0)
                                a->second.stack_id = stack_id;
                              return true;
                            }),
             list.end());
}

void Replayer::on_op_begin(const format::OpBeginRecord& r, const When& at, uint64_t stream) {
  Model& m = model_;
  ++m.ops_begun;
  nesting_.op_begin(stream, r.op_id, at.seq);
  m.open_ops[stream].emplace_back(r.op_id, r.name_string);
  if (r.inputs.size >= 2 && m.str(r.name_string) == kSetDataOp) {
    auto t = m.tensors.find(r.inputs[0]);
    if (t != m.tensors.end()) {
      t->second.set_data_stack = r.stack_id;
      t->second.set_data_at = at;
      auto s = m.storages.find(t->second.storage_id);
      if (s != m.storages.end() && kept_by_custom_op(m, s->second, t->second))
        s->second.owner_tensor = t->second.id;
      if (s != m.storages.end() && s->second.owner_tensor == t->second.id &&
          m.storage_of(r.inputs[1]) != s->second.id) {
        s->second.let_go = LetGo::kRebound;
        s->second.let_go_at = at;
        s->second.let_go_stack = r.stack_id;
        std::tie(s->second.let_go_op_id, s->second.let_go_op_string) = enclosing_custom_op(stream);
        s->second.ops_at_let_go = m.ops_begun;
      }
    }
  }
  for (Detector* d : detectors_) d->on_op_begin(m, r, at, stream);
}

std::pair<uint64_t, uint64_t> Replayer::enclosing_custom_op(uint64_t stream) const {
  auto it = model_.open_ops.find(stream);
  if (it == model_.open_ops.end()) return {0, 0};
  for (const auto& [op_id, name] : it->second) {
    const std::string_view n = model_.str(name);
    if (n.find("::") != std::string_view::npos && !n.starts_with("aten::") &&
        !n.starts_with("autograd::") && !n.starts_with("prims::"))
      return {op_id, name};
  }
  return {0, 0};
}

void Replayer::on_segment(const format::SegmentRecord& r, bool is_alloc, const When& at) {
  Model& m = model_;
  if (!is_alloc) {
    m.segments.erase(r.address);
    return;
  }
  m.segments[r.address] = Segment{r.address, r.bytes, r.stream, r.device, at, false};
}

void Replayer::on_collective_issue(const format::CollectiveIssueRecord& r, const When& at,
                                   uint64_t thread) {
  Model& m = model_;
  // Not async nor functional: it completed before the call returned.
  bool in_flight = r.flags & (kCollectiveAsync | kCollectiveFunctional);
  if (in_flight && !(r.flags & kCollectiveFunctional) && m.str(r.op_string).starts_with("c10d::") &&
      (issued_by_library(m, r.stack_id) || m.open_comm_hooks[thread] > 0)) {
    in_flight = false;
    ++m.collectives_waited_by_libraries;
  }
  Collective c;
  c.id = r.collective_id ? r.collective_id : next_synthetic_collective_++;
  c.thread = thread;
  c.op_string = r.op_string;
  c.group_string = r.group_string;
  c.backend_string = r.backend_string;
  c.inputs.assign(r.inputs.begin(), r.inputs.end());
  c.outputs.assign(r.outputs.begin(), r.outputs.end());
  for (uint64_t t : c.outputs) {
    const uint64_t s = m.storage_of(t);
    if (s &&
        std::find(c.output_storages.begin(), c.output_storages.end(), s) == c.output_storages.end())
      c.output_storages.push_back(s);
  }
  c.bytes = r.bytes;
  c.stack_id = r.stack_id;
  c.flags = r.flags;
  c.issued = at;
  c.layers = nesting_.adopt(thread, c.id, at.seq);
  for (uint64_t layer : c.layers) m.outer_collective[layer] = c.id;
  for (Detector* d : detectors_) d->on_collective_call(m, c, in_flight);
  if (!in_flight) {
    // Its inner layers (the NCCL call of a synchronous broadcast_) were
    // completed with it.
    for (uint64_t layer : c.layers) {
      auto it = m.pending_collectives.find(layer);
      if (it == m.pending_collectives.end()) continue;
      format::CollectiveWaitRecord done;
      done.collective_id = layer;
      done.how = WaitHow::kWorkWait;
      for (Detector* d : detectors_) d->on_collective_wait(m, done, &it->second, at);
      m.pending_collectives.erase(it);
    }
    return;
  }
  auto& slot = m.pending_collectives[c.id];
  slot = std::move(c);
  for (Detector* d : detectors_) d->on_collective_issue(m, slot);
}

void Replayer::on_collective_wait(const format::CollectiveWaitRecord& r, const When& at) {
  Model& m = model_;
  auto match = m.pending_collectives.end();
  if (r.collective_id != 0) match = m.pending_collectives.find(r.collective_id);
  if (match == m.pending_collectives.end()) {
    // No id: the waited tensors must be (views of) the collective's output.
    for (uint64_t t : r.tensors) {
      const uint64_t s = m.storage_of(t);
      for (auto it = m.pending_collectives.begin(); it != m.pending_collectives.end(); ++it) {
        const Collective& c = it->second;
        const bool hit = std::find(c.outputs.begin(), c.outputs.end(), t) != c.outputs.end() ||
                         (s && std::find(c.output_storages.begin(), c.output_storages.end(), s) !=
                                   c.output_storages.end());
        // Prefer the oldest match: waits come in issue order.
        if (hit &&
            (match == m.pending_collectives.end() || c.issued.seq < match->second.issued.seq))
          match = it;
      }
      if (match != m.pending_collectives.end()) break;
    }
  }
  const Collective* matched = match == m.pending_collectives.end() ? nullptr : &match->second;
  for (Detector* d : detectors_) d->on_collective_wait(m, r, matched, at);
  if (matched) m.pending_collectives.erase(match);
}

void Replayer::on_mark(const format::MarkRecord& r, const When& at, uint64_t stream) {
  Model& m = model_;
  if (r.kind == MarkKind::kStep) {
    m.current_step = r.step;
    StepMark mark{r.step, When{at.seq, at.time_ns, r.step}, m.live_bytes, m.peak_since_step,
                  r.label_string};
    m.steps.push_back(mark);
    m.peak_since_step = m.live_bytes;
    for (Detector* d : detectors_) d->on_step(m, mark);
    return;
  }
  if (r.kind == MarkKind::kHolder) {
    if (r.address == 0) {  // a walk ended, complete when it has no label
      ++m.walks_ended;
      if (r.label_string == 0) {
        m.last_complete_walk = m.walks_ended;
        m.last_complete_walk_end = When{at.seq, at.time_ns, m.current_step};
      }
      return;
    }
    // Keyed by the allocation live at that address now, so a later
    // allocation at the same address does not inherit the path; the latest
    // walk wins (closest to the state a finding describes), but keeps the
    // bound an earlier walk saw on the same container.
    auto a = m.allocations.find(r.address);
    if (a != m.allocations.end()) {
      HolderPath next = parse_holder_label(m.str(r.label_string), r.step);
      HolderPath& h = m.holder_of_alloc[a->second.at.seq];
      if (loses_a_loop_bound(h.path, next.path)) next.path = std::move(h.path);
      h = std::move(next);
      h.walk = m.walks_ended + 1;
    }
    return;
  }
  if (r.kind == MarkKind::kLabel) {
    note_comm_hook(m.str(r.label_string), stream);
    note_backward(m.str(r.label_string), stream, r.stack_id);
  }
  if (r.kind == MarkKind::kLabel && m.str(r.label_string) == MEMLIFE_CENSUS_SPACED_LABEL)
    m.census_spaced_cost_ns = r.address;
  if (r.kind == MarkKind::kLabel && m.block != 0) {
    const std::string_view label = m.str(r.label_string);
    if (label.rfind(MEMLIFE_BLOCK_BEGIN_PREFIX, 0) == 0) ++m.blocks_begun;
    if (label == MEMLIFE_BLOCK_BEGIN_PREFIX + std::to_string(m.block)) {
      m.block_begun = true;
      m.block_begin = at;
    } else if (m.block_begun && label == MEMLIFE_BLOCK_END_PREFIX + std::to_string(m.block)) {
      m.block_ended = true;
    }
  }
  for (Detector* d : detectors_) d->on_mark(m, r, at);
}

void Replayer::note_comm_hook(std::string_view label, uint64_t stream) {
  if (label == MEMLIFE_COMM_HOOK_BEGIN) {
    ++model_.open_comm_hooks[stream];
  } else if (label == MEMLIFE_COMM_HOOK_END) {
    int& open = model_.open_comm_hooks[stream];
    if (open > 0) --open;
  }
}

void Replayer::note_backward(std::string_view label, uint64_t stream, uint64_t stack_id) {
  if (label == MEMLIFE_BACKWARD_BEGIN) {
    open_backwards_.emplace_back(stream, stack_id);
  } else if (label == MEMLIFE_BACKWARD_END) {
    for (auto it = open_backwards_.rbegin(); it != open_backwards_.rend(); ++it) {
      if (it->first != stream) continue;
      open_backwards_.erase(std::next(it).base());
      break;
    }
  }
}

bool Replayer::in_engine_node(uint64_t stream) const {
  auto it = model_.open_ops.find(stream);
  if (it == model_.open_ops.end()) return false;
  for (const auto& [op_id, name] : it->second)
    if (model_.str(name).starts_with(kEngineNodePrefix)) return true;
  return false;
}

void Replayer::on_tensor_death(const format::TensorDeathRecord& r, const When& at) {
  Model& m = model_;
  for (uint64_t id : r.tensor_ids) {
    auto t = m.tensors.find(id);
    if (t == m.tensors.end() || t->second.died_at.seq != 0) continue;
    t->second.died_at = at;
    // The owner's death, while views or aliases keep its storage: the
    // let-go residual_view times the storage's retention from.
    auto s = m.storages.find(t->second.storage_id);
    if (s == m.storages.end() || !s->second.data_live || s->second.owner_tensor != id ||
        s->second.let_go != LetGo::kNone)
      continue;
    s->second.let_go = LetGo::kDied;
    s->second.let_go_at = at;
    s->second.ops_at_let_go = m.ops_begun;
  }
}

void Replayer::on_census(const format::CensusRecord& r, const When& at) {
  Model& m = model_;
  if (r.phase != CensusPhase::kEnd) {
    m.census = Census{};
    m.census_of_changes = r.phase == CensusPhase::kBeginChanges;
    m.census_index.clear();
    if (m.census_of_changes) {
      m.census.storages = m.previous_census_storages;
      for (size_t i = 0; i < m.census.storages.size(); ++i)
        m.census_index[m.census.storages[i].storage_id] = i;
    }
    m.census.id = r.census_id;
    m.census.reason = r.reason;
    m.census.step = r.step;
    m.census.live_tensors = r.live_tensors;
    m.census.c10d_unwaited_works = r.c10d_unwaited_works;
    m.census.begin = at;
    m.in_census = true;
    return;
  }
  if (!m.in_census || m.census.id != r.census_id) return;  // an end without its begin
  m.census.end = at;
  if (m.census_of_changes) {
    // Storages the census said no live tensor holds any more.
    std::erase_if(m.census.storages, [](const Census::Entry& e) { return e.holders.empty(); });
  }
  m.previous_census_storages = m.census.storages;
  if (r.c10d_unwaited_works != format::kUnknownCount)
    m.census.c10d_unwaited_works = r.c10d_unwaited_works;
  for (Detector* d : detectors_) d->on_census(m, m.census);
  // Tracked tensors the census did not list are dead: forget them.
  std::vector<uint64_t> alive;
  for (const Census::Entry& e : m.census.storages)
    for (const auto& h : e.holders) alive.push_back(h.tensor_id);
  std::sort(alive.begin(), alive.end());
  for (auto it = m.tensors.begin(); it != m.tensors.end();) {
    if (!std::binary_search(alive.begin(), alive.end(), it->first) &&
        it->second.first_seen.seq < m.census.begin.seq)
      it = m.tensors.erase(it);
    else
      ++it;
  }
  m.in_census = false;
}

void Replayer::on_census_storage(const format::CensusStorageRecord& r) {
  Model& m = model_;
  if (!m.in_census || r.census_id != m.census.id) return;
  Census::Entry e{r.storage_id, r.data_address, r.storage_bytes,
                  r.use_count,  r.device,       {r.holders.begin(), r.holders.end()}};
  if (m.census_of_changes) {
    // Changed: replaces what the previous census listed; listed with no
    // holders: gone (dropped at the census end).
    auto [listed, added] = m.census_index.try_emplace(r.storage_id, m.census.storages.size());
    if (!added) {
      m.census.storages[listed->second] = std::move(e);
      return;
    }
    if (e.holders.empty()) {
      m.census_index.erase(listed);
      return;
    }
  }
  m.census.storages.push_back(std::move(e));
}

}  // namespace memlife::analysis
