// The C API of include/memlife/memlife.h.
#include <cstring>

#include "gpu/gpu_hooks.h"
#include "memlife/memlife.h"
#include "preload/recorder_state.h"

using namespace memlife;
using namespace memlife::rec;

namespace {

std::string_view label_of(const char* label) {
  return label == nullptr ? std::string_view() : std::string_view(label, std::strlen(label));
}

}  // namespace

extern "C" {

int memlife_active(void) {
  const int p = phase().load();
  return p == static_cast<int>(Phase::kArmed) || p == static_cast<int>(Phase::kRunning);
}

void memlife_mark_step(const char* label) {
  ReentryGuard guard;
  if (guard.entered()) mark_step(label_of(label), StepSource::kProgram);
}

int memlife_backward_step(void) {
  ReentryGuard guard;
  if (!guard.entered()) return 0;
  if (!settings().steps_from_optimizer || step_source_outranked(StepSource::kBackward)) return -1;
  return mark_step(MEMLIFE_BACKWARD_STEP_LABEL, StepSource::kBackward) ? 1 : 0;
}

int memlife_watch_storages(const uintptr_t* storages, int count) {
  if (plugin().watch_storages == nullptr) return -1;
  ReentryGuard guard;  // releasing a watched storage may free it
  if (!guard.entered()) return 0;
  return plugin().watch_storages(storages,
                                 storages == nullptr || count < 0 ? 0 : static_cast<size_t>(count));
}

int memlife_watched_storage_written(void) {
  if (plugin().watched_storage_written == nullptr) return -1;
  return plugin().watched_storage_written();
}

void memlife_mark(const char* label) {
  ReentryGuard guard;
  if (!guard.entered()) return;
  ThreadWriter* w = current_thread_writer();
  if (w == nullptr) return;
  const std::string_view text = label_of(label);
  format::MarkRecord mark;
  mark.kind = MarkKind::kLabel;
  mark.step = current_step();
  mark.label_string = intern_string(text);
  mark.stack_id = capture_stack(*w, 1);
  emit(*w, mark);
  // A memlife.record() block is judged as a program of its own, steps too.
  if (text.starts_with(MEMLIFE_BLOCK_BEGIN_PREFIX)) restart_step_sources();
  if (text == MEMLIFE_BACKWARD_BEGIN) backward_pass_began();
  if (text == MEMLIFE_BACKWARD_END) backward_pass_ended();
}

void memlife_expect_freed(const void* address, const char* label) {
  ReentryGuard guard;
  if (!guard.entered()) return;
  ThreadWriter* w = current_thread_writer();
  if (w == nullptr) return;
  format::MarkRecord mark;
  mark.kind = MarkKind::kExpectFreed;
  mark.step = current_step();
  mark.label_string = intern_string(label_of(label));
  mark.address = reinterpret_cast<uint64_t>(address);
  if (plugin().storage_id_for_address != nullptr) {
    mark.storage_id = plugin().storage_id_for_address(address);
  }
  mark.stack_id = capture_stack(*w, 1);
  emit(*w, mark);
}

void memlife_holder(const void* address, const char* path) {
  ReentryGuard guard;
  if (!guard.entered() || path == nullptr) return;
  ThreadWriter* w = current_thread_writer();
  if (w == nullptr) return;
  format::MarkRecord mark;
  mark.kind = MarkKind::kHolder;
  mark.step = current_step();
  mark.label_string = intern_string(path);
  mark.address = reinterpret_cast<uint64_t>(address);
  emit(*w, mark);
}

void memlife_census(void) {
  ReentryGuard guard;
  if (guard.entered() && plugin().census != nullptr && current_thread_writer() != nullptr) {
    plugin().census(CensusReason::kRequest);
  }
}

void memlife_alloc(const void* address, size_t bytes, int device) {
  ReentryGuard guard;
  if (!guard.entered()) return;
  ThreadWriter* w = current_thread_writer();
  if (w == nullptr) return;
  format::AllocRecord alloc;
  alloc.address = reinterpret_cast<uint64_t>(address);
  alloc.bytes = bytes;
  alloc.device = device;
  alloc.stack_id = capture_stack(*w, 1);
  emit(*w, alloc);
}

void memlife_free(const void* address, int device) {
  ReentryGuard guard;
  if (!guard.entered()) return;
  format::FreeRecord free;
  free.address = reinterpret_cast<uint64_t>(address);
  free.device = device;
  emit(free);
}

void memlife_work_wait(const uintptr_t* tensor_impls, size_t count) {
  ReentryGuard guard;
  if (guard.entered() && plugin().work_wait != nullptr && current_thread_writer() != nullptr) {
    plugin().work_wait(tensor_impls, count);
  }
}

void memlife_set_rank(int rank, int world_size) {
  ReentryGuard guard;
  if (guard.entered())
    set_process_identity(rank, -1, world_size, {}, "rank from the process group");
}

void memlife_python_hooks(int installed) {
  ReentryGuard guard;
  if (guard.entered())
    set_process_identity(-1, -1, -1, {},
                         installed ? "python hooks installed" : "python hooks not installed");
}

int memlife_attach(void) {
  ReentryGuard guard;
  if (!guard.entered() || memlife_active() == 0) return -1;
  load_torch_plugin();
  gpu::at_attach();
  ThreadWriter* w = current_thread_writer();
  if (w == nullptr) return -1;
  emit_new_modules(*w);
  return plugin().census != nullptr ? 1 : 0;
}

const char* memlife_trace_path(void) { return trace_path(); }

void memlife_flush(void) {
  ReentryGuard guard;
  if (guard.entered()) flush();
}

}  // extern "C"
