#include "torch/identity.h"

#include <c10/core/StorageImpl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "torch/weak_table.h"

namespace memlife::torch_plugin {
namespace {

struct TensorEntry {
  uint64_t id = 0;
  const c10::StorageImpl* storage = nullptr;
  uint64_t storage_id = 0;
  uint64_t data_address = 0;
  uint64_t storage_bytes = 0;
  uint64_t geometry = 0;
  bool is_view = false;
  bool only_views_base_seen = false;  // reported as kept only by views' `_base`
};

struct StorageEntry {
  uint64_t id = 0;
  uint64_t first_tensor = 0;
  uint64_t data_address = 0;
};

template <typename Entry>
struct Shard {
  std::mutex mutex;
  WeakTable<Entry>& table = *arena::make<WeakTable<Entry>>();
};

constexpr size_t kShards = 64;
struct Tables {
  std::array<Shard<TensorEntry>, kShards> tensors;
  std::array<Shard<StorageEntry>, kShards> storages;
};
Tables* g_tables = arena::make<Tables>();

size_t shard_of(const void* p) {
  return static_cast<size_t>((reinterpret_cast<uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull >> 58);
}

c10::intrusive_ptr_target* target_of(const c10::TensorImpl* p) {
  return const_cast<c10::TensorImpl*>(p);
}
c10::intrusive_ptr_target* target_of(const c10::StorageImpl* p) {
  return const_cast<c10::StorageImpl*>(p);
}

uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001B3ull + 0x9E37; }

uint64_t geometry_of(const c10::TensorImpl& impl) {
  uint64_t h = mix(0xcbf29ce484222325ull, static_cast<uint64_t>(impl.storage_offset()));
  const auto sizes = impl.sizes();
  const auto strides = impl.strides();
  h = mix(h, sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    h = mix(h, static_cast<uint64_t>(sizes[i]));
    h = mix(h, static_cast<uint64_t>(strides[i]));
  }
  return mix(h, impl.dtype().itemsize());
}

// Storage id for a sighting; also says whether it is fresh or aliased.
void sight_storage(const c10::StorageImpl* impl, uint64_t tensor_id, TensorSighting& s) {
  Shard<StorageEntry>& shard = g_tables->storages[shard_of(impl)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  bool fresh = false;
  StorageEntry& e = shard.table.upsert(target_of(impl), fresh);
  if (fresh) {
    e.id = rec::next_id();
    e.first_tensor = tensor_id;
    s.storage_fresh = true;
  }
  s.storage_id = e.id;
  s.aliases = e.first_tensor != tensor_id;
  e.data_address = s.data_address;
}

// Whether the storage a dead tensor referred to lives on (other tensors
// hold it): only then is its death news; otherwise the storage's free says
// it. Takes the storage shard lock (tensor shard, then storage shard).
bool storage_lives(const TensorEntry& e) {
  if (e.storage == nullptr) return false;
  Shard<StorageEntry>& shard = g_tables->storages[shard_of(e.storage)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  const StorageEntry* s = shard.table.find(e.storage);
  return s != nullptr && s->id == e.storage_id;
}

// Collects the deaths a table finds as it drops expired entries, and their
// weak references for DeadTensors::give_back.
struct CollectDeaths {
  DeadTensors& dead;
  void operator()(c10::intrusive_ptr_target* key, const TensorEntry& e) const {
    if (storage_lives(e)) dead.ids.push_back(e.id);
    dead.dropped.push_back(key);
  }
};

// A strong reference to a table key's TensorImpl, or null when it died.
TensorPtr lock_tensor(c10::intrusive_ptr_target* key) {
  auto* strong = c10::raw::weak_intrusive_ptr::lock(key);
  return strong != nullptr ? TensorPtr::reclaim(static_cast<c10::TensorImpl*>(strong))
                           : TensorPtr();
}

std::atomic<uint64_t> g_dtype_strings[256];

uint64_t dtype_string(const c10::TensorImpl& impl) {
  const auto index = static_cast<uint8_t>(impl.dtype().toScalarType());
  uint64_t id = g_dtype_strings[index].load(std::memory_order_acquire);
  if (id == 0) {
    // torch's own names ("Float", "Long"), not the C++ type names.
    id = rec::intern_string(c10::toString(impl.dtype().toScalarType()));
    g_dtype_strings[index].store(id, std::memory_order_release);
  }
  return id;
}

int64_t device_of(const c10::TensorImpl& impl) {
  const c10::Device device = impl.device();
  return device.is_cpu() ? -1 : static_cast<int64_t>(device.index());
}

}  // namespace

bool trackable(const c10::TensorImpl& impl) {
  if (!impl.has_storage() || impl.is_nested() || impl.has_symbolic_sizes_strides()) return false;
  const c10::DispatchKeySet keys = impl.key_set();
  // FakeTensors and functional wrappers of torch.compile's tracing carry
  // these keys; they own no memory the program can leak.
  if (keys.has(c10::DispatchKey::Python) || keys.has(c10::DispatchKey::PythonTLSSnapshot) ||
      keys.has(c10::DispatchKey::Functionalize) || keys.has(c10::DispatchKey::Meta)) {
    return false;
  }
  return !impl.is_meta() && impl.unsafe_storage().unsafeGetStorageImpl() != nullptr;
}

namespace {

TensorSighting sight_tensor_locked(const TensorPtr& tensor, bool is_view, DeadTensors& dead) {
  TensorSighting s;
  const c10::TensorImpl& impl = *tensor;
  if (!trackable(impl)) return s;
  s.storage = impl.unsafe_storage().unsafeGetStorageImpl();
  s.data_address = reinterpret_cast<uint64_t>(s.storage->data_ptr().get());
  s.storage_bytes = s.storage->nbytes();
  const uint64_t geometry = mix(geometry_of(impl), is_view ? 1 : 0);
  Shard<TensorEntry>& shard = g_tables->tensors[shard_of(&impl)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  bool fresh = false;
  TensorEntry& e = shard.table.upsert(target_of(&impl), fresh, CollectDeaths{dead});
  if (!fresh) {
    s.tensor_id = e.id;
    if (e.storage == s.storage && e.data_address == s.data_address &&
        e.storage_bytes == s.storage_bytes && e.geometry == geometry) {
      s.storage_id = e.storage_id;
      return s;  // the common case: a tensor seen before, unchanged
    }
    s.changed = true;
  } else {
    e.id = rec::next_id();
    s.tensor_id = e.id;
    s.is_new = true;
  }
  e.storage = s.storage;
  e.data_address = s.data_address;
  e.storage_bytes = s.storage_bytes;
  e.geometry = geometry;
  e.is_view = is_view;
  // Lock order is always tensor shard, then storage shard (nothing takes
  // them the other way round), so the entry is filled in one visit.
  sight_storage(s.storage, s.tensor_id, s);
  e.storage_id = s.storage_id;
  return s;
}

}  // namespace

TensorSighting sight_tensor(const TensorPtr& tensor, bool is_view) {
  DeadTensors dead;
  const TensorSighting s = sight_tensor_locked(tensor, is_view, dead);
  dead.emit(DeathHow::kDestroyed);  // after the shard lock: nothing is written under it
  dead.give_back();
  return s;
}

void DeadTensors::emit(DeathHow how) {
  // Chunks keep each record well inside a recorder block.
  constexpr size_t kIdsPerRecord = 1024;
  for (size_t i = 0; i < ids.size(); i += kIdsPerRecord) {
    format::TensorDeathRecord r;
    r.how = how;
    r.tensor_ids = {ids.data() + i, std::min(kIdsPerRecord, ids.size() - i)};
    rec::emit(r);
  }
  ids.clear();
}

void DeadTensors::give_back() {
  for (c10::intrusive_ptr_target* key : dropped) c10::raw::weak_intrusive_ptr::decref(key);
  dropped.clear();
}

size_t sweep_dead_tensors(DeadTensors& dead, int passes) {
  size_t live_views = 0;
  for (int pass = 0; pass < passes; ++pass) {
    live_views = 0;
    for (Shard<TensorEntry>& shard : g_tables->tensors) {
      std::lock_guard<std::mutex> lock(shard.mutex);
      shard.table.sweep([&](c10::intrusive_ptr_target*,
                            const TensorEntry& e) { live_views += e.is_view ? 1 : 0; },
                        CollectDeaths{dead});
    }
    const bool cascade_possible = !dead.dropped.empty();
    dead.give_back();
    if (!cascade_possible) break;
  }
  return live_views;
}

std::vector<TensorPtr> lock_live_views() {
  std::vector<TensorPtr> views;
  for (Shard<TensorEntry>& shard : g_tables->tensors) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.table.for_each_live([&](c10::intrusive_ptr_target* key, const TensorEntry& e) {
      if (!e.is_view) return;
      if (TensorPtr view = lock_tensor(key)) views.push_back(std::move(view));
    });
  }
  return views;
}

uint64_t first_report_as_only_views_base(const c10::TensorImpl* impl) {
  Shard<TensorEntry>& shard = g_tables->tensors[shard_of(impl)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  TensorEntry* e = shard.table.find(impl);
  if (e == nullptr || e->only_views_base_seen) return 0;
  e->only_views_base_seen = true;
  return e->id;
}

uint64_t known_tensor_id(const c10::TensorImpl* impl, uint64_t* storage_id) {
  const c10::StorageImpl* storage = nullptr;
  uint64_t id = 0;
  {
    Shard<TensorEntry>& shard = g_tables->tensors[shard_of(impl)];
    std::lock_guard<std::mutex> lock(shard.mutex);
    const TensorEntry* e = shard.table.find(impl);
    if (e == nullptr) return 0;
    id = e->id;
    storage = e->storage;
  }
  if (storage_id != nullptr) {
    *storage_id = 0;
    if (storage == nullptr) return id;
    Shard<StorageEntry>& shard = g_tables->storages[shard_of(storage)];
    std::lock_guard<std::mutex> lock(shard.mutex);
    if (const StorageEntry* e = shard.table.find(storage)) *storage_id = e->id;
  }
  return id;
}

uint64_t storage_id_for_address(const void* address) {
  const auto wanted = reinterpret_cast<uint64_t>(address);
  uint64_t found = 0;
  for (Shard<StorageEntry>& shard : g_tables->storages) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.table.for_each_live([&](c10::intrusive_ptr_target*, const StorageEntry& e) {
      if (found == 0 && e.data_address == wanted) found = e.id;
    });
    if (found != 0) return found;
  }
  return 0;
}

uint64_t reachable_bytes(const c10::TensorImpl& impl) {
  // The elements the tensor addresses: its strided span, or its element
  // count when that is smaller (a column of a matrix spans the whole matrix
  // but holds only its own elements).
  const auto sizes = impl.sizes();
  const auto strides = impl.strides();
  uint64_t span = 1, numel = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    span += static_cast<uint64_t>(sizes[i] - 1) * static_cast<uint64_t>(std::abs(strides[i]));
    numel *= static_cast<uint64_t>(sizes[i]);
  }
  return std::min(span, numel) * impl.dtype().itemsize();
}

void emit_tensor_record(rec::ThreadWriter& w, const c10::TensorImpl& impl, const TensorSighting& s,
                        bool is_view, uint64_t flags, uint64_t base_tensor_id, uint64_t op_string,
                        uint64_t stack_id) {
  format::TensorRecord r;
  r.tensor_id = s.tensor_id;
  r.storage_id = s.storage_id;
  r.data_address = s.data_address;
  r.storage_bytes = s.storage_bytes;
  r.storage_offset = static_cast<uint64_t>(impl.storage_offset());
  const auto sizes = impl.sizes();
  const auto strides = impl.strides();
  r.sizes = {sizes.data(), sizes.size()};
  r.strides = {strides.data(), strides.size()};
  r.itemsize = impl.dtype().itemsize();
  r.dtype_string = dtype_string(impl);
  r.device = device_of(impl);
  if (is_view) flags |= kTensorIsView;
  if (s.aliases) flags |= kTensorAliases;
  if (impl.requires_grad()) flags |= kTensorRequiresGrad;
  r.flags = flags;
  r.base_tensor_id = base_tensor_id;
  r.op_string = op_string;
  r.stack_id = stack_id;
  rec::emit(w, r);
}

std::vector<LiveTensor> lock_live_tensors() {
  std::vector<LiveTensor> live;
  DeadTensors dead;
  for (Shard<TensorEntry>& shard : g_tables->tensors) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.table.rebuild(CollectDeaths{dead});  // drops the expired entries first
    shard.table.for_each_live([&](c10::intrusive_ptr_target* key, const TensorEntry& e) {
      if (TensorPtr tensor = lock_tensor(key)) live.push_back({std::move(tensor), e.id});
    });
  }
  dead.emit(DeathHow::kDestroyed);
  dead.give_back();
  return live;
}

void reset_identity_after_fork() {
  // Leaked on purpose: another parent thread may have held a shard lock
  // mid-update at fork time, so the old tables cannot be trusted.
  g_tables = arena::make<Tables>();
  for (auto& id : g_dtype_strings) id.store(0, std::memory_order_relaxed);
}

}  // namespace memlife::torch_plugin
