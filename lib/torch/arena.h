// The plugin's own memory, kept out of the program's malloc heap: its
// long-lived containers interleaved with the program's allocations
// fragmented glibc's heap (a tensor-churning loop grew from 540 MB to
// 3.8 GB RSS, issue 15). Blocks of 64 KiB and up get their own mapping;
// smaller ones come from size-class free lists carved out of 1 MiB mmap'd
// chunks (never given back: the containers that use them only grow).
// No malloc, no locks that allocate: safe inside allocation hooks.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace memlife::torch_plugin::arena {

struct Stats {
  std::atomic<uint64_t> mapped{0};  // bytes mapped for the arena
  std::atomic<uint64_t> in_use{0};  // bytes handed out and not given back
};
inline Stats g_stats;

constexpr size_t kLarge = size_t{64} * 1024;
constexpr size_t kChunk = size_t{1024} * 1024;
constexpr int kClasses = 13;  // 16 B .. 32 KiB

struct FreeBlock {
  FreeBlock* next;
};
struct Pool {
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
  FreeBlock* free[kClasses] = {};
  char* cursor = nullptr;
  char* end = nullptr;
};
inline Pool g_pool;

inline int class_of(size_t n) {
  int c = 0;
  size_t s = 16;
  while (s < n) {
    s <<= 1;
    ++c;
  }
  return c;
}
inline size_t round_pages(size_t n) { return (n + 4095) & ~size_t{4095}; }

inline void* map(size_t bytes) {
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  g_stats.mapped.fetch_add(bytes, std::memory_order_relaxed);
  return m;
}

inline void* allocate(size_t n) {
  if (n == 0) n = 1;
  if (n >= kLarge) {
    void* m = map(round_pages(n));
    if (m != nullptr) g_stats.in_use.fetch_add(round_pages(n), std::memory_order_relaxed);
    return m;
  }
  const int c = class_of(n);
  const size_t size = size_t{16} << c;
  while (g_pool.lock.test_and_set(std::memory_order_acquire)) {
  }
  void* result = nullptr;
  if (FreeBlock* b = g_pool.free[c]) {
    g_pool.free[c] = b->next;
    result = b;
  } else {
    if (g_pool.cursor == nullptr || static_cast<size_t>(g_pool.end - g_pool.cursor) < size) {
      // The rest of the old chunk is lost (under 32 KiB once per MiB).
      auto* chunk = static_cast<char*>(map(kChunk));
      if (chunk != nullptr) {
        g_pool.cursor = chunk;
        g_pool.end = chunk + kChunk;
      }
    }
    if (g_pool.cursor != nullptr && static_cast<size_t>(g_pool.end - g_pool.cursor) >= size) {
      result = g_pool.cursor;
      g_pool.cursor += size;
    }
  }
  g_pool.lock.clear(std::memory_order_release);
  if (result != nullptr) g_stats.in_use.fetch_add(size, std::memory_order_relaxed);
  return result;
}

inline void deallocate(void* p, size_t n) {
  if (p == nullptr) return;
  if (n == 0) n = 1;
  if (n >= kLarge) {
    ::munmap(p, round_pages(n));
    g_stats.mapped.fetch_sub(round_pages(n), std::memory_order_relaxed);
    g_stats.in_use.fetch_sub(round_pages(n), std::memory_order_relaxed);
    return;
  }
  const int c = class_of(n);
  while (g_pool.lock.test_and_set(std::memory_order_acquire)) {
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = g_pool.free[c];
  g_pool.free[c] = b;
  g_pool.lock.clear(std::memory_order_release);
  g_stats.in_use.fetch_sub(size_t{16} << c, std::memory_order_relaxed);
}

// A std allocator over the arena, for the plugin's containers.
template <typename T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <typename U>
  Allocator(const Allocator<U>&) {}  // NOLINT(google-explicit-constructor)
  // T may itself be a pointer (a list of keys): sizeof(T) is then meant.
  T* allocate(size_t n) {
    void* p = arena::allocate(n * sizeof(T));  // NOLINT(bugprone-sizeof-expression)
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    arena::deallocate(p, n * sizeof(T));  // NOLINT(bugprone-sizeof-expression)
  }
  template <typename U>
  bool operator==(const Allocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const Allocator<U>&) const {
    return false;
  }
};

// `new T(args...)` in the arena (for objects never deleted, or deleted
// with destroy()).
template <typename T, typename... Args>
T* make(Args&&... args) {
  void* p = arena::allocate(sizeof(T));
  if (p == nullptr) return nullptr;
  return new (p) T(static_cast<Args&&>(args)...);
}
template <typename T>
void destroy(T* p) {
  if (p == nullptr) return;
  p->~T();
  arena::deallocate(p, sizeof(T));
}

}  // namespace memlife::torch_plugin::arena
