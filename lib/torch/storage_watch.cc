#include "torch/storage_watch.h"

#include <c10/core/StorageImpl.h>
#include <c10/util/intrusive_ptr.h>

#include <mutex>
#include <new>
#include <optional>

#include "memlife/memlife.h"

namespace memlife::torch_plugin {

std::atomic<int> g_watched_count{0};

namespace {

constexpr int kMaxWatched = MEMLIFE_MAX_WATCHED_STORAGES;

// The addresses compared on the op path, without a lock: a watch replaced
// while an op compares may count that op for either watch.
std::atomic<const void*> g_watched[kMaxWatched];
std::atomic<bool> g_written{false};

// Weak references keep each watched StorageImpl object allocated (its data
// is freed as usual), so its address is not reused while it is compared.
std::mutex g_keep_mutex;
std::optional<c10::weak_intrusive_ptr<c10::StorageImpl>> g_keep[kMaxWatched];

}  // namespace

int watch_storages(const uintptr_t* storages, size_t count) {
  std::lock_guard<std::mutex> lock(g_keep_mutex);
  g_watched_count.store(0, std::memory_order_relaxed);
  int n = 0;
  for (size_t i = 0; i < count && n < kMaxWatched; ++i) {
    auto* impl = reinterpret_cast<c10::StorageImpl*>(storages[i]);
    if (impl == nullptr) continue;
    // Takes a reference of its own while the program holds the storage.
    auto strong = c10::intrusive_ptr<c10::StorageImpl>::unsafe_reclaim_from_nonowning(impl);
    g_keep[n].emplace(strong);
    g_watched[n].store(impl, std::memory_order_relaxed);
    ++n;
  }
  for (int i = n; i < kMaxWatched; ++i) {
    g_keep[i].reset();
    g_watched[i].store(nullptr, std::memory_order_relaxed);
  }
  g_written.store(false, std::memory_order_relaxed);
  g_watched_count.store(n, std::memory_order_release);
  return n;
}

int watched_storage_written() { return g_written.load(std::memory_order_relaxed) ? 1 : 0; }

void note_inplace_write(const void* storage) {
  if (storage == nullptr) return;
  const int n = g_watched_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (g_watched[i].load(std::memory_order_relaxed) == storage) {
      g_written.store(true, std::memory_order_relaxed);
      return;
    }
  }
}

void reset_storage_watch_after_fork() {
  // The parent's probe watched its parameters; the child's probe starts
  // over. Another thread may have held the lock at the fork.
  new (&g_keep_mutex) std::mutex();
  g_watched_count.store(0, std::memory_order_relaxed);
  for (auto& w : g_watched) w.store(nullptr, std::memory_order_relaxed);
  g_written.store(false, std::memory_order_relaxed);
}

}  // namespace memlife::torch_plugin
