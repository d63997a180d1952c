"""Marks for memlife traces.

Thin ctypes wrappers over the C API that the preload library exports into
the process when the program runs under ``memlife run``. Outside it every
function does nothing (and warns once).
"""

from __future__ import annotations

import ctypes
import sys
import warnings

__all__ = ["active", "mark_step", "mark", "expect_freed", "census", "flush", "install_hooks",
           "record", "Recording", "command"]


class _Api:
    """The C API, resolved once; None where the preload library is absent."""

    def __init__(self) -> None:
        self.lib = None
        self.work_wait = None
        self.set_rank = None
        self.python_hooks = None
        try:
            lib = ctypes.CDLL(None)
            lib.memlife_active.restype = ctypes.c_int
            lib.memlife_mark_step.argtypes = [ctypes.c_char_p]
            lib.memlife_mark.argtypes = [ctypes.c_char_p]
            lib.memlife_expect_freed.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            lib.memlife_census.argtypes = []
            lib.memlife_holder.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            lib.memlife_flush.argtypes = []
        except (OSError, AttributeError):
            return
        self.lib = lib
        try:
            lib.memlife_attach.argtypes = []
            lib.memlife_attach.restype = ctypes.c_int
            lib.memlife_trace_path.argtypes = []
            lib.memlife_trace_path.restype = ctypes.c_char_p
        except AttributeError:  # a recorder older than memlife.record()
            pass
        # Functions a recorder older than this module may lack: None then.
        self.work_wait = self._optional(
            "memlife_work_wait", [ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t])
        self.set_rank = self._optional("memlife_set_rank", [ctypes.c_int, ctypes.c_int])
        self.python_hooks = self._optional("memlife_python_hooks", [ctypes.c_int])

    def _optional(self, name, argtypes):
        fn = getattr(self.lib, name, None)
        if fn is not None:
            fn.argtypes = argtypes
            fn.restype = None
        return fn


_api = _Api()
_warned = False


def _lib():
    global _warned
    if _api.lib is not None and _api.lib.memlife_active() == 1:
        return _api.lib
    if not _warned:
        _warned = True
        warnings.warn("memlife: not running under `memlife run`; marks are ignored", stacklevel=3)
    return None


def _bytes(label):
    if label is None:
        return None
    return str(label).encode("utf-8", "replace")


def active() -> bool:
    """True when this process is being recorded."""
    return _api.lib is not None and _api.lib.memlife_active() == 1


def mark_step(label=None) -> None:
    """Marks a step boundary (and takes a census when torch is loaded)."""
    lib = _lib()
    if lib is not None:
        lib.memlife_mark_step(_bytes(label))


def mark(label) -> None:
    """Puts a free-form label on the timeline."""
    lib = _lib()
    if lib is not None:
        lib.memlife_mark(_bytes(label))


def expect_freed(tensor, label) -> None:
    """Declares that `tensor`'s storage must be gone by the next census."""
    lib = _lib()
    if lib is not None:
        lib.memlife_expect_freed(ctypes.c_void_p(tensor.untyped_storage().data_ptr()), _bytes(label))


def census() -> None:
    """Asks for a census of live tensors and storages now."""
    lib = _lib()
    if lib is not None:
        lib.memlife_census()


def flush() -> None:
    """Writes buffered records to the trace file now."""
    lib = _lib()
    if lib is not None:
        lib.memlife_flush()


def _tensors_in(value):
    """The tensors in a collective's result: a tensor, or lists and tuples
    of them, or (collect_all's value) completed futures of them."""
    from torch._C import Future

    tensors = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, Future):
            if item.done():
                try:
                    stack.append(item.value())
                except Exception:  # the future failed: nothing was waited
                    pass
        elif hasattr(item, "_cdata"):
            tensors.append(item)
    return tensors


def _work_tensors(work):
    """The work's output tensors. Through its future, which gloo and NCCL
    both complete with the outputs: ``Work.result()`` works too on gloo but
    prints a deprecation warning, which would change the program's output."""
    try:
        future = work.get_future()
        if not future.done():
            return []
        return _tensors_in(future.value())
    except Exception:  # not every backend keeps results
        return []


def _notify_waited(tensors) -> None:
    """Tells the recorder these tensors' collectives were waited. Never
    raises: the program's behaviour must not change."""
    try:
        if not tensors:
            return
        impls = [t._cdata for t in tensors]
        array = (ctypes.c_size_t * len(impls))(*impls)
        _api.work_wait(array, len(impls))
    except Exception:
        pass


def _wrap(owner, name, make):
    """Replaces owner.NAME by make(original), marked so that installing
    twice wraps once; returns the wrapper."""
    original = getattr(owner, name)
    wrapper = make(original)
    wrapper._memlife_wrapped = True
    wrapper.__wrapped__ = original
    wrapper.__doc__ = original.__doc__
    wrapper.__name__ = original.__name__
    setattr(owner, name, wrapper)
    return wrapper


def _install_work_wait() -> bool:
    """Wraps c10d's Work.wait, whose C++ side fires no RecordFunction, and
    the waits of the futures a program takes from works (work.get_future()):
    Future.wait (torch.futures.wait_all and collect_all wait through it) and
    the start of a then() or add_done_callback() callback, which runs only
    once the future completed."""
    if _api.work_wait is None or not active():
        return False
    try:
        from torch._C import Future
        from torch._C._distributed_c10d import Work
    except ImportError:
        return False
    if getattr(Work.wait, "_memlife_wrapped", False):
        return True

    def work_wait(original):
        def wait(self, *args, **kwargs):
            done = original(self, *args, **kwargs)
            _notify_waited(_work_tensors(self))
            return done
        return wait

    def future_wait(original):
        def wait(self):
            value = original(self)
            _notify_waited(_tensors_in(value))
            return value
        return wait

    def completed_first(callback):
        def run(future):
            try:
                tensors = _tensors_in(future.value())
            except Exception:  # failed: the callback sees the error
                tensors = []
            _notify_waited(tensors)
            return callback(future)
        return run

    def future_then(original):
        def then(self, callback):
            return original(self, completed_first(callback))
        return then

    def future_add_done_callback(original):
        def add_done_callback(self, callback):
            return original(self, completed_first(callback))
        return add_done_callback

    _wrap(Work, "wait", work_wait)
    _wrap(Future, "wait", future_wait)
    _wrap(Future, "then", future_then)
    _wrap(Future, "add_done_callback", future_add_done_callback)
    return True


def _install_set_rank() -> bool:
    """Wraps init_process_group so the trace learns the rank and world size
    where no launcher variable names them (torch.multiprocessing spawn)."""
    if _api.set_rank is None or not active():
        return False
    try:
        import torch.distributed as dist
        import torch.distributed.distributed_c10d as c10d
    except ImportError:
        return False
    original = c10d.init_process_group
    if getattr(original, "_memlife_wrapped", False):
        return True
    set_rank = _api.set_rank

    def reporting_rank(init):
        def init_process_group(*args, **kwargs):
            result = init(*args, **kwargs)
            try:
                set_rank(int(dist.get_rank()), int(dist.get_world_size()))
            except Exception:  # never change the program's behaviour
                pass
            return result
        return init_process_group

    wrapper = _wrap(c10d, "init_process_group", reporting_rank)
    if getattr(dist, "init_process_group", None) is original:
        dist.init_process_group = wrapper
    return True


# The labels of the marks around a DDP communication hook's call:
# MEMLIFE_COMM_HOOK_BEGIN and MEMLIFE_COMM_HOOK_END of include/memlife/memlife.h
# (a test compares).
COMM_HOOK_BEGIN = "memlife.comm_hook begin"
COMM_HOOK_END = "memlife.comm_hook end"


def _install_comm_hook_marks() -> bool:
    """Wraps the hook DDP.register_comm_hook hands to the reducer, so each of
    its calls is marked: the reducer waits the future the hook returns in
    C++, and the collectives issued inside are waited there."""
    if not active():
        return False
    try:
        import torch.distributed as dist
    except ImportError:
        return False
    original = getattr(dist, "_register_comm_hook", None)
    if original is None:  # torch built without distributed support
        return True
    if getattr(original, "_memlife_wrapped", False):
        return True
    mark = _api.lib.memlife_mark
    begin, end = COMM_HOOK_BEGIN.encode(), COMM_HOOK_END.encode()

    def marking_hook_calls(register):
        def register_comm_hook(reducer, state, hook):
            def hook_marked(hook_state, bucket):
                mark(begin)
                try:
                    return hook(hook_state, bucket)
                finally:
                    mark(end)

            return register(reducer, state, hook_marked)
        return register_comm_hook

    _wrap(dist, "_register_comm_hook", marking_hook_calls)
    return True


# The labels of the marks around torchmetrics' Metric.reset():
# MEMLIFE_METRIC_RESET_BEGIN and _END of include/memlife/memlife.h (a test
# compares).
METRIC_RESET_BEGIN = "memlife.metric reset begin"
METRIC_RESET_END = "memlife.metric reset end"


def _install_metric_reset_marks() -> bool:
    """Marks each torchmetrics Metric.reset() call, once torchmetrics is
    imported: what a reset frees is a list-state metric's accumulation, kept
    by design until the reset the program chose (each epoch's end under
    Lightning), which the analyzer tells apart from a leak."""
    if not active():
        return False
    after_import("torchmetrics", _mark_metric_resets)
    return True


def _mark_metric_resets(torchmetrics) -> None:
    _mark_calls(getattr(torchmetrics, "Metric", None), "reset", METRIC_RESET_BEGIN, METRIC_RESET_END)


# The labels of the marks around the end of each training epoch:
# MEMLIFE_EPOCH_END_BEGIN and _END of include/memlife/memlife.h (a test
# compares).
EPOCH_END_BEGIN = "memlife.epoch_end begin"
EPOCH_END_END = "memlife.epoch_end end"
# Where each framework ends its epochs: the module, the class and the method
# whose call runs the program's epoch-end hooks.
_EPOCH_END_CALLS = (
    # Lightning's fit loop: on_advance_end runs the on_train_epoch_end hooks.
    ("lightning.pytorch.loops.fit_loop", "_FitLoop", "on_advance_end"),
    ("pytorch_lightning.loops.fit_loop", "_FitLoop", "on_advance_end"),
    # HF Trainer: the TrainerCallbacks' on_epoch_end.
    ("transformers.trainer_callback", "CallbackHandler", "on_epoch_end"),
    # Keras 3: the callbacks' on_epoch_end.
    ("keras.src.callbacks.callback_list", "CallbackList", "on_epoch_end"),
)


def _install_epoch_end_marks() -> bool:
    """Marks the end of each training epoch (Lightning's, an HF Trainer's,
    Keras's, an ignite engine's EPOCH_COMPLETED), once the framework is
    imported: what a program kept for the epoch and frees there (Lightning's
    documented `self.training_step_outputs.clear()`, a callback's per-step
    list) was bounded by it."""
    if not active():
        return False
    for module, owner, method in _EPOCH_END_CALLS:
        after_import(module, lambda m, owner=owner, method=method: _mark_calls(
            getattr(m, owner, None), method, EPOCH_END_BEGIN, EPOCH_END_END))
    after_import("ignite.engine.engine", _mark_ignite_epoch_ends)
    return True


def _mark_ignite_epoch_ends(engine_module) -> None:
    """An ignite engine fires all its events through one method: only
    EPOCH_COMPLETED's handlers are marked."""
    events = getattr(sys.modules.get("ignite.engine.events"), "Events", None)
    if events is not None:
        _mark_calls(getattr(engine_module, "Engine", None), "_fire_event", EPOCH_END_BEGIN,
                    EPOCH_END_END, only_for=events.EPOCH_COMPLETED)


_EVERY_CALL = object()


def _mark_calls(owner, name, begin_label, end_label, only_for=_EVERY_CALL) -> None:
    """Wraps owner.NAME so that each call (each whose first argument is
    only_for, when given) is marked begin_label ... end_label."""
    method = getattr(owner, name, None)
    if method is None or getattr(method, "_memlife_wrapped", False):
        return
    mark = _api.lib.memlife_mark
    begin, end = begin_label.encode(), end_label.encode()

    def marking(original):
        def marked(self, *args, **kwargs):
            if only_for is not _EVERY_CALL and (not args or args[0] != only_for):
                return original(self, *args, **kwargs)
            mark(begin)
            try:
                return original(self, *args, **kwargs)
            finally:
                mark(end)
        return marked

    _wrap(owner, name, marking)


# The labels of the marks around a backward pass: MEMLIFE_BACKWARD_BEGIN and
# MEMLIFE_BACKWARD_END of include/memlife/memlife.h (a test compares).
BACKWARD_BEGIN = "memlife.backward begin"
BACKWARD_END = "memlife.backward end"
# The label of the steps the recorder marks at the end of backward passes.
BACKWARD_STEP = "memlife.backward step"


def _install_backward_marks() -> bool:
    """Marks each backward pass a Python thread runs, with its stack: on CUDA
    the autograd engine runs the nodes on its own thread, which runs no
    Python, and what they allocate (the gradients) gets the stack of the
    call. Wraps torch.autograd.graph._engine_run_backward, which
    Tensor.backward, torch.autograd.backward and torch.autograd.grad all
    call (torch >= 2.4; older releases: backward and grad themselves)."""
    if not active():
        return False
    after_import("torch.autograd.graph", _mark_backwards)
    return True


def _mark_backwards(graph) -> None:
    lib = _api.lib
    mark = lib.memlife_mark
    begin, end = BACKWARD_BEGIN.encode(), BACKWARD_END.encode()
    # An older recorder has no backward steps.
    backward_step = getattr(lib, "memlife_backward_step", None)
    if backward_step is not None:
        backward_step.argtypes, backward_step.restype = [], ctypes.c_int
    # Backward passes running now, in any thread: one started inside another
    # (a reentrant checkpoint's, on the engine's thread) is part of it.
    running = [0]
    probe = _hand_updates.PROBE
    if backward_step is None:
        probe.unavailable = True
        probe.stop()
    watch = getattr(lib, "memlife_watch_storages", None)
    if watch is not None and backward_step is not None:
        watch.argtypes, watch.restype = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_int], ctypes.c_int
        written = lib.memlife_watched_storage_written
        written.argtypes, written.restype = [], ctypes.c_int
        probe.use_watch(watch, written)

    def marked(run):
        # Named for a program's profile (torch.profiler with_stack shows it).
        def backward_marked_by_memlife(*args, **kwargs):
            mark(begin)
            outermost = running[0] == 0
            running[0] += 1
            if not probe.stopped and args:
                (probe.before if outermost else probe.reached)(args[0])
            try:
                return run(*args, **kwargs)
            finally:
                running[0] -= 1
                mark(end)
                # A program that updates its parameters by hand steps at
                # the end of each backward pass that follows an update.
                if outermost and not probe.stopped and probe.after():
                    stepped = backward_step()
                    if stepped > 0:
                        _holders.stepped(lib)
                    elif stepped < 0:  # an optimizer or the program marks steps
                        probe.stop()
        return backward_marked_by_memlife

    autograd = sys.modules.get("torch.autograd")
    if hasattr(graph, "_engine_run_backward"):
        if not getattr(graph._engine_run_backward, "_memlife_wrapped", False):
            # torch.autograd imports the name from graph; torch.compiler swaps
            # both during non-strict export tracing and puts back what it found.
            wrapper = _wrap(graph, "_engine_run_backward", marked)
            if hasattr(autograd, "_engine_run_backward"):
                autograd._engine_run_backward = wrapper
        return
    for name in ("backward", "grad"):
        if hasattr(autograd, name) and not getattr(getattr(autograd, name), "_memlife_wrapped", False):
            _wrap(autograd, name, marked)


_exit_census_registered = False


def _census_at_exit() -> None:
    # Runs before interpreter teardown, while every module-level tensor is
    # still alive: the last census the analyzer can match against the exit.
    if _api.lib is not None and _api.lib.memlife_active() == 1:
        _api.lib.memlife_census()


def _install_exit_census() -> bool:
    global _exit_census_registered
    if _exit_census_registered or not active():
        return _exit_census_registered
    import atexit

    atexit.register(_census_at_exit)
    _exit_census_registered = True
    return True


from memlife import _holders  # noqa: E402  (needs _api above)
from memlife import _hand_updates  # noqa: E402
from memlife.autoload.memlife_after_import import after_import  # noqa: E402
from memlife._record import Recording, command, record  # noqa: E402,F401


def _install_holder_walk() -> bool:
    """Walks the program's references at optimizer steps 1, 2, 3, 4, 6, 8, ...
    (a global optimizer post-step hook) and at exit, so findings name the
    Python path that holds their memory."""
    if not active():
        return False
    return _holders.install(_api.lib)


def install_hooks() -> bool:
    """Installs the Python-side hooks: Work.wait (its C++ side fires no
    RecordFunction), init_process_group (rank and world size), marks around
    DDP communication hooks (the reducer waits their collectives), marks around
    backward passes (the stack of what CUDA's autograd thread allocates),
    marks around torchmetrics' Metric.reset() and Lightning's training epoch
    ends (what they free grew for a period the program chose), and a census
    at interpreter exit (atexit, so before teardown). Called on import and
    by the autoload sitecustomize once torch.distributed is imported; call
    it again after importing torch.distributed when memlife came first.
    Returns True when every hook that applies is in place."""
    ok = True
    for install in (_install_holder_walk, _install_exit_census, _install_work_wait,
                    _install_set_rank, _install_comm_hook_marks, _install_backward_marks,
                    _install_metric_reset_marks, _install_epoch_end_marks):
        try:
            ok = install() and ok
        except Exception:
            ok = False
    # The trace records the outcome: the analyzer warns when a torch process
    # never had its hooks (python_hooks_not_installed).
    if _api.python_hooks is not None and active():
        try:
            _api.python_hooks(1 if ok else 0)
        except Exception:
            pass
    return ok


if "torch" in sys.modules:
    install_hooks()
