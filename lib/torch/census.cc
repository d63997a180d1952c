#include "torch/census.h"

#include <ATen/core/TensorBase.h>
#include <c10/core/StorageImpl.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "memlife/memlife.h"
#include "preload/hash_mix.h"
#include "preload/recorder.h"
#include "torch/deaths.h"
#include "torch/identity.h"
#include "torch/python_refs.h"
#include "torch/python_stack.h"

namespace memlife::torch_plugin {
namespace {

// c10d::get_work_registry_size() where this torch exports it.
uint64_t unwaited_works() {
  using Fn = size_t (*)();
  static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "_ZN4c10d22get_work_registry_sizeEv"));
  return fn != nullptr ? static_cast<uint64_t>(fn()) : format::kUnknownCount;
}

struct Holder {
  const c10::StorageImpl* storage;
  size_t live_index;
  uint64_t storage_id;
};

// What a census listed of one storage, to leave it out of the next census
// when nothing changed (CensusPhase::kBeginChanges).
struct Listed {
  uint64_t data_address, storage_bytes, use_count;
  int64_t device;
  uint64_t holders_hash;
  bool operator==(const Listed&) const = default;
};

uint64_t hash_holders(const std::vector<format::CensusHolder>& holders) {
  uint64_t h = holders.size();
  for (const format::CensusHolder& c : holders)
    h = rec::hash_mix(rec::hash_mix(h, c.tensor_id), c.reachable_bytes);
  return h;
}

// Every this many censuses, a whole one: a reader that skipped a damaged
// chunk is right again from there.
constexpr uint64_t kWholeCensusEvery = 64;

// A step census costs about a microsecond per live tensor: nothing for a
// model's few thousand, but a program that keeps 131,072 small tensors (a
// dataset in a list) spent 177 ms on each, 85 % of its run. When the last
// census took kCostlyCensusNs or more, step censuses are spaced so that
// they take at most 1/kCensusTimeShare of the run; cheaper ones (every
// program of the test corpus) still run at every step.
constexpr uint64_t kCostlyCensusNs = 5'000'000;
constexpr uint64_t kCensusTimeShare = 20;

// The previous census of this process, by storage id; censuses come from
// whichever thread marks a step, asks, or exits.
struct CensusMemory {
  std::mutex lock;
  std::unordered_map<uint64_t, Listed> listed;
  uint64_t censuses = 0;
  // Read without the lock by a step census deciding whether to run.
  std::atomic<uint64_t> last_begin_ns{0}, last_cost_ns{0};
  bool said_spaced = false;
};
// Never destroyed: the exit census runs late.
CensusMemory* g_census_memory = new CensusMemory;

}  // namespace

void reset_census_after_fork() {
  // The child's trace holds no census yet, so its first is whole; and the
  // lock may have been held at fork. The parent's copy is left behind.
  g_census_memory = new CensusMemory;
}

void write_census(CensusReason reason) {
  if (reason == CensusReason::kStep) {
    const CensusMemory& memory = *g_census_memory;
    const uint64_t cost_ns = memory.last_cost_ns.load(std::memory_order_relaxed);
    if (cost_ns >= kCostlyCensusNs &&
        rec::now_ns() - memory.last_begin_ns.load(std::memory_order_relaxed) <
            kCensusTimeShare * cost_ns) {
      return;
    }
  }
  const uint64_t begin_ns = rec::now_ns();
  // The GIL first: locking a tensor that has a Python wrapper touches the
  // wrapper's refcount, and no plugin lock is ever held while waiting for
  // the GIL.
  GilScope gil;
  // Deaths next, under the same GIL hold: the census and the deaths before
  // it then agree on who is alive.
  sweep_deaths(kCensusPasses);
  std::vector<LiveTensor> live;
  {
    rec::ReentryGuard guard;  // proceeds even when nested: census never recurses
    rec::ThreadWriter* w = rec::current_thread_writer();
    if (w == nullptr) return;
    live = lock_live_tensors();
    CensusMemory& memory = *g_census_memory;
    const std::lock_guard<std::mutex> memory_lock(memory.lock);
    const bool whole = memory.censuses++ % kWholeCensusEvery == 0;
    format::CensusRecord begin;
    begin.census_id = rec::next_id();
    begin.phase = whole ? CensusPhase::kBegin : CensusPhase::kBeginChanges;
    begin.reason = reason;
    begin.step = rec::current_step();
    begin.live_tensors = live.size();
    begin.c10d_unwaited_works = unwaited_works();
    rec::emit(*w, begin);

    // set_data and storage resize are invisible to the dispatcher: catch up
    // on them here.
    // Bases that autograd keeps only as a live view's `_base` (`del base`
    // after `v = base[:1]`): not holders of their own, or the owner would
    // look alive and the residual view would go unreported.
    std::vector<const c10::TensorImpl*> bases_of_views;
    for (const LiveTensor& t : live) {
      const at::TensorBase tensor(t.tensor);
      if (!tensor.is_view()) continue;
      const at::TensorBase& base = tensor._base();
      if (base.defined()) bases_of_views.push_back(base.unsafeGetTensorImpl());
    }
    std::sort(bases_of_views.begin(), bases_of_views.end());
    const uint64_t kept_by_views_label =
        bases_of_views.empty() ? 0 : rec::intern_string("memlife.census.base_kept_only_by_views");

    std::vector<Holder> holders;
    holders.reserve(live.size());
    for (size_t i = 0; i < live.size(); ++i) {
      const c10::TensorImpl* impl = live[i].tensor.get();
      if (std::binary_search(bases_of_views.begin(), bases_of_views.end(), impl) && gil.held() &&
          unreachable_from_python(impl->pyobj_slot())) {
        // Flagged for the analyzer: a label mark naming the storage, with
        // the base's tensor id in `address`.
        format::MarkRecord mark;
        mark.kind = MarkKind::kLabel;
        mark.step = rec::current_step();
        mark.label_string = kept_by_views_label;
        mark.storage_id =
            sight_tensor(live[i].tensor, at::TensorBase(live[i].tensor).is_view()).storage_id;
        mark.address = live[i].id;
        rec::emit(*w, mark);
        continue;
      }
      const bool is_view = at::TensorBase(live[i].tensor).is_view();
      const TensorSighting s = sight_tensor(live[i].tensor, is_view);
      if (s.tensor_id == 0) continue;
      if (s.needs_record()) emit_tensor_record(*w, *live[i].tensor, s, is_view, 0, 0, 0, 0);
      holders.push_back({s.storage, i, s.storage_id});
    }
    std::sort(holders.begin(), holders.end(),
              [](const Holder& a, const Holder& b) { return a.storage < b.storage; });
    std::vector<format::CensusHolder> group;
    std::unordered_map<uint64_t, Listed> listed;
    listed.reserve(memory.listed.size() + 16);
    for (size_t i = 0; i < holders.size();) {
      const c10::StorageImpl* storage = holders[i].storage;
      group.clear();
      size_t j = i;
      for (; j < holders.size() && holders[j].storage == storage; ++j) {
        const c10::TensorImpl& impl = *live[holders[j].live_index].tensor;
        group.push_back({live[holders[j].live_index].id, reachable_bytes(impl)});
      }
      const c10::TensorImpl& first = *live[holders[i].live_index].tensor;
      format::CensusStorageRecord r;
      r.census_id = begin.census_id;
      r.storage_id = holders[i].storage_id;
      r.data_address = reinterpret_cast<uint64_t>(storage->data_ptr().get());
      r.storage_bytes = storage->nbytes();
      // The plugin holds strong references to TensorImpls only, never to
      // storages: this count is the program's own.
      r.use_count = static_cast<uint64_t>(first.unsafe_storage().use_count());
      r.device = first.device().is_cpu() ? -1 : static_cast<int64_t>(first.device().index());
      r.holders = format::list_of<format::CensusHolder>(group);
      const Listed now{r.data_address, r.storage_bytes, r.use_count, r.device, hash_holders(group)};
      listed[r.storage_id] = now;
      auto before = memory.listed.find(r.storage_id);
      if (whole || before == memory.listed.end() || !(before->second == now)) rec::emit(*w, r);
      i = j;
    }
    if (!whole) {
      // Listed last time, held by no live tensor now: said with no holders.
      for (const auto& [storage_id, was] : memory.listed) {
        if (listed.count(storage_id) != 0) continue;
        format::CensusStorageRecord gone;
        gone.census_id = begin.census_id;
        gone.storage_id = storage_id;
        gone.data_address = was.data_address;
        gone.storage_bytes = was.storage_bytes;
        gone.device = was.device;
        rec::emit(*w, gone);
      }
    }
    memory.listed.swap(listed);
    format::CensusRecord end = begin;
    end.phase = CensusPhase::kEnd;
    rec::emit(*w, end);
    const uint64_t cost_ns = rec::now_ns() - begin_ns;
    memory.last_begin_ns.store(begin_ns, std::memory_order_relaxed);
    memory.last_cost_ns.store(cost_ns, std::memory_order_relaxed);
    if (cost_ns >= kCostlyCensusNs && !memory.said_spaced) {
      // Said once in the trace: later steps may have no census.
      memory.said_spaced = true;
      format::MarkRecord mark;
      mark.kind = MarkKind::kLabel;
      mark.step = rec::current_step();
      mark.label_string = rec::intern_string(MEMLIFE_CENSUS_SPACED_LABEL);
      mark.address = cost_ns;
      rec::emit(*w, mark);
    }
  }
  // Dropped outside the guard: a tensor that died meanwhile frees its
  // storage here, and that free is recorded.
  live.clear();
}

}  // namespace memlife::torch_plugin
