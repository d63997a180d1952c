"""Names the Python references that hold tensor memory.

At a few optimizer steps (1, 2, 3, 4, 6, 8, ...) and at exit, a breadth-first walk
from the program's roots (``__main__``'s globals, the locals of its live
frames, its own modules; then the locals of the library calls those frames
are running) records, for each tensor storage it
reaches, the first path that reaches it (``__main__.history[3]``,
``main().cache['k'].grad_fn<MseLossBackward0>._saved_self``) through the C
API ``memlife_holder``. The analyzer attaches these paths to the findings
whose memory they reach. Each path comes with the program lines that store
into the container it names (``history.append(loss)``, ``self.cache[k] =``,
an ``@lru_cache`` decorator, ``total = total + loss``), found in the
program's own source files: the line that keeps the memory, beside the line
that allocated it. Autograd graphs are walked through their nodes'
saved tensors, exceptions through their tracebacks' frames. The walk is
bounded in objects and time, reads only, never lets an exception out, and
runs on a thread of its own while the caller waits (a tracer the program
set, torch.profiler's with_stack, would record it as the program's). After
a gc.collect() (a memlife.record() block's end, exit) it also names the
reference cycles the collector could not free, through C++, that keep
tensors no root reaches (_name_cycles).
"""

from __future__ import annotations

import _thread
import ast
import collections
import functools
import gc
import os
import re
import sys
import sysconfig
import time
import types
import weakref

from memlife.autoload.memlife_after_import import after_import

MAX_OBJECTS = 200_000
MAX_SECONDS = 1.0
# The budgets count the walking thread's CPU time: on a loaded machine (CI
# running tests side by side) a walk must reach what it reaches on an idle
# one. Wall time measured the load: the exit's cycle search missed one of a
# sweep's four leaked trials under two busy loops, and two of four under
# three.
_clock = time.thread_time
MAX_GRAPH_NODES = 4096

_LIBRARY_ROOTS = tuple(
    os.path.realpath(p)
    for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
              sysconfig.get_paths().get("platlib")}
    if p
)
_MEMLIFE_ROOT = os.path.dirname(os.path.realpath(__file__)) + os.sep
_SKIP_TYPES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
               types.MethodType, types.CodeType, str, bytes, bytearray, int, float, complex,
               bool, type(None), range, memoryview)
# Skipped but for their closures and instances (_callable_edges).
_CALLABLES = (types.FunctionType, types.MethodType)
_WEAK_PROXIES = (weakref.ProxyType, weakref.CallableProxyType)


def _bound(value, key: str, number: int) -> str:
    """The bound the walk writes after a container's name, `<Type key=N>`
    (`<list loop_line=11>`), which the analyzer reads (bound_of in
    lib/analysis/attribution.cc; memlife_holder in memlife.h)."""
    return f"<{type(value).__name__} {key}={number}>"


def _holds_own_storage(torch, t) -> bool:
    """Whether the walk reads tensor `t`: a plain tensor or parameter, or a
    subclass that overrides only __torch_function__ (fastai's TensorBase,
    torchvision's tv_tensors, MONAI's MetaTensor). Those keep their own
    storage, and read inside _plain_reads no Python code of theirs runs. A
    subclass with its own __torch_dispatch__ (DTensor, a FakeTensor) is a
    wrapper whose reads may dispatch ops: never read."""
    kind = type(t)
    return kind in (torch.Tensor, torch.nn.Parameter) or (
        kind.__torch_dispatch__ is torch.Tensor.__torch_dispatch__
        and hasattr(torch._C, "DisableTorchFunctionSubclass"))


def _plain_reads(torch):
    """A context in which reading a tensor's storage, grad, grad_fn or
    hooks calls no subclass's __torch_function__."""
    return torch._C.DisableTorchFunctionSubclass()


@functools.lru_cache(maxsize=65536)
def _realpath(path: str) -> str:
    # Cached: a walk asks for every module, class and frame it meets, and
    # realpath is an lstat per path component (one walk under the torch
    # profiler made 40,000 of them).
    return os.path.realpath(path)


def _generated_code_root() -> str:
    """Where torch.compile's generated code lives, once it has chosen
    (inductor writes TORCHINDUCTOR_CACHE_DIR then); "" before."""
    return os.environ.get("TORCHINDUCTOR_CACHE_DIR") or ""


_LIBRARY, _MEMLIFE, _GENERATED, _PROGRAM = "library", "memlife", "generated", "program"


@functools.lru_cache(maxsize=65536)
def _file_kind(path: str, generated_root: str) -> str:
    """Whose code a file is: _MEMLIFE (memlife's own: its frames, the walk's
    caller among them, hold nothing of the program's), _LIBRARY (the
    interpreter's, an installed package's), _GENERATED (torch.compile's,
    under generated_root) or _PROGRAM.

    Inductor loads each compiled graph's code and its Triton kernels as
    modules from its cache directory. Walked as the program's, each of their
    kernel objects was walked at every walk: a walk of nanoGPT compiled on
    the H200 took about 100 ms instead of 25. Their tensors (the constants
    of a graph compiled with freezing) are still walked. Cached: each walk
    asks for every module in sys.modules (2,800 once torch.compile has run)
    and every live frame."""
    if path.startswith("<frozen "):
        # The interpreter's frozen modules (runpy, importlib): relative
        # names that realpath would make a program file under the cwd.
        return _LIBRARY
    path = _realpath(path)
    if path.startswith(_MEMLIFE_ROOT):
        return _MEMLIFE
    if path.startswith(_LIBRARY_ROOTS) or "-packages" + os.sep in path:
        return _LIBRARY
    if generated_root and path.startswith(_realpath(generated_root) + os.sep):
        return _GENERATED
    return _PROGRAM


def _module_dict(module) -> dict:
    """A module's own namespace, read without its __getattr__: a lazy module
    in sys.modules (SpeechBrain's LazyModule for its optional integrations)
    imports its target on attribute access, and raises ImportError when that
    dependency is missing. The walk must neither fail nor import anything."""
    try:
        namespace = object.__getattribute__(module, "__dict__")
    except Exception:
        return {}
    return namespace if isinstance(namespace, dict) else {}


def _module_kind(module, generated_root: str) -> str:
    path = _module_dict(module).get("__file__")
    if not isinstance(path, str) or not os.path.isabs(path):  # torch._classes and such name no file
        return _LIBRARY
    return _file_kind(path, generated_root)


_CO_OPTIMIZED = 0x1  # a function's frame: its locals live in the frame, not in a dict


def _frame_locals(frame):
    """(name, value) of a frame's locals without keeping them alive.

    Before Python 3.13, reading `frame.f_locals` of a function's frame fills
    a dict that stays attached to the frame until the next read: the locals
    of that moment would outlive their step (a whole batch's activations).
    Unless the program holds that dict itself (`locals()`), it is emptied
    again right away. Module and class frames' f_locals are their real
    namespace and are never touched."""
    locals_ = frame.f_locals
    items = list(locals_.items())
    if (frame.f_code.co_flags & _CO_OPTIMIZED and sys.version_info < (3, 13)
            and type(locals_) is dict and sys.getrefcount(locals_) <= 3):
        locals_.clear()
    return items


def _key_text(key) -> str:
    if isinstance(key, (str, int, float, bool)) or key is None:
        text = repr(key)
        return text if len(text) <= 40 else text[:37] + "..."
    return "<" + type(key).__name__ + ">"


class _Walk:
    def __init__(self, torch, emit):
        self.torch = torch
        self.emit = emit
        self.seen_ids: set[int] = set()
        self.seen_storages: set[int] = set()
        self.queue: collections.deque = collections.deque()
        self.deadline = _clock() + MAX_SECONDS
        self.visited = 0
        self.cut = False  # an autograd graph was too big to walk whole
        self.generated_root = _generated_code_root()
        self.hook_made: dict = {}  # class -> _epoch_hook_made
        self._keep = []  # objects whose ids are in seen_ids stay alive meanwhile
        self.ndarray = getattr(sys.modules.get("numpy"), "ndarray", ())

    def push(self, obj, path):
        if obj is None:
            return
        if (isinstance(obj, _SKIP_TYPES) and not isinstance(obj, _CALLABLES)
                and not self.program_class(obj)):
            return
        if id(obj) in self.seen_ids:
            return
        self.seen_ids.add(id(obj))
        self._keep.append(obj)
        self.queue.append((obj, path))

    def program_class(self, obj) -> bool:
        # The program's own classes: their attributes (a class-level cache,
        # an lru_cache on a method) can hold tensors.
        if not isinstance(obj, type):
            return False
        module = sys.modules.get(getattr(obj, "__module__", "") or "")
        return module is not None and (_module_dict(module).get("__name__") == "__main__"
                                       or _module_kind(module, self.generated_root) == _PROGRAM)

    def epoch_hook_made(self, cls) -> dict:
        made = self.hook_made.get(cls)
        if made is None:
            made = self.hook_made[cls] = _epoch_hook_made(cls, self.generated_root)
        return made

    def run(self) -> bool:
        """Walks the queue; True when it reached everything (not cut short
        by MAX_OBJECTS or MAX_SECONDS)."""
        while self.queue and self.visited < MAX_OBJECTS:
            if (self.visited & 1023) == 0 and _clock() > self.deadline:
                break
            obj, path = self.queue.popleft()
            self.visited += 1
            try:
                self.visit(obj, path)
            except Exception:  # a container changed under us, a property raised
                pass
        return not self.queue and not self.cut

    def tensor(self, t, path):
        # A number kept with its graph (a loss appended undetached) says
        # so: backward may have freed what the graph saved, but not the
        # graph, so it is still a leak where a detached number is a record.
        carries_graph = t.grad_fn is not None and t.numel() == 1
        if not self.storage(t, path + NUMBER_WITH_GRAPH if carries_graph else path):
            return
        # .grad of a non-leaf tensor warns: leaves only.
        grad = t.grad if t.is_leaf else None
        if grad is not None:
            self.push(grad, path + ".grad")
        for k in _TENSOR_HOOKS:  # a hook's closure may keep what it sees
            hooks = getattr(t, k, None)
            if hooks:
                self.push(hooks, f"{path}.{k}")
        if t.grad_fn is not None:
            self.graph(t.grad_fn, path + ".grad_fn")

    def graph(self, root, path):
        # The saved tensors of an autograd graph, named from the tensor
        # that holds the graph.
        stack, nodes = [root], 0
        while stack and nodes < MAX_GRAPH_NODES:
            node = stack.pop()
            if node is None or id(node) in self.seen_ids:
                continue
            self.seen_ids.add(id(node))
            self._keep.append(node)
            nodes += 1
            name = f"{path}<{type(node).__name__}>"
            for attr in dir(node):
                if not attr.startswith("_saved_"):
                    continue
                try:
                    value = getattr(node, attr)
                except Exception:  # freed by backward, or not a tensor
                    continue
                if isinstance(value, self.torch.Tensor):
                    self.storage(value, f"{name}.{attr}")
                elif isinstance(value, (tuple, list)):
                    for i, v in enumerate(value):
                        if isinstance(v, self.torch.Tensor):
                            self.storage(v, f"{name}.{attr}[{i}]")
            for next_node, _ in getattr(node, "next_functions", ()):
                stack.append(next_node)
        self.cut |= bool(stack)

    def storage(self, t, path) -> bool:
        """Records the path of the tensor's storage when it is the first to
        reach it; False when the tensor has no storage to name."""
        if not _holds_own_storage(self.torch, t):
            return False  # a wrapper subclass may dispatch ops
        try:
            ptr = t.untyped_storage().data_ptr()  # inside visit's _plain_reads
        except Exception:
            return False
        if ptr and ptr not in self.seen_storages:
            self.seen_storages.add(ptr)
            self.emit(ptr, path)
        return True

    def visit(self, obj, path):
        torch = self.torch
        if isinstance(obj, torch.Tensor):
            # Not a wrapper subclass (DTensor, a FakeTensor): it may
            # dispatch ops when its storage or grad is read, and the walk
            # must not run any.
            if _holds_own_storage(torch, obj):
                with _plain_reads(torch):
                    self.tensor(obj, path)
            return
        if isinstance(obj, self.ndarray):
            # tensor.numpy() (np.asarray(tensor) too) shares the tensor's
            # memory: the array's base is a tensor on that storage, and an
            # array sliced from it has that array as its base.
            self.push(obj.base, f"{path}.base")
            return
        if isinstance(obj, _CALLABLES):
            for v, suffix in _callable_edges(obj):
                self.push(v, path + suffix)
            return
        if isinstance(obj, dict):
            for k, v in list(obj.items()):
                self.push(v, f"{path}[{_key_text(k)}]")
                if isinstance(k, torch.Tensor):
                    self.push(k, f"{path}.keys()")
            return
        if isinstance(obj, (list, tuple, collections.deque)):
            if isinstance(obj, collections.deque) and obj.maxlen is not None:
                path += f"<deque maxlen={obj.maxlen}>"  # evicts by itself: bounded
            for i, v in enumerate(list(obj)):
                self.push(v, f"{path}[{i}]")
            return
        if isinstance(obj, (set, frozenset)):
            for v in list(obj):
                self.push(v, f"{path}{{...}}")
            return
        if isinstance(obj, torch.nn.Module):
            for group in ("_parameters", "_buffers", "_modules"):
                for k, v in list(getattr(obj, group, {}).items()):
                    self.push(v, f"{path}.{k}")
            if isinstance(obj, torch.jit.RecursiveScriptModule):
                self.script_attributes(obj, path)
        if isinstance(obj, BaseException):
            self.push(obj.__traceback__, f"{path}.__traceback__")
            self.push(obj.__context__, f"{path}.__context__")
            return
        if isinstance(obj, types.TracebackType):
            self.push(obj.tb_frame, f"{path}.tb_frame")
            self.push(obj.tb_next, f"{path}.tb_next")
            return
        if isinstance(obj, types.FrameType):
            self.frame(obj, path)
            return
        if isinstance(obj, type):
            for k, v in list(vars(obj).items()):
                if not k.startswith("__"):
                    self.push(v, f"{obj.__qualname__}.{k}")
            return
        if isinstance(obj, torch._C.Future):
            # A completed future keeps its value in C++, where neither
            # __dict__ nor the collector's referents show it. A pending one
            # has no value yet, and the walk never waits.
            if obj.done():
                try:
                    self.push(obj.value(), f"{path}.value()")
                except Exception:  # completed with an error: no value
                    pass
        if isinstance(obj, torch.optim.LBFGS):
            # Its state keeps the last history_size curvature pairs.
            path += f"<LBFGS history_size={obj.param_groups[0]['history_size']}>"
        epoch_length = _ignite_epoch_length(obj)
        if epoch_length:
            # An epoch-wise ignite metric (ROC_AUC, any EpochMetric) keeps
            # each batch of the epoch; its engine resets it at the next.
            path += _bound(obj, "epoch_length", epoch_length)
        if _is_metric(obj):
            _metric_paths[obj] = path
            path += _computed_bound(obj)
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            samples = _dataset_length(torch, obj)
            # A weak proxy (Lightning's profiler holds its module so) reads
            # its referent's __dict__: the referent's class has the hooks.
            cls = type(obj)
            made = self.epoch_hook_made(obj.__class__ if cls in _WEAK_PROXIES else cls)
            metrics_epoch = _fastai_epoch_length(obj)
            for k, v in list(attrs.items()):
                if k in ("_parameters", "_buffers", "_modules") and isinstance(obj, torch.nn.Module):
                    continue
                if metrics_epoch and k == "_metrics":
                    # A fastai Learner's metrics: its Recorder resets them
                    # at each epoch's start.
                    self.push(v, f"{path}.{k}{_bound(v, 'epoch_length', metrics_epoch)}")
                    continue
                if samples and _keyed_by_sample(v, samples):
                    # A dataset's per-sample cache (a sample memoized on
                    # first use): at most one entry per sample.
                    self.push(v, f"{path}.{k}<dict dataset_len={samples}>")
                    continue
                self.push(v, f"{path}.{k}{_epoch_hook_bound(v, made.get(k))}")
        # What a C type holds (an lru_cache's cache, a cell): its referents.
        # For a plain object these are its __dict__ (already walked) and
        # its class.
        kind = type(obj).__name__
        if kind == "_lru_cache_wrapper":
            maxsize = obj.cache_parameters().get("maxsize")
            if maxsize is not None:
                kind += f" maxsize={maxsize}"  # evicts by itself: bounded
        for v in gc.get_referents(obj):
            self.push(v, f"{path}.<{kind}>")

    def script_attributes(self, module, path):
        # A TorchScript module keeps its attributes (a List[Tensor] that
        # forward appends to) in its C++ object, where neither __dict__ nor
        # the collector's referents show them; getattr converts each to a
        # new Python value whose tensors share the module's storages.
        concrete = getattr(module, "_concrete_type", None)
        if concrete is None:
            return
        for name, (_, is_param) in concrete.get_attributes().items():
            if not is_param:  # parameters and buffers: walked as a Module's
                self.push(module._c.getattr(name), f"{path}.{name}")

    def frame(self, frame, path):
        for k, v in _frame_locals(frame):
            self.push(v, f"{path}.{k}")


# Uncollectable cycles: memory no root reaches, kept by a reference cycle
# that gc.collect() could not free because one of its references is held
# in C++, where the collector cannot see it (a tensor hook's closure that
# refers back to the tensor: PyTorch keeps the tensor's hooks in its C++
# autograd metadata; a gradient made by backward(create_graph=True), whose
# graph's AccumulateGrad node holds the parameter: pytorch/pytorch#7343).
CYCLE_ROOT = "<uncollectable cycle>"  # MEMLIFE_HOLDER_CYCLE_ROOT (memlife.h; a test compares)
# MEMLIFE_HOLDER_NUMBER_WITH_GRAPH (memlife.h; a test compares).
NUMBER_WITH_GRAPH = "<with grad_fn>"
MAX_CYCLE_OBJECTS = 2048  # searched from each tensor
_TENSOR_HOOKS = ("_backward_hooks", "_post_accumulate_grad_hooks")
MAX_ISLAND_OBJECTS = 20_000  # what a cycle keeps, checked for outside referrers
MAX_ISLAND_CHECKS = 16
MAX_CYCLE_SECONDS = 1.0


def _tensor_edges(t):
    """What a tensor refers to, for _cycle_edges: its __dict__, its hooks,
    and its grad (a leaf) or graph."""
    for k, v in list(getattr(t, "__dict__", {}).items()):
        yield v, f".{k}"
    for k in _TENSOR_HOOKS:  # kept in C++, read through properties
        hooks = getattr(t, k, None)
        if hooks:
            yield hooks, f".{k}"
    if t.is_leaf:
        if t.grad is not None:
            yield t.grad, ".grad"
    elif t.grad_fn is not None:
        # A gradient made with create_graph=True: its graph reaches the
        # parameter's AccumulateGrad node, which holds the parameter.
        yield t.grad_fn, f".grad_fn<{type(t.grad_fn).__name__}>"


def _cycle_edges(torch, obj):
    """(referent, path suffix) of what obj refers to, named as the walk
    names them, plus what a tensor's __dict__ holds (the walk skips it:
    reachable tensors are named from elsewhere)."""
    if isinstance(obj, torch.Tensor):
        with _plain_reads(torch):
            edges = list(_tensor_edges(obj))
        yield from edges
        return
    if isinstance(obj, torch.autograd.graph.Node):
        for i, (node, _) in enumerate(obj.next_functions):
            if node is not None:
                yield node, f".next_functions[{i}]<{type(node).__name__}>"
        variable = getattr(obj, "variable", None)  # AccumulateGrad's leaf
        if variable is not None:
            yield variable, ".variable"
        return
    if isinstance(obj, dict):
        for k, v in list(obj.items()):
            yield v, f"[{_key_text(k)}]"
            yield k, ".keys()"
        return
    if isinstance(obj, (list, tuple, collections.deque, set, frozenset)):
        for i, v in enumerate(list(obj)):
            yield v, f"[{i}]"
        return
    if isinstance(obj, _CALLABLES):
        yield from _callable_edges(obj)
        return
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict):
        for k, v in list(attrs.items()):
            yield v, f".{k}"
    # What a C type holds (a cell, a functools.partial's function and
    # arguments); for a plain object its __dict__ again and its class.
    for v in gc.get_referents(obj):
        yield v, f".<{type(obj).__name__}>"


def _callable_edges(obj):
    """What a function's closure or a bound method's instance holds, named
    `<function hook>.kept`, `<method save>.__self__`: a hook a program
    registered on a module or a tensor holds what it stores only so."""
    if isinstance(obj, types.MethodType):
        yield obj.__self__, f"<method {obj.__name__}>.__self__"
        return
    for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or ()):
        try:
            yield cell.cell_contents, f"<function {obj.__name__}>.{name}"
        except ValueError:  # an empty cell
            pass


def _cycle_follows(torch, obj) -> bool:
    """Whether the cycle search goes into `obj`: not an atom, a module or a
    class (but functions and bound methods, for their closures and
    selves), nor a tensor subclass (reading it may dispatch ops)."""
    if isinstance(obj, _SKIP_TYPES):
        return isinstance(obj, _CALLABLES)
    return not isinstance(obj, torch.Tensor) or _holds_own_storage(torch, obj)


def _cycle_through(torch, start, deadline):
    """The objects on a shortest reference path from the tensor `start`
    back to itself, each with the path to it from `start`; None when there
    is none within MAX_CYCLE_OBJECTS."""
    parents = {id(start): None}
    objects = {id(start): (start, type(start).__name__)}
    queue = collections.deque([start])
    while queue and len(objects) < MAX_CYCLE_OBJECTS and _clock() < deadline:
        obj = queue.popleft()
        try:
            edges = list(_cycle_edges(torch, obj))
        except Exception:
            continue
        for child, suffix in edges:
            if child is start:
                chain, key = [], id(obj)
                while key is not None:
                    chain.append(objects[key])
                    key = parents[key]
                chain.reverse()
                return [(o, path) for o, path in chain], chain[-1][1] + suffix
            if id(child) in objects or not _cycle_follows(torch, child):
                continue
            parents[id(child)] = id(obj)
            objects[id(child)] = (child, objects[id(obj)][1] + suffix)
            queue.append(child)
    return None


def _may_keep_unnamed_memory(t, seen_storages) -> bool:
    """Whether a cycle through the unreached tensor `t` could keep memory
    the walk has not named: its own storage, or a gradient (with the graph
    of a create_graph backward) that it carries."""
    try:
        ptr = t.untyped_storage().data_ptr()
    except Exception:
        return False
    if ptr and ptr not in seen_storages:
        return True
    return t.is_leaf and t.grad is not None


def _name_cycles(torch, w):
    """Walks, from the objects of each uncollectable cycle through a tensor
    the roots did not reach, what the cycle keeps: its tensors and what
    hangs off it (an optimizer's state), under CYCLE_ROOT. Run after
    gc.collect() only: what survives it unreached is held by C++ (a
    registry, a cycle through C++)."""
    deadline = _clock() + MAX_CYCLE_SECONDS
    w.deadline = deadline  # its own budget: the roots' walk may have spent its own
    # issubclass of type(o), not isinstance: that would read o.__class__,
    # which some objects answer with a warning (torch.distributed.reduce_op).
    unreached = [o for o in gc.get_objects()
                 if issubclass(type(o), torch.Tensor) and id(o) not in w.seen_ids
                 and _holds_own_storage(torch, o)]
    checks = 0  # each reads the whole heap (gc.get_referrers)
    for obj in unreached:
        if _clock() > deadline:
            return
        with _plain_reads(torch):
            keeps = _may_keep_unnamed_memory(obj, w.seen_storages)
        if not keeps:
            continue
        found = _cycle_through(torch, obj, deadline)
        if found is None:
            continue
        chain, closing = found
        if checks == MAX_ISLAND_CHECKS:
            return
        checks += 1
        if not _an_island(torch, obj, deadline, (unreached, w._keep, w.queue, found, chain, *chain)):
            continue
        # The start's memory is named by the cycle itself, which the
        # analyzer takes for the shortest path under CYCLE_ROOT: a tensor of
        # the cycle (a gradient on the way to its parameter) by the way
        # round the cycle and on to it, so that its path is not shorter.
        w.push(obj, f"{CYCLE_ROOT}.{closing}")
        start_label = chain[0][1]
        for member, path in chain[1:]:
            if isinstance(member, torch.Tensor):
                w.push(member, f"{CYCLE_ROOT}.{closing}{path[len(start_label):]}")
            elif not isinstance(member, (types.FunctionType, torch.autograd.graph.Node)):
                # Not the graph's nodes: walking a tensor's grad_fn names what
                # they save, from the tensor.
                w.push(member, f"{CYCLE_ROOT}.{path}")
        w.run()


def _reach(torch, start, deadline):
    """id -> object of what `start` reaches through _cycle_edges (with the
    cells of closures), or None past MAX_ISLAND_OBJECTS or the deadline."""
    reached = {id(start): start}
    queue = collections.deque([start])
    while queue:
        if len(reached) > MAX_ISLAND_OBJECTS or _clock() > deadline:
            return None
        obj = queue.popleft()
        if isinstance(obj, types.FunctionType) and obj.__closure__:
            # The closure tuple and its cells refer to what the edges name.
            reached.setdefault(id(obj.__closure__), obj.__closure__)
            for cell in obj.__closure__:
                reached.setdefault(id(cell), cell)
        try:
            edges = list(_cycle_edges(torch, obj))
        except Exception:
            return None
        for child, _ in edges:
            if id(child) in reached or not _cycle_follows(torch, child):
                continue
            reached[id(child)] = child
            queue.append(child)
    return reached


def _an_island(torch, start, deadline, bookkeeping) -> bool:
    """Whether what `start` reaches is an island: no object outside it that
    the collector sees refers into it, so what keeps it alive is a
    reference from C++. A cycle that a library's module state reaches is
    not one (the walk's roots are the program's only). False when it is
    larger than MAX_ISLAND_OBJECTS or the time is up. `bookkeeping`: the
    caller's containers that hold `start`."""
    island = _reach(torch, start, deadline)
    if island is None:
        return False
    members = list(island.values())
    ignore = {id(island), id(members), *(id(b) for b in bookkeeping)}
    for referrer in gc.get_referrers(*members):
        if id(referrer) in island or id(referrer) in ignore:
            continue
        if isinstance(referrer, types.FrameType) and referrer.f_code.co_filename == __file__:
            continue  # this walk's own frames
        return False
    return True


def walk(torch, emit, cycles=False) -> int:
    """One walk; returns how many objects it visited. `emit(ptr, label)`
    gets each storage's path, then one line per program line that stores
    into the path's container (``file:line``), found after the walk so that
    reading sources does not eat the walk's time budget; then its end:
    `emit(0, "")` when it reached everything, `emit(0, "cut")` when its
    budget cut it short (see memlife_holder in memlife.h). With `cycles`
    (right after a gc.collect()), tensors no root reaches are searched for
    uncollectable cycles (_name_cycles)."""
    found = []
    w = _Walk(torch, lambda ptr, path: found.append((ptr, path)))
    main = sys.modules.get("__main__")
    main_globals = _module_dict(main)
    # The script itself is the program wherever it lives: a package's
    # entry point run as `python -m pkg`, or a recipe that a CLI runs as
    # __main__ from site-packages (torchtune's `tune run`). Without it, no
    # frame would be the program's and the library frames it calls, which
    # hold its training loop's locals, would never be walked.
    main_file = _source_file(main) if main is not None else None
    main_file = _realpath(main_file) if main_file else ""

    def kind_of(code):
        kind = _file_kind(code.co_filename, w.generated_root)
        if kind == _LIBRARY and main_file and _realpath(code.co_filename) == main_file:
            return _PROGRAM
        return kind

    frames = []  # the program's live frames with their callers, and the script's own
    called = []  # library frames the program's frames called, still running
    main_frame = None
    for frame in list(sys._current_frames().values()):
        depth = 0
        below_program = []  # library frames newer than every program frame seen so far
        while frame is not None and depth < 64:
            code = frame.f_code
            kind = kind_of(code)
            if kind == _PROGRAM:
                called.extend(below_program)
                below_program = []
                if frame.f_globals is main_globals and code.co_name == "<module>":
                    main_frame = frame
                else:
                    caller = frame.f_back
                    if caller is not None and kind_of(caller.f_code) != _PROGRAM:
                        caller = None
                    frames.append((frame, caller))
            elif kind == _LIBRARY:
                below_program.append(frame)
            frame = frame.f_back
            depth += 1
    if main is not None:
        made = _loop_made(main_frame)
        for k, v in list(main_globals.items()):
            w.push(v, f"__main__.{k}{_loop_bound(v, made.get(k))}")
    for frame, caller in frames:
        made = _loop_made(frame, caller)
        for k, v in _frame_locals(frame):
            w.push(v, f"{frame.f_code.co_name}().{k}{_loop_bound(v, made.get(k))}")
    program_modules = []
    for name, module in list(sys.modules.items()):
        if name == "__main__" or module is None:
            continue
        kind = _module_kind(module, w.generated_root)
        if kind == _PROGRAM:
            program_modules.append(module)
        if kind in (_PROGRAM, _GENERATED):
            for k, v in list(_module_dict(module).items()):
                if kind == _PROGRAM or isinstance(v, torch.Tensor):
                    w.push(v, f"{name}.{k}")
    complete = w.run()
    # Then what only a library call that the program made still holds: a
    # loss window local to captum's sgd_train_linear_model, a list a
    # framework's loop fills. Walked after everything the program's roots
    # reach, so those keep the program's names, and only when those were
    # reached whole; the budget's verdict stays about the program's roots.
    # The harness that called the program (pytest, runpy) is never walked.
    if complete:
        for frame in called:
            made = _loop_made(frame)
            for k, v in _frame_locals(frame):
                w.push(v, f"{frame.f_code.co_name}().{k}{_loop_bound(v, made.get(k))}")
        w.run()
    if cycles:
        _name_cycles(torch, w)
    sites = _StoreSites(_source_files([main, *program_modules]))
    for ptr, path in found:
        lines = sites.for_path(path)
        emit(ptr, "\n".join([path, *lines]) if lines else path)
    emit(0, "" if complete else "cut")
    return w.visited


# A container made anew (or emptied) at each pass of a loop that is running
# holds one pass's worth (an epoch's outputs, kept to score that epoch),
# however many steps the pass has; in a run of one epoch it grows at every
# step and looks like a leak to step_growth. Two shapes: the loop makes it
# (`for epoch ...: preds = []`), or a function the loop calls at each pass
# does (`for epoch ...: train_one_epoch()`, which starts with `preds = []`).
# Only fresh containers count: `buf = self.buffer` binds a name to one that
# lives on.
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_CONTAINER_LITERALS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_CONTAINER_TYPES = frozenset({"list", "dict", "set", "deque", "defaultdict", "OrderedDict", "Counter"})
_loops_parsed: dict = {}  # path -> (mtime, {scope: _ScopeLoops})


def _fresh_container(value) -> bool:
    if isinstance(value, _CONTAINER_LITERALS):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        return name in _CONTAINER_TYPES
    return False


def _assigned(node):
    """(target, value) of each name or attribute an assignment statement
    binds, pairing a tuple's elements (`a, b = [], []`)."""
    pairs = []
    if isinstance(node, ast.Assign):
        pairs = [(t, node.value) for t in node.targets]
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        pairs = [(node.target, node.value)]
    for target, value in pairs:
        if (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
                and len(target.elts) == len(value.elts)):
            yield from zip(target.elts, value.elts)
        else:
            yield target, value


def _fresh_names(node):
    """The names a statement binds to new containers: `x = []`,
    `a, b = [], []`, `x: list = []`, `x = defaultdict(list)`."""
    for target, value in _assigned(node):
        if isinstance(target, ast.Name) and _fresh_container(value):
            yield target.id


def _emptied_names(node):
    """The names a statement empties in place: `x.clear()`, `del x[:]`."""
    if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "clear"
            and isinstance(node.value.func.value, ast.Name)):
        yield node.value.func.value.id
    elif isinstance(node, ast.Delete):
        for t in node.targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                yield t.value.id


class _ScopeLoops:
    """A function's (or the module's) loops, what each loop's body makes
    anew or empties, and the names the function binds to new containers."""

    def __init__(self):
        self.loops = []  # (first, last)
        self.resets = []  # (name, first, last) of the innermost loop around the reset
        self.fresh = set()

    def running_loop(self, line):
        """The first line of the innermost loop around `line`, or None."""
        inner = None
        for first, last in self.loops:
            if first < line <= last and (inner is None or first > inner):
                inner = first
        return inner


def _scope_key(node) -> int:
    """A scope's code object's co_firstlineno (its first decorator's line)."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])


def _analyzed_source(path, cache: dict, analyze):
    """analyze(the module's AST) of a source file, cached in `cache` until
    the file changes; analyze(None) when it cannot be read, parsed or
    analyzed (a RecursionError on a deeply nested file)."""
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        return analyze(None)
    cached = cache.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    try:
        with open(path, "rb") as f:
            result = analyze(ast.parse(f.read(), filename=path))
    except (OSError, SyntaxError, ValueError, RecursionError):
        result = analyze(None)
    cache[path] = (mtime, result)
    return result


def _loops_of(path):
    """{scope: _ScopeLoops} of a source file; scope 0 is the module's code,
    others a function's co_firstlineno."""
    def analyze(tree):
        scopes: dict = {}

        def visit(node, scope, loop):
            here = scopes.setdefault(scope, _ScopeLoops())
            for child in ast.iter_child_nodes(node):
                if isinstance(child, _SCOPES):
                    visit(child, _scope_key(child), None)
                    continue
                fresh = list(_fresh_names(child))
                here.fresh.update(fresh)
                if loop is not None:
                    for name in [*fresh, *_emptied_names(child)]:
                        here.resets.append((name, *loop))
                inner = loop
                if isinstance(child, _LOOPS):
                    inner = (child.lineno, child.end_lineno)
                    here.loops.append(inner)
                visit(child, scope, inner)

        if tree is not None:
            visit(tree, 0, None)
        return scopes

    return _analyzed_source(path, _loops_parsed, analyze)


def _scope_of(frame):
    code = frame.f_code
    scope = 0 if code.co_name == "<module>" else code.co_firstlineno
    return _loops_of(code.co_filename).get(scope)


def _loop_made(frame, caller=None) -> dict:
    """{name: loop_first} of the frame's containers that a running loop
    makes anew at each pass: its own loop, or its caller's (a program
    frame) that calls it at each pass."""
    if frame is None:
        return {}
    here = _scope_of(frame)
    if here is None:
        return {}
    line = frame.f_lineno or 0
    made = {name: first for name, first, last in here.resets if first < line <= last}
    there = _scope_of(caller) if caller is not None else None
    outer = there.running_loop(caller.f_lineno or 0) if there is not None else None
    if outer is not None:
        code = frame.f_code
        arguments = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        for name in here.fresh - set(arguments):
            made.setdefault(name, outer)
    return made


def _loop_bound(value, loop_first) -> str:
    if loop_first is None or not isinstance(value, (list, dict, set, collections.deque)):
        return ""
    return _bound(value, "loop_line", loop_first)


# Methods that training frameworks call at the start of each epoch (or
# stage) on the program's own classes: what the program makes anew there
# (`def on_train_epoch_start(self): self.epoch_preds = []`) holds one
# epoch's worth, however many steps the epoch has. In a run of one epoch
# it grows at every step and is still alive at the end, like a leak.
_EPOCH_START_HOOKS = (
    "on_train_epoch_start",  # Lightning
    "on_epoch_begin",  # Keras callbacks, HF TrainerCallback, skorch
    "on_stage_start",  # SpeechBrain's Brain
    "before_epoch",  # fastai callbacks
    "before_train",
    "before_train_epoch",  # mmengine hooks
)
_attrs_made_parsed: dict = {}  # path -> (mtime, {function's first line: {attribute: line}})


def _own_statements(function):
    """The statements of a function, not of the functions and classes it
    defines."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _self_attrs_made(node):
    """(attribute, line) that a statement sets on `self` to a value made
    there: a container, or what a call returns (`self.stats = Stats()`)."""
    for target, value in _assigned(node):
        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                and target.value.id == "self" and (_fresh_container(value) or isinstance(value, ast.Call))):
            yield target.attr, node.lineno


def _attrs_made_of(path):
    """{each function of a source file by its co_firstlineno: {attribute it
    makes anew on self: line}}."""
    def analyze(tree):
        functions: dict = {}
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                made: dict = {}
                for statement in _own_statements(node):
                    for attr, line in _self_attrs_made(statement):
                        made.setdefault(attr, line)
                if made:
                    functions[_scope_key(node)] = made
        return functions

    return _analyzed_source(path, _attrs_made_parsed, analyze)


def _epoch_hook_made(cls, generated_root) -> dict:
    """{attribute: line} that an epoch-start hook the program defines on
    class cls (or a base) makes anew at each epoch."""
    made: dict = {}
    for c in getattr(cls, "__mro__", ()):
        namespace = getattr(c, "__dict__", {})
        for hook in _EPOCH_START_HOOKS:
            code = getattr(namespace.get(hook), "__code__", None)
            if code is None or _file_kind(code.co_filename, generated_root) != _PROGRAM:
                continue
            for attr, line in _attrs_made_of(code.co_filename).get(code.co_firstlineno, {}).items():
                made.setdefault(attr, line)
    return made


def _epoch_hook_bound(value, line) -> str:
    if line is None or isinstance(value, _SKIP_TYPES):
        return ""
    return _bound(value, "epoch_hook_line", line)


# Where a program keeps memory: a call of one of these methods on a
# container, a subscript store, an accumulation (`total += loss`,
# `total = total + loss`), or a caching decorator.
_STORE_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault",
                            "appendleft", "extendleft", "put", "put_nowait", "__setitem__"})
_MAX_SITES = 3
# Path components after which the holder is no longer a program name: an
# autograd graph, an exception's traceback and its dead frames, a grad.
_PATH_CUT = re.compile(r"\.(grad_fn|grad|__traceback__|__context__|tb_frame|tb_next)\b")
_PATH_KEY = re.compile(r"\[[^\]]*\]")  # a container's key is not a name
_PATH_TYPE = re.compile(r"<[^>]*>")  # nor a type or its bound (`<deque maxlen=100>`)
_PATH_NAME = re.compile(r"(?<![<\w])([A-Za-z_]\w*)(?!\w|\(\)|>)")
_PATH_FRAME = re.compile(r"^(\w+)\(\)\.$")  # what precedes a live frame's local: `main().`


# Calls whose result is a Python scalar or string: a line that stores one
# (`history.append(loss.item())`, the fixed twin of a leak) keeps no tensor.
_SCALAR_METHODS = frozenset({"item", "tolist", "numpy"})
_SCALAR_BUILTINS = frozenset({"float", "int", "str", "bool", "len", "repr", "round"})


def _scalar(node):
    if isinstance(node, ast.Constant):
        return True
    # A record of numbers: `history.append({"loss": loss.item(), "step": i})`.
    if isinstance(node, ast.Dict):
        return all(_scalar(v) for v in node.values)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_scalar(e) for e in node.elts)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _SCALAR_METHODS:
            return True
        if isinstance(func, ast.Name) and func.id in _SCALAR_BUILTINS:
            return True
        # sum(l.item() for l in losses)
        if (isinstance(func, ast.Name) and func.id in ("sum", "max", "min") and node.args
                and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp))
                and _scalar(node.args[0].elt)):
            return True
    return False


def _terminal_name(node):
    """The name an expression stores into: `self.cache[k]` -> cache."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class _FileStores(ast.NodeVisitor):
    """name -> the stores of one source file into a container or an
    accumulator of that name: (line, the functions it is in, outermost
    first, whether the name is a bare variable there rather than an
    attribute)."""

    def __init__(self):
        self.stores = collections.defaultdict(set)
        self.functions = ()

    def add(self, name, node, target):
        while isinstance(target, ast.Subscript):
            target = target.value
        if name:
            self.stores[name].add((node.lineno, self.functions, isinstance(target, ast.Name)))

    def visit_Call(self, node):
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr in _STORE_METHODS
                and not (node.args and all(_scalar(a) for a in node.args))):
            self.add(_terminal_name(func.value), node, func.value)
        self.generic_visit(node)

    def visit_Assign(self, node):
        if _scalar(node.value):
            self.generic_visit(node)
            return
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                self.add(_terminal_name(target.value), node, target)
            elif isinstance(target, (ast.Name, ast.Attribute)):
                name = _terminal_name(target)
                # `total = total + loss`, `seen = torch.cat([seen, x])`
                if any(_terminal_name(n) == name for n in ast.walk(node.value)
                       if isinstance(n, (ast.Name, ast.Attribute))):
                    self.add(name, node, target)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        target = node.target
        if not _scalar(node.value):
            self.add(_terminal_name(target.value if isinstance(target, ast.Subscript) else target),
                     node, target)
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        for decorator in node.decorator_list:
            if "cache" in ast.unparse(decorator).lower():
                self.add(node.name, decorator, None)
        outer = self.functions
        self.functions = outer + (node.name,)
        self.generic_visit(node)
        self.functions = outer

    visit_AsyncFunctionDef = visit_FunctionDef


_stores_parsed: dict = {}  # file -> (mtime, {name: lines}), across walks


def _stores_of(path):
    def analyze(tree):
        if tree is None:
            return {}
        visitor = _FileStores()
        visitor.visit(tree)
        return {k: sorted(v, key=lambda store: store[0]) for k, v in visitor.stores.items()}

    return _analyzed_source(path, _stores_parsed, analyze)


def _source_file(module):
    # Python drops __main__.__file__ once the script has run, before the
    # atexit walk: its loader still knows the path.
    namespace = _module_dict(module)
    path = namespace.get("__file__") or getattr(namespace.get("__loader__"), "path", None)
    return path if isinstance(path, str) and os.path.isabs(path) and path.endswith(".py") else None


def _source_files(modules):
    return sorted({_realpath(path) for path in map(_source_file, modules) if path})


class _StoreSites:
    """The program lines that store into the container a holder path
    names: its deepest program name (`main().trainer.kept_logits[3]` ->
    kept_logits, `main().total.grad_fn<...>` -> total) that some program
    line stores into, searched deepest first."""

    def __init__(self, files):
        self.files = files
        self.by_name: dict = {}

    def lines_of(self, name, local_of=None):
        """The lines that store into `name`; with local_of, only those
        where it is a variable of that function or of a function nested in
        it, a closure (`main().h`: main's h, not another function's)."""
        lines = self.by_name.get((name, local_of))
        if lines is None:
            lines = [f"{path}:{line}" for path in self.files
                     for line, functions, bare in _stores_of(path).get(name, ())
                     if local_of is None or (bare and local_of in functions)]
            self.by_name[(name, local_of)] = lines
        return lines

    def for_path(self, path):
        cut = _PATH_CUT.search(path)
        head = _PATH_TYPE.sub("", _PATH_KEY.sub("[]", path[:cut.start()] if cut else path))
        for match in reversed(list(_PATH_NAME.finditer(head))):
            name = match.group(1)
            if name == "__main__" or name.startswith("_saved_"):
                continue
            frame = _PATH_FRAME.search(head, 0, match.start())
            lines = self.lines_of(name, frame.group(1) if frame else None)
            if lines:
                return lines[:_MAX_SITES]
        return []


_installed = False


_OPTIMIZER_MODULE = "torch.optim.optimizer"


# The recorder's library that install() was given: the walks write through it.
_installed_lib = [None]


def _install_after_import(module) -> None:
    install(_installed_lib[0])


def _holder_writer(lib):
    """emit(ptr, path) for a walk: each path written to the trace."""
    return lambda ptr, path: lib.memlife_holder(ptr, path.encode("utf-8", "replace"))


def _enabled() -> bool:
    return os.environ.get("MEMLIFE_HOLDERS", "1") != "0"


def _walk_here(lib, cycles) -> None:
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        walk(torch, _holder_writer(lib), cycles)
    except Exception:
        # Ended as a walk its budget cut short: the analyzer then concludes
        # nothing from what it did not reach.
        lib.memlife_holder(None, b"cut")


def walk_into(lib, cycles=False) -> None:
    """One walk now, its paths written to the trace (memlife_holder); does
    nothing when holders are off or torch is not loaded, and never raises
    (the program's behaviour must not change).

    The walk runs on a thread of its own while the caller waits: a tracer
    the program set on its threads (torch.profiler's with_stack) would
    otherwise record every call of the walk as the program's. One walk
    under a with_stack profile made the profile 165 MB instead of 0.4 MB
    and key_averages() 20 s instead of 0.03 s. At interpreter shutdown,
    where no thread may start, it walks on the caller's thread."""
    if not _enabled():
        return
    # _thread rather than threading: the program's profile then shows two
    # calls (start, acquire) instead of threading's forty, and the walker
    # never appears in threading.enumerate() (a program or test may count
    # its threads).
    done = _thread.allocate_lock()
    done.acquire()

    def walker():
        try:
            _walk_here(lib, cycles)
        finally:
            done.release()

    try:
        _thread.start_new_thread(walker, ())
    except RuntimeError:
        done.release()
        _walk_here(lib, cycles)
        return
    done.acquire()


# MEMLIFE_HOLDER_EXIT_COLLECT_BEGIN and _END of include/memlife/memlife.h:
# the marks around the exit walk's collection.
EXIT_COLLECT_BEGIN = "memlife.exit gc.collect begin"
EXIT_COLLECT_END = "memlife.exit gc.collect end"


def _walk_at_exit(lib) -> None:
    """The exit walk: after a collection (the interpreter's own comes at
    finalization anyway), so that a tensor left unreached on a cycle is one
    the collector cannot free: memory nothing can reach or free any more.
    Marks around the collection tell the analyzer what it freed: garbage the
    program's own collector had not freed yet."""
    if not _enabled():
        return
    lib.memlife_mark(EXIT_COLLECT_BEGIN.encode())
    collect()
    lib.memlife_mark(EXIT_COLLECT_END.encode())
    walk_into(lib, cycles=True)


MAX_COLLECTIONS = 64


def collect() -> None:
    """gc.collect() until a collection finds nothing (at most
    MAX_COLLECTIONS). One is not enough: a graph node shows the collector
    the hooks it keeps only while nothing else in C++ keeps the node
    (THPCppFunction_traverse, pytorch/pytorch#102174), so a graph kept by
    cycles through its hooks is freed one layer per collection
    (torch.distributed's MemTracker leaves such graphs: a 2-layer
    Transformer's took 16 collections). Memory a later collection frees is
    no leak."""
    for _ in range(MAX_COLLECTIONS):
        if gc.collect() == 0:
            return


# Optimizer steps since the walks' schedule (1, 2, 3, 4, 6, 8, 12, ...)
# started.
_walk_schedule = [0]


def restart_walk_schedule() -> None:
    """Walks again at the 1st, 2nd, 3rd, ... step from now: a
    memlife.record() block late in a process gets its own early walks."""
    _walk_schedule[0] = 0


def walks_after_step(n: int) -> bool:
    """Whether the schedule walks after the n-th step: powers of two and
    three times them (1, 2, 3, 4, 6, 8, 12, 16, 24, ...). Log-many walks,
    and a growth over the last third of a run (a second fit after a first,
    fastai's fine_tune after lr_find) still has one inside it to name its
    holder, where powers of two alone leave the last half unwalked."""
    m = n // 3 if n % 3 == 0 else n
    return n > 0 and m & (m - 1) == 0


def stepped(lib) -> None:
    """A step ended (an optimizer step, or a backward pass in a program
    that has none): walks at the steps walks_after_step picks."""
    _walk_schedule[0] += 1
    if walks_after_step(_walk_schedule[0]):
        walk_into(lib)


def _dataset_length(torch, obj) -> int:
    """len(obj) for a map-style torch Dataset, else 0."""
    if not isinstance(obj, torch.utils.data.Dataset) or not hasattr(type(obj), "__len__"):
        return 0
    try:
        length = len(obj)
    except Exception:
        return 0
    return length if isinstance(length, int) and length > 0 else 0


def _keyed_by_sample(value, samples) -> bool:
    """Whether value is a dict whose keys are all sample indices of a
    dataset of `samples` samples (so it holds at most that many entries)."""
    if not isinstance(value, dict) or not value or len(value) > samples:
        return False
    return all(type(k) is int and 0 <= k < samples for k in list(value))


class _ByIdentity:
    """A weak map keyed by object identity, for the metrics the walk notes:
    a torchmetrics Metric hashes its current state (Metric.__hash__), so a
    WeakKeyDictionary loses it at its next update."""

    def __init__(self):
        self._entries = {}  # id -> (weak reference, value)

    def get(self, obj, default=None):
        entry = self._entries.get(id(obj))
        return entry[1] if entry is not None and entry[0]() is obj else default

    def __contains__(self, obj):
        entry = self._entries.get(id(obj))
        return entry is not None and entry[0]() is obj

    def __setitem__(self, obj, value):
        key = id(obj)
        entries = self._entries

        def forget(ref):  # the object died: its entry goes, unless its id is a newer object's
            if entries.get(key, (None,))[0] is ref:
                del entries[key]

        entries[key] = (weakref.ref(obj, forget), value)

    def pop(self, obj, default=None):
        value = self.get(obj, default)
        if obj in self:
            del self._entries[id(obj)]
        return value


# pytorch-ignite metrics attached to an engine: metric -> a weak reference
# to the engine (Metric.attach is wrapped once ignite.metrics is imported).
_ignite_engines = _ByIdentity()


def _note_ignite_attaches(metrics_module) -> None:
    metric_class = getattr(metrics_module, "Metric", None)
    original = getattr(metric_class, "attach", None)
    if original is None or getattr(original, "_memlife_wrapped", False):
        return

    @functools.wraps(original)
    def attach(self, engine, *args, **kwargs):
        result = original(self, engine, *args, **kwargs)
        try:
            _ignite_engines[self] = weakref.ref(engine)
        except TypeError:  # not weakly referable
            pass
        return result

    attach._memlife_wrapped = True
    metric_class.attach = attach


# Metrics of torchmetrics and torcheval: metric -> its update count at its
# first compute() since its last reset(), and the path the latest walk
# reached it by. A list-state metric (AUROC, average precision) keeps every
# update until reset() by design; one computed only after its last update
# holds what the program chose to score at once (an epoch's, a run's),
# where one computed and then updated again without a reset grows on
# (torchmetrics#1949). torchmetrics counts its updates itself
# (Metric._wrap_compute and Metric.reset are wrapped once it is imported);
# torcheval keeps no count, so its metrics' update, compute and reset are
# wrapped, class by class (_note_torcheval_calls).
_metric_first_computes = _ByIdentity()
_metric_paths = _ByIdentity()
_torcheval_updates = _ByIdentity()  # metric -> its updates since its last reset
# Metric.forward scores the batch alone: it resets, updates and computes
# inside these, then restores the accumulated state. Those calls are not
# the program's.
_METRIC_FORWARD_HELPERS = frozenset({"_forward_full_state_update", "_forward_reduce_state_update"})
# Each library's metric base class, and the attribute where its metrics
# keep their states' names and defaults.
_METRIC_BASES = (("torchmetrics", "_defaults"), ("torcheval.metrics.metric", "_state_name_to_default"))


def _metric_defaults_attribute(obj):
    """The attribute naming `obj`'s states when obj is a torchmetrics or a
    torcheval metric, else None."""
    for module_name, defaults in _METRIC_BASES:
        module = sys.modules.get(module_name)
        if module is not None and isinstance(obj, getattr(module, "Metric", ())):
            return defaults
    return None


def _is_metric(obj) -> bool:
    return _metric_defaults_attribute(obj) is not None


def _updates_since_reset(metric) -> int:
    updates = getattr(metric, "_update_count", None)
    if updates is None:
        updates = _torcheval_updates.get(metric, 0)
    return updates if isinstance(updates, int) and updates > 0 else 0


def _computed_bound(metric) -> str:
    """`<BinaryAUROC computed_after_updates=40>` when the metric's first
    compute() since its last reset() came after all of its updates."""
    updates = _updates_since_reset(metric)
    if not updates or _metric_first_computes.get(metric) != updates:
        return ""
    return _bound(metric, "computed_after_updates", updates)


def _holds_a_list_state(metric) -> bool:
    defaults = getattr(metric, _metric_defaults_attribute(metric) or "_defaults", None)
    return isinstance(defaults, dict) and any(
        isinstance(getattr(metric, name, None), list) and getattr(metric, name) for name in defaults)


def _inside_metric_forward() -> bool:
    """Whether the caller of memlife's wrapper (past memlife's own frames:
    the reset marks wrap reset too) is Metric.forward's batch scoring."""
    frame = sys._getframe(2)
    while frame is not None and _file_kind(frame.f_code.co_filename, "") == _MEMLIFE:
        frame = frame.f_back
    return frame is not None and frame.f_code.co_name in _METRIC_FORWARD_HELPERS


def _first_compute(metric) -> None:
    """The program computes `metric`: at its first compute since the last
    reset, its state is named with the bound, from the path the latest walk
    reached it by. Named now, not at the next walk: a metric local to a
    function that returns after scoring is gone by then."""
    updates = _updates_since_reset(metric)
    if not updates or metric in _metric_first_computes:
        return
    _metric_first_computes[metric] = updates
    lib, torch = _installed_lib[0], sys.modules.get("torch")
    if lib is None or torch is None or not _enabled() or not _holds_a_list_state(metric):
        return
    try:
        w = _Walk(torch, _holder_writer(lib))
        w.push(metric, _metric_paths.get(metric) or type(metric).__name__)
        w.run()
    except Exception:  # the program's compute goes on whatever happens here
        pass


def _note_metric_computes(torchmetrics) -> None:
    metric_class = getattr(torchmetrics, "Metric", None)
    wrap_compute = getattr(metric_class, "_wrap_compute", None)
    reset = getattr(metric_class, "reset", None)
    if wrap_compute is None or reset is None or getattr(wrap_compute, "_memlife_wrapped", False):
        return

    @functools.wraps(wrap_compute)
    def wrap_compute_noted(self, compute):
        wrapped = wrap_compute(self, compute)

        @functools.wraps(wrapped)
        def compute_noted(*args, **kwargs):
            if not _inside_metric_forward():
                _first_compute(self)
            return wrapped(*args, **kwargs)

        return compute_noted

    @functools.wraps(reset)
    def reset_noted(self, *args, **kwargs):
        if not _inside_metric_forward():
            _metric_first_computes.pop(self, None)
        return reset(self, *args, **kwargs)

    wrap_compute_noted._memlife_wrapped = True
    metric_class._wrap_compute = wrap_compute_noted
    metric_class.reset = reset_noted


def _torcheval_update_counted(metric) -> None:
    _torcheval_updates[metric] = _torcheval_updates.get(metric, 0) + 1


def _torcheval_reset(metric) -> None:
    _torcheval_updates.pop(metric, None)
    _metric_first_computes.pop(metric, None)


# What each torcheval metric call notes, before (compute) or after (update,
# reset) the metric's own method runs.
_TORCHEVAL_NOTES = {"update": (None, _torcheval_update_counted),
                    "compute": (_first_compute, None),
                    "reset": (None, _torcheval_reset)}


def _torcheval_noted(name, method):
    before, after = _TORCHEVAL_NOTES[name]

    @functools.wraps(method)
    def noted(self, *args, **kwargs):
        # Only the call the program made is noted: a subclass's update that
        # calls super().update() runs this class's wrapper inside its own.
        outermost = getattr(type(self), name, None) is noted
        if outermost and before is not None:
            before(self)
        result = method(self, *args, **kwargs)
        if outermost and after is not None:
            after(self)
        return result

    noted._memlife_wrapped = True
    return noted


def _not_yet_wrapped(function) -> bool:
    """Whether `function` is a plain function (no staticmethod or other
    descriptor) that memlife has not wrapped already."""
    return isinstance(function, types.FunctionType) and not getattr(function, "_memlife_wrapped", False)


def _note_torcheval_class(cls) -> None:
    for name in _TORCHEVAL_NOTES:
        method = cls.__dict__.get(name)
        # An abstract one is the base class's placeholder.
        if _not_yet_wrapped(method) and not getattr(method, "__isabstractmethod__", False):
            setattr(cls, name, _torcheval_noted(name, method))


def _note_torcheval_calls(metric_module) -> None:
    """Wraps update, compute and reset where each torcheval metric class
    defines them: the classes defined so far, and every later one through
    Metric.__init_subclass__."""
    base = getattr(metric_module, "Metric", None)
    if base is None or "_memlife_noted" in base.__dict__:
        return
    own = base.__dict__.get("__init_subclass__")

    def init_subclass(cls, **kwargs):
        if own is not None:
            own.__get__(None, cls)(**kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        _note_torcheval_class(cls)

    base.__init_subclass__ = classmethod(init_subclass)
    base._memlife_noted = True
    pending = [base]
    while pending:
        cls = pending.pop()
        _note_torcheval_class(cls)
        pending.extend(cls.__subclasses__())


# torcheval's toolkit scores a metric of distributed training by gathering
# every rank's states into a merged copy and computing that copy; the
# metric itself is never computed. Syncing a metric to score it is its
# compute.
_TORCHEVAL_SYNCS = ("sync_and_compute", "sync_and_compute_collection", "get_synced_metric",
                    "get_synced_metric_collection")


def _torcheval_synced(sync):
    @functools.wraps(sync)
    def synced(metrics, *args, **kwargs):
        for metric in metrics.values() if isinstance(metrics, dict) else [metrics]:
            _first_compute(metric)
        return sync(metrics, *args, **kwargs)

    synced._memlife_wrapped = True
    return synced


def _note_torcheval_syncs(toolkit) -> None:
    for name in _TORCHEVAL_SYNCS:
        sync = getattr(toolkit, name, None)
        if _not_yet_wrapped(sync):
            setattr(toolkit, name, _torcheval_synced(sync))


def _fastai_epoch_length(obj) -> int:
    """For a fastai Learner with its Recorder, the length of its training
    epoch: the Recorder resets the Learner's metrics at each epoch's start
    (before_train, before_validate), and an AccumMetric keeps the epoch's
    predictions and targets until then. 0 for any other object."""
    learner = sys.modules.get("fastai.learner")
    if learner is None or not isinstance(obj, getattr(learner, "Learner", ())):
        return 0
    attrs = getattr(obj, "__dict__", {})
    if not isinstance(attrs.get("recorder"), getattr(learner, "Recorder", ())):
        return 0
    try:
        length = len(attrs["dls"].train)
    except Exception:  # no data loaders yet, or one without a length
        return 0
    return length if isinstance(length, int) and length > 0 else 0


def _ignite_epoch_length(obj) -> int:
    """The epoch length of the engine that resets ignite metric `obj` at
    each epoch's start (Metric.attach registers its `started`, a reset, on
    EPOCH_STARTED); 0 when obj is no such metric."""
    metrics_module = sys.modules.get("ignite.metrics")
    if metrics_module is None or not isinstance(obj, metrics_module.Metric):
        return 0
    engine_ref = _ignite_engines.get(obj)
    engine = engine_ref() if engine_ref is not None else None
    if engine is None:
        return 0
    events = sys.modules["ignite.engine"].Events
    if not engine.has_event_handler(obj.started, events.EPOCH_STARTED):
        return 0
    epoch_length = getattr(engine.state, "epoch_length", None)
    return epoch_length if isinstance(epoch_length, int) and epoch_length > 0 else 0


def install(lib) -> bool:
    """Registers the step and exit walks once torch.optim is loaded; True
    when they are in place or will be."""
    global _installed
    if _installed:
        return True
    if not _enabled():
        return False
    _installed_lib[0] = lib
    after_import("ignite.metrics", _note_ignite_attaches)
    after_import("torchmetrics", _note_metric_computes)
    after_import("torcheval.metrics.metric", _note_torcheval_calls)
    after_import("torcheval.metrics.toolkit", _note_torcheval_syncs)
    module = sys.modules.get(_OPTIMIZER_MODULE)
    register = getattr(module, "register_optimizer_step_post_hook", None)
    if register is None:
        # While torch is still importing, importing torch.optim would break it.
        if module is None:
            after_import(_OPTIMIZER_MODULE, _install_after_import)
        return True
    import atexit

    def after_step(optimizer, args, kwargs):
        # Only the outermost optimizer step counts: an Optimizer whose
        # step() steps other optimizers (torchtitan's OptimizersContainer)
        # is one step, as the recorder's step marks count it. torch calls
        # this from its step wrapper, whose code every step shares. Inline:
        # a program's profile (with_stack) sees each call made here.
        wrapper = sys._getframe(1)
        frame = wrapper.f_back
        while frame is not None:
            if frame.f_code is wrapper.f_code:
                return
            frame = frame.f_back
        stepped(lib)

    register(after_step)
    atexit.register(_walk_at_exit, lib)
    _installed = True
    return True
