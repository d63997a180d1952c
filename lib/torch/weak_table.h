// Open-addressing table keyed by the address of an intrusive_ptr_target
// (TensorImpl, StorageImpl), holding a weak reference to it. The weak
// reference keeps the object's address reserved, so a live object found at
// a key is the object that was inserted. It also keeps the object itself:
// a TensorImpl whose last strong reference went releases its storage, but a
// subclass frees its own members only when deleted (a quantized tensor's
// quantizer and its scale tensors, a sparse tensor's indices and values),
// so expired entries must be let go soon (sweep), not only when a
// slot is reused or the table rebuilt. Not thread-safe: callers shard and
// lock.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "torch/arena.h"

namespace memlife::torch_plugin {

// What a table does with an entry whose object died, when it drops the
// entry (sweep, a rebuild, a new key taking its slot): the handler
// sees the key and the value and takes over the weak reference. By default
// it is given back at once, which deletes the object if nothing else holds
// it weakly: right for objects whose deletion frees nothing more (a
// StorageImpl gave its data back when it died), not for TensorImpls (see
// identity.cc's DeadTensors).
struct ReleaseExpired {
  template <typename Value>
  void operator()(c10::intrusive_ptr_target* key, const Value&) const {
    c10::raw::weak_intrusive_ptr::decref(key);
  }
};

template <typename Value>
class WeakTable {
 public:
  struct Slot {
    c10::intrusive_ptr_target* key = nullptr;  // weak reference held when set
    Value value{};
  };

  WeakTable() : slots_(kInitialCapacity) {}
  ~WeakTable() = delete;  // leaked on purpose (see identity.cc)

  static bool expired(c10::intrusive_ptr_target* key) {
    return c10::raw::weak_intrusive_ptr::use_count(key) == 0;
  }

  // The live entry for `key`, or null.
  Value* find(const c10::intrusive_ptr_target* key) {
    Slot* s = probe(key);
    if (s == nullptr || s->key == nullptr) return nullptr;
    if (expired(s->key)) return nullptr;
    return &s->value;
  }

  // The entry for `key`, made (value-initialized, weak reference taken)
  // when absent or expired; `fresh` says which. `on_expired` gets every
  // expired entry the call drops.
  template <typename OnExpired = ReleaseExpired>
  Value& upsert(c10::intrusive_ptr_target* key, bool& fresh, OnExpired&& on_expired = {}) {
    Slot* reusable = nullptr;
    Slot* s = probe(key, &reusable);
    if (s != nullptr && s->key != nullptr) {
      fresh = expired(s->key);
      if (fresh) s->value = Value{};  // same address, a new object: cannot be, but be safe
      return s->value;
    }
    if (reusable != nullptr) {
      // Taking over an expired entry's slot releases its object's memory
      // now rather than at the next rebuild: short-lived tensors then go
      // back to malloc in the order they died, and the table stays small.
      if (reusable->key != kReleased)
        on_expired(reusable->key, static_cast<const Value&>(reusable->value));
      c10::raw::weak_intrusive_ptr::incref(key);
      fresh = true;
      reusable->key = key;
      reusable->value = Value{};
      return reusable->value;
    }
    if ((used_ + 1) * 2 > slots_.size()) {
      rebuild(on_expired);
      s = probe(key);
    }
    fresh = true;
    c10::raw::weak_intrusive_ptr::incref(key);
    s->key = key;
    s->value = Value{};
    ++used_;
    return s->value;
  }

  template <typename F>
  void for_each_live(const F& f) {
    for (Slot& s : slots_) {
      if (holds_entry(s) && !expired(s.key)) f(s.key, s.value);
    }
  }

  // One pass over the table: `on_live` gets every live entry; every
  // expired one is dropped and `on_expired` gets it. A dropped entry's slot
  // stays occupied (probes go past it) until a key reuses it or the table
  // is rebuilt.
  template <typename OnLive, typename OnExpired>
  void sweep(const OnLive& on_live, OnExpired&& on_expired) {
    for (Slot& s : slots_) {
      if (!holds_entry(s)) continue;
      if (!expired(s.key)) {
        on_live(s.key, static_cast<const Value&>(s.value));
        continue;
      }
      on_expired(s.key, static_cast<const Value&>(s.value));
      s.key = kReleased;
      s.value = Value{};
    }
  }

  // Drops expired entries (`on_expired` gets each) and resizes.
  template <typename OnExpired = ReleaseExpired>
  void rebuild(OnExpired&& on_expired = {}) {
    Slots old = std::move(slots_);
    size_t live = 0;
    for (Slot& s : old) {
      if (s.key == kReleased) s.key = nullptr;
      if (s.key == nullptr) continue;
      if (expired(s.key)) {
        on_expired(s.key, static_cast<const Value&>(s.value));
        s.key = nullptr;
      } else {
        ++live;
      }
    }
    size_t capacity = kInitialCapacity;
    while (capacity < live * 4) capacity *= 2;
    slots_ = Slots(capacity);
    used_ = 0;
    for (Slot& s : old) {
      if (s.key == nullptr) continue;
      Slot* d = probe(s.key);
      *d = s;
      ++used_;
    }
  }

 private:
  static constexpr size_t kInitialCapacity = 256;
  // A slot whose entry sweep dropped: no object's address, never
  // dereferenced, reusable, and not the end of a probe.
  inline static c10::intrusive_ptr_target* const kReleased =
      reinterpret_cast<c10::intrusive_ptr_target*>(alignof(c10::intrusive_ptr_target));

  static bool holds_entry(const Slot& s) { return s.key != nullptr && s.key != kReleased; }

  // The slot holding `key`, else the empty slot where it would go. The
  // table is never full (load <= 1/2), so the probe ends.
  // `reusable`, when given, gets the first expired slot on the way (its
  // key is never `key`: a weak reference pins that address).
  Slot* probe(const c10::intrusive_ptr_target* key, Slot** reusable = nullptr) {
    const size_t mask = slots_.size() - 1;
    size_t i = (reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ull >> 20 & mask;
    for (;;) {
      Slot& s = slots_[i];
      if (s.key == key || s.key == nullptr) return &s;
      if (reusable != nullptr && *reusable == nullptr && (s.key == kReleased || expired(s.key)))
        *reusable = &s;
      i = (i + 1) & mask;
    }
  }

  using Slots = std::vector<Slot, arena::Allocator<Slot>>;
  Slots slots_;
  size_t used_ = 0;
};

}  // namespace memlife::torch_plugin
