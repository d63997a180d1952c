// A C++ custom-op library that gathers and releases parameters the way
// DeepSpeed's DeepCompile ZeRO-3 ops do (csrc/compile/z3.cpp since PR
// #7489): `gather` allocates a padded buffer inside the op, keeps it in a
// C++ registry and returns a true-shape view of it; `release` takes the
// buffer out of the registry and lets go of it with `set_data(empty)`
// (the 0.19.1 release, which leaves the storage to the view) or frees the
// storage first (the 0.19.2 release). Everything happens below Python and
// inside one dispatcher op, as in the real library.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <mutex>
#include <unordered_map>

namespace {

std::mutex g_mutex;
std::unordered_map<int64_t, at::Tensor>& registry() {
  static auto* r = new std::unordered_map<int64_t, at::Tensor>();
  return *r;
}

at::Tensor gather(const at::Tensor& shard, int64_t key, int64_t padded_numel) {
  at::Tensor padded = at::empty({padded_numel}, shard.options());
  padded.narrow(0, 0, shard.numel()).copy_(shard.reshape(-1));
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    registry()[key] = padded;
  }
  return padded.narrow(0, 0, shard.numel()).view(shard.sizes());
}

void release(int64_t key, bool free_storage) {
  at::Tensor buffer;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = registry().find(key);
    if (it == registry().end()) return;
    buffer = it->second;
    registry().erase(it);
  }
  if (free_storage) {
    // The storage itself gives its memory back, whoever still points at it.
    buffer.unsafeGetTensorImpl()->unsafe_storage().unsafeGetStorageImpl()->reset();
  }
  buffer.set_data(at::empty({0}, buffer.options()));
}

}  // namespace

TORCH_LIBRARY(memlife_test, m) {
  m.def("gather(Tensor shard, int key, int padded_numel) -> Tensor");
  m.def("release(int key, bool free_storage) -> ()");
}

TORCH_LIBRARY_IMPL(memlife_test, CPU, m) { m.impl("gather", &gather); }
TORCH_LIBRARY_IMPL(memlife_test, CompositeExplicitAutograd, m) { m.impl("release", &release); }
