/* memlife C API: marks a traced program can set. Exported by the preload
 * library (libmemlife_preload.so). A program that is not run under
 * `memlife run` can look these up with dlsym and skip them when absent; the
 * Python module `memlife` does exactly that. Every function is safe to call
 * from any thread and returns quickly: the work is queued into the caller's
 * trace buffer. */
#ifndef MEMLIFE_MEMLIFE_H
#define MEMLIFE_MEMLIFE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MEMLIFE_API __attribute__((visibility("default")))

/* 1 when the recorder is active in this process. */
MEMLIFE_API int memlife_active(void);

/* Marks a step boundary; label may be NULL. Triggers a census when the
 * torch plugin is loaded. */
MEMLIFE_API void memlife_mark_step(const char* label);

/* Marks the end of an outermost backward pass (`loss.backward()`,
 * `torch.autograd.grad`) as a step boundary, for programs that update their
 * parameters by hand, with no torch.optim step; the Python module calls it
 * when the parameters changed since the previous pass. With --steps auto a
 * backward pass marks a step only until the first optimizer step (which
 * then marks them) or the program's first own mark. Returns 1 when it
 * marked a step, 0 when not, -1 when it never will (a stronger source took
 * over, or --steps marks). */
MEMLIFE_API int memlife_backward_step(void);

/* Watches up to MEMLIFE_MAX_WATCHED_STORAGES storages (c10::StorageImpl
 * addresses: Python's `untyped_storage()._cdata`) for writes by in-place
 * torch ops (`p.data.add_(p.grad, alpha=-lr)`, `p.copy_(q)`,
 * `w.index_add_(...)`): the parameters the backward step probe follows,
 * which such an update changes without bumping their version counter and
 * whose bytes a GPU does not show without synchronizing. Replaces the
 * previous watch and forgets its writes; count 0 ends it. The storages must
 * be alive. Returns the number watched, -1 without the torch plugin. */
MEMLIFE_API int memlife_watch_storages(const uintptr_t* storages, int count);

/* 1 when an in-place op wrote a watched storage since the last
 * memlife_watch_storages, 0 when not, -1 without the torch plugin. */
MEMLIFE_API int memlife_watched_storage_written(void);

/* Records a free-form label on the timeline. */
MEMLIFE_API void memlife_mark(const char* label);

/* Declares that the storage whose data starts at `address` must be freed by
 * the next census; the analyzer reports it (and who holds it) otherwise. */
MEMLIFE_API void memlife_expect_freed(const void* address, const char* label);

/* Records that the Python reference path `path` (`__main__.history[3]`,
 * `model.layer._saved_self`) reaches the storage whose data starts at
 * `address`: the holder a finding about that storage names. Lines after the
 * first (`\n`-separated `file:line`) name the program lines that store
 * into the path's container (`history.append(loss)`). A container that
 * evicts by itself carries its bound after its name as `<Type key=N>`
 * (`<deque maxlen=N>`, `<_lru_cache_wrapper maxsize=N>`,
 * `<LBFGS history_size=N>`, `<ROC_AUC epoch_length=N>`, `<dict
 * dataset_len=N>`, and `<list loop_line=N>` for a container a running loop
 * at line N makes anew at each pass): growth it holds is bounded.
 * `address` NULL ends a walk: with an empty `path` one that reached
 * everything the program's roots reach (a storage still allocated that it
 * did not reach has no Python holder now, whatever an earlier walk found),
 * with "cut" one its budget cut short. A path that starts with
 * MEMLIFE_HOLDER_CYCLE_ROOT "." names memory no root reaches that a
 * reference cycle keeps, one gc.collect() could not free because one of its
 * references is held in C++ (`<uncollectable cycle>.Parameter.
 * _post_accumulate_grad_hooks[0]<function hook>.optimizers.keys()`: the
 * path from a tensor of the cycle back to it). */
MEMLIFE_API void memlife_holder(const void* address, const char* path);
#define MEMLIFE_HOLDER_CYCLE_ROOT "<uncollectable cycle>"
/* Written after the path of a one-element tensor that carries an autograd
 * graph (`__main__.losses[3]<with grad_fn>`): a loss kept with its history
 * (the pattern of PyTorch's FAQ), which backward may have emptied of saved
 * tensors while the graph's nodes stay. One kept detached is a number. */
#define MEMLIFE_HOLDER_NUMBER_WITH_GRAPH "<with grad_fn>"

/* Labels of the marks around the gc.collect() that the exit walk runs
 * first: what it frees was garbage on reference cycles that the program's
 * collector had not freed yet (the program disabled it, as torchtitan does
 * between its own scheduled collections, or no full collection was due). */
#define MEMLIFE_HOLDER_EXIT_COLLECT_BEGIN "memlife.exit gc.collect begin"
#define MEMLIFE_HOLDER_EXIT_COLLECT_END "memlife.exit gc.collect end"

/* Labels of the marks around each torchmetrics Metric.reset() call: a
 * list-state metric (AUROC, average precision) keeps every batch it was
 * updated with until reset(), by design. Growth that a reset freed was the
 * accumulation of a period the program chose (Lightning resets a logged
 * metric at each epoch's end), not a leak; one never reset is
 * (torchmetrics#1949). */
#define MEMLIFE_METRIC_RESET_BEGIN "memlife.metric reset begin"
#define MEMLIFE_METRIC_RESET_END "memlife.metric reset end"

/* Labels of the marks around the end of each training epoch: Lightning's
 * (its fit loop's on_advance_end: the on_train_epoch_end hooks of the
 * module and the callbacks, the logged metrics' reset), an HF Trainer's
 * and Keras's (the callbacks' on_epoch_end), an ignite engine's
 * (EPOCH_COMPLETED's handlers). What is freed there was kept for the
 * epoch, as Lightning's documentation does with
 * `self.training_step_outputs`, cleared in on_train_epoch_end: bounded by
 * the epoch, not a leak. */
#define MEMLIFE_EPOCH_END_BEGIN "memlife.epoch_end begin"
#define MEMLIFE_EPOCH_END_END "memlife.epoch_end end"

/* Asks for a census of live tensors and storages now. */
MEMLIFE_API void memlife_census(void);

/* Annotations for allocators memlife does not hook (a custom pool, a
 * framework's arena): record that [address, address+bytes) was handed out
 * on `device` (-1 = CPU), or handed back. */
MEMLIFE_API void memlife_alloc(const void* address, size_t bytes, int device);
MEMLIFE_API void memlife_free(const void* address, int device);

/* Records that the program waited on a c10d Work (Python's Work.wait(),
 * which fires nothing in C++), or on the future it took from one
 * (Future.wait(), a then() callback's start). `tensor_impls` are the TensorImpl addresses
 * (Python: tensor._cdata) of the work's tensors; the torch plugin matches
 * them to the collective that produced them. */
MEMLIFE_API void memlife_work_wait(const uintptr_t* tensor_impls, size_t count);

/* Tells memlife this process's rank and world size when no launcher
 * variable did (torch.multiprocessing spawn, init_process_group(rank=...)).
 * The Python hooks call it from init_process_group. */
MEMLIFE_API void memlife_set_rank(int rank, int world_size);

/* Says whether memlife's Python hooks (Work.wait, init_process_group, exit
 * census, holder walk) are in place: written to the trace as a process
 * record note, "python hooks installed" or "python hooks not installed".
 * The Python module calls it from install_hooks(). */
MEMLIFE_API void memlife_python_hooks(int installed);

/* For a recorder loaded into a process that is already running (dlopen,
 * as `memlife.record()` does, rather than LD_PRELOAD at start, with the
 * recorder's variables already in the environment): loads the torch plugin
 * for the torch the process has already loaded (no later dlopen of torch
 * would) and starts recording. 1: recording with the torch plugin; 0:
 * recording without it (the trace says why); -1: not armed
 * (MEMLIFE_OUTPUT_DIR unset when the library was loaded). */
MEMLIFE_API int memlife_attach(void);

/* The path of this process's trace file; "" before recording starts. */
MEMLIFE_API const char* memlife_trace_path(void);

/* Labels of the marks that open and close the N-th `memlife.record()`
 * block of a process ("memlife.record begin 1"): `memlife analyze
 * --block N` judges what happened between them. */
#define MEMLIFE_BLOCK_BEGIN_PREFIX "memlife.record begin "
#define MEMLIFE_BLOCK_END_PREFIX "memlife.record end "

/* Labels of the marks around each call of a DDP communication hook (the
 * Python callable given to register_comm_hook, which DDP's reducer calls
 * from C++ for every gradient bucket). The hook returns a future that the
 * reducer waits in C++: a c10d collective issued between them is waited
 * there, where memlife does not see it. */
#define MEMLIFE_COMM_HOOK_BEGIN "memlife.comm_hook begin"
#define MEMLIFE_COMM_HOOK_END "memlife.comm_hook end"

/* Labels of the marks around each backward pass a Python thread runs
 * (`loss.backward()`, `torch.autograd.grad`), each with the caller's stack.
 * On CUDA the autograd engine runs the nodes on a thread of its own, which
 * runs no Python: what it allocates was made by that call, and the analyzer
 * gives it the call's stack. */
#define MEMLIFE_BACKWARD_BEGIN "memlife.backward begin"
#define MEMLIFE_BACKWARD_END "memlife.backward end"
/* Label of the step marks memlife_backward_step writes. */
#define MEMLIFE_BACKWARD_STEP_LABEL "memlife.backward step"
/* Label of the step mark that ends a backward pass in which optimizers
 * stepped (an optimizer per parameter stepped from its grad hook, the
 * optimizer fused into the backward pass): one step, not one per optimizer. */
#define MEMLIFE_OPTIMIZER_STEPS_IN_BACKWARD_LABEL "memlife.optimizer steps in backward"
/* How many storages memlife_watch_storages follows at most. */
#define MEMLIFE_MAX_WATCHED_STORAGES 8

/* Label of the mark the torch plugin writes once when a step census took
 * 5 ms or more (its address: what it took, in ns): from then on step
 * censuses are spaced to take at most 1/20 of the run, so some steps have
 * none. */
#define MEMLIFE_CENSUS_SPACED_LABEL "memlife.census spaced"

/* Writes every buffered record to the trace file before returning. */
MEMLIFE_API void memlife_flush(void);

#ifdef __cplusplus
}
#endif

#endif /* MEMLIFE_MEMLIFE_H */
