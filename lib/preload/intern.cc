// Interning: strings process-wide, stacks per thread. Both write their
// definition record on the calling thread before returning the id, so a
// definition always precedes its first use in sequence order.
#include <sys/mman.h>

#include <cstring>
#include <mutex>
#include <new>

#include "preload/hash_mix.h"
#include "preload/recorder_state.h"

namespace memlife::rec {

class StackTable {
 public:
  static constexpr size_t kSlots = 1u << 14;
  struct Slot {
    uint64_t hash_a, hash_b, id;
  };
  Slot slots[kSlots];
  size_t used = 0;
};

namespace {

uint64_t hash_bytes(const char* data, size_t n, uint64_t seed) {
  uint64_t h = seed ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, data + i, 8);
    h = hash_mix(h, v);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, data + i, n - i);
  return hash_mix(h, tail);
}

void* map_zeroed(size_t bytes) {
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? nullptr : m;
}

// Process-wide string table: open addressing over (hash, id, copy). The
// copies live in mmap'd arenas that are never freed.
struct StringSlot {
  uint64_t hash;
  uint64_t id;
  const char* text;
  size_t size;
};
constexpr size_t kStringSlots = 1u << 16;
std::mutex g_string_mutex;
StringSlot* g_string_slots = nullptr;
size_t g_string_count = 0;
char* g_arena = nullptr;
size_t g_arena_left = 0;

const char* copy_to_arena(std::string_view s) {
  if (s.size() + 1 > g_arena_left) {
    const size_t bytes = s.size() + 1 > (1u << 20) ? s.size() + 1 : (1u << 20);
    g_arena = static_cast<char*>(map_zeroed(bytes));
    if (g_arena == nullptr) {
      g_arena_left = 0;
      return nullptr;
    }
    g_arena_left = bytes;
  }
  char* out = g_arena;
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  g_arena += s.size() + 1;
  g_arena_left -= s.size() + 1;
  return out;
}

// Per-thread cache in front of the locked table, keyed by content.
struct CachedString {
  uint64_t hash;
  uint64_t id;
  const char* text;
  size_t size;
};
constexpr size_t kThreadCacheSlots = 512;
thread_local CachedString* tls_string_cache __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local uint64_t tls_string_generation __attribute__((tls_model("initial-exec"))) = 0;
std::atomic<uint64_t> g_string_generation{1};

}  // namespace

uint64_t intern_string(std::string_view s) {
  if (s.empty()) return 0;
  ThreadWriter* w = current_thread_writer();
  if (w == nullptr) return 0;
  const uint64_t hash = hash_bytes(s.data(), s.size(), 0x51ed27);
  if (tls_string_cache == nullptr || tls_string_generation != g_string_generation.load()) {
    if (tls_string_cache == nullptr) {
      tls_string_cache =
          static_cast<CachedString*>(map_zeroed(sizeof(CachedString) * kThreadCacheSlots));
    } else {
      std::memset(tls_string_cache, 0, sizeof(CachedString) * kThreadCacheSlots);
    }
    tls_string_generation = g_string_generation.load();
  }
  CachedString* cached = tls_string_cache ? &tls_string_cache[hash % kThreadCacheSlots] : nullptr;
  if (cached != nullptr && cached->hash == hash && cached->size == s.size() &&
      std::memcmp(cached->text, s.data(), s.size()) == 0) {
    return cached->id;
  }
  uint64_t id = 0;
  const char* text = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_string_mutex);
    if (g_string_slots == nullptr) {
      g_string_slots = static_cast<StringSlot*>(map_zeroed(sizeof(StringSlot) * kStringSlots));
      if (g_string_slots == nullptr) return 0;
    }
    size_t i = hash % kStringSlots;
    for (size_t probes = 0; probes < kStringSlots; ++probes, i = (i + 1) % kStringSlots) {
      StringSlot& slot = g_string_slots[i];
      if (slot.id == 0) break;
      if (slot.hash == hash && slot.size == s.size() &&
          std::memcmp(slot.text, s.data(), s.size()) == 0) {
        id = slot.id;
        text = slot.text;
        break;
      }
    }
    if (id == 0) {
      id = next_id();
      // Defined under the lock: no other thread can use the id before the
      // definition has its sequence number.
      emit(*w, format::StringRecord{id, s});
      if (g_string_count < kStringSlots * 3 / 4 && (text = copy_to_arena(s)) != nullptr) {
        g_string_slots[i] = StringSlot{hash, id, text, s.size()};
        ++g_string_count;
      }
    }
  }
  if (cached != nullptr && text != nullptr) *cached = CachedString{hash, id, text, s.size()};
  return id;
}

void lock_strings_for_fork() { g_string_mutex.lock(); }
void unlock_strings_after_fork() { g_string_mutex.unlock(); }

void reset_string_table_after_fork() {
  // The child's trace must define every string again.
  if (g_string_slots != nullptr) std::memset(g_string_slots, 0, sizeof(StringSlot) * kStringSlots);
  g_string_count = 0;
  g_string_generation.fetch_add(1);
}

namespace {

// Four independent multiply chains per hash half keep the loop throughput
// bound instead of latency bound (a depth-32 stack hashes in ~20 ns).
struct StackHasher {
  uint64_t a[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                   0x082efa98ec4e6c89ull};
  uint64_t b[4] = {0x452821e638d01377ull, 0xbe5466cf34e90c6cull, 0xc0ac29b7c97c50ddull,
                   0x3f84d5b5b5470917ull};
  size_t n = 0;
  void add(const uint64_t* values, size_t count) {
    for (size_t i = 0; i < count; ++i, ++n) {
      const uint64_t v = values[i];
      const size_t lane = n & 3;
      a[lane] = (a[lane] ^ v) * 0x9e3779b97f4a7c15ull;
      b[lane] = ((b[lane] ^ v) * 0xc2b2ae3d27d4eb4full) ^ (b[lane] >> 29);
    }
  }
  void finish(uint64_t& out_a, uint64_t& out_b) const {
    uint64_t x = n, y = ~n;
    for (int lane = 0; lane < 4; ++lane) {
      x = hash_mix(x, a[lane]);
      y = hash_mix(y, b[lane]);
    }
    out_a = x;
    out_b = y;
  }
};

}  // namespace

uint64_t intern_stack(ThreadWriter& w, const uint64_t* python_frames, size_t python_count,
                      const uint64_t* native_addresses, size_t native_count) {
  if (python_count == 0 && native_count == 0) return 0;
  StackHasher hasher;
  hasher.add(python_frames, python_count);
  // The boundary between the two parts is part of the identity.
  const uint64_t boundary = 0xfeedfacecafebeefull ^ python_count;
  hasher.add(&boundary, 1);
  hasher.add(native_addresses, native_count);
  uint64_t a = 0, b = 0;
  hasher.finish(a, b);
  StackTable*& table = w.stacks();
  if (table == nullptr) {
    table = static_cast<StackTable*>(map_zeroed(sizeof(StackTable)));
    if (table == nullptr) return 0;
  }
  // A 128-bit hash stands for the whole stack: a collision between two
  // distinct stacks of one thread is astronomically unlikely and costs
  // one misattributed stack, never a crash.
  if (table->used >= StackTable::kSlots * 3 / 4) {
    std::memset(table->slots, 0, sizeof(table->slots));
    table->used = 0;
  }
  size_t i = a % StackTable::kSlots;
  for (;; i = (i + 1) % StackTable::kSlots) {
    StackTable::Slot& slot = table->slots[i];
    if (slot.id == 0) break;
    if (slot.hash_a == a && slot.hash_b == b) return slot.id;
  }
  const uint64_t id = next_id();
  emit(w, format::StackRecord{id, {python_frames, python_count}, {native_addresses, native_count}});
  table->slots[i] = StackTable::Slot{a, b, id};
  ++table->used;
  return id;
}

uint64_t capture_stack(ThreadWriter& w, int native_skip) {
  const Settings& s = settings();
  if (s.stacks == StackMode::kNone) return 0;
  uint64_t python[256];
  uint64_t native[256];
  size_t python_count = 0, native_count = 0;
  const size_t depth = s.max_depth < 256 ? s.max_depth : 256;
  if ((s.stacks == StackMode::kPython || s.stacks == StackMode::kAll) &&
      plugin().python_stack != nullptr) {
    python_count = plugin().python_stack(python, depth);
  }
  if (s.stacks == StackMode::kNative || s.stacks == StackMode::kAll) {
    native_count = capture_native_stack(native, depth, native_skip + 1);
  }
  return intern_stack(w, python, python_count, native, native_count);
}

}  // namespace memlife::rec
