// Storages watched for writes by in-place ops: the parameters of the
// hand-update probe (python/memlife/_hand_updates.py). A loop without an
// optimizer updates them between backward passes, often through `.data`
// (`p.data.add_(p.grad, alpha=-lr)`), which bumps no version counter the
// probe can read, and on a GPU their bytes cannot be read without
// synchronizing the device. The op observer sees the update itself.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace memlife::torch_plugin {

// Replaces the watched storages (c10::StorageImpl addresses, at most
// MEMLIFE_MAX_WATCHED_STORAGES; more are ignored) and forgets earlier
// writes; count 0 ends the watch. Returns the number watched. The storages
// must be alive: the watch keeps their StorageImpl objects (not their data)
// from being freed, so that another storage made at the same address is
// never taken for a watched one.
int watch_storages(const uintptr_t* storages, size_t count);

// Whether an in-place op wrote a watched storage since watch_storages.
int watched_storage_written();

// For the op observer: whether any storage is watched (one relaxed load,
// so an op that writes its input costs nothing more while none is), and
// the write of an in-place op to `storage` (a c10::StorageImpl).
extern std::atomic<int> g_watched_count;
inline bool watching_storages() { return g_watched_count.load(std::memory_order_relaxed) != 0; }
void note_inplace_write(const void* storage);

// A forked child watches nothing (its parent's objects are not its own).
void reset_storage_watch_after_fork();

}  // namespace memlife::torch_plugin
