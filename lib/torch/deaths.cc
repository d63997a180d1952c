#include "torch/deaths.h"

#include <ATen/core/TensorBase.h>
#include <cxxabi.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "preload/recorder.h"
#include "torch/identity.h"
#include "torch/python_refs.h"
#include "torch/python_stack.h"

namespace memlife::torch_plugin {
namespace {

std::atomic<bool> g_sweeper_started{false};

void sweep_views_bases() {
  // The GIL before any plugin lock (census.cc's order), and held while the
  // views are locked: dropping a reference may free a Python object.
  GilScope gil;
  if (!gil.held()) return;
  std::vector<TensorPtr> views = lock_live_views();
  {
    rec::ReentryGuard guard;  // proceeds when nested: the census calls it
    DeadTensors released;
    for (const TensorPtr& view : views) {
      const at::TensorBase tensor(view);
      if (!tensor.is_view()) continue;
      const at::TensorBase& base = tensor._base();
      if (!base.defined()) continue;
      const c10::TensorImpl* impl = base.unsafeGetTensorImpl();
      if (!released_by_python(impl->pyobj_slot())) continue;
      if (const uint64_t id = first_report_as_only_views_base(impl)) released.ids.push_back(id);
    }
    released.emit(DeathHow::kOnlyViewsBase);
  }
  views.clear();  // outside the guard: a free this causes is recorded
}

// MEMLIFE_SWEEP_MS, 50 by default: the recorder's flush interval, so a death
// is in the trace no later than the records around it reach the file.
long sweep_interval_ms() { return std::strtol(rec::option_value("sweep-ms"), nullptr, 10); }

void* sweeper_main(void*) {
  const long ms = sweep_interval_ms();
  for (;;) {
    timespec interval{ms / 1000, (ms % 1000) * 1'000'000};
    nanosleep(&interval, nullptr);
    if (!rec::active()) continue;
    try {
      sweep_deaths(kPeriodicPasses);
    } catch (const abi::__forced_unwind&) {
      throw;  // Python ends a thread that asks for the GIL while it finalizes
    } catch (...) {
    }
  }
  return nullptr;
}

}  // namespace

void sweep_deaths(int passes) {
  size_t live_views = 0;
  {
    rec::ReentryGuard guard;  // proceeds when nested: the census calls it
    if (rec::current_thread_writer() == nullptr) return;
    DeadTensors dead;
    live_views = sweep_dead_tensors(dead, passes);
    dead.emit(DeathHow::kDestroyed);
  }
  if (live_views != 0) sweep_views_bases();
}

void ensure_death_sweeper() {
  if (g_sweeper_started.load(std::memory_order_relaxed)) return;
  if (g_sweeper_started.exchange(true)) return;
  if (sweep_interval_ms() <= 0) return;
  // Signals stay with the program's threads: the sweeper blocks them all.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  if (pthread_create(&thread, nullptr, &sweeper_main, nullptr) == 0) {
    pthread_setname_np(thread, "memlife-sweep");
    pthread_detach(thread);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void reset_death_sweeper_after_fork() { g_sweeper_started.store(false, std::memory_order_relaxed); }

}  // namespace memlife::torch_plugin
