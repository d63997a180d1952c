"""Names the Python references that hold tensor memory.

At a few optimizer steps (1, 2, 4, 8, ...) and at exit, a breadth-first walk
from the program's roots (``__main__``'s globals, the locals of every live
frame, the program's own modules) records, for each tensor storage it
reaches, the first path that reaches it (``__main__.history[3]``,
``main().cache['k'].grad_fn<MseLossBackward0>._saved_self``) through the C
API ``memlife_holder``. The analyzer attaches these paths to the findings
whose memory they reach. Autograd graphs are walked through their nodes'
saved tensors, exceptions through their tracebacks' frames. The walk is
bounded in objects and time, reads only, and never lets an exception out.
"""

from __future__ import annotations

import collections
import gc
import os
import sys
import sysconfig
import time
import types

MAX_OBJECTS = 200_000
MAX_SECONDS = 1.0
MAX_GRAPH_NODES = 4096

_LIBRARY_ROOTS = tuple(
    os.path.realpath(p)
    for p in {sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
              sysconfig.get_paths().get("platlib"), os.path.dirname(os.path.abspath(__file__))}
    if p
)
_SKIP_TYPES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
               types.MethodType, types.CodeType, str, bytes, bytearray, int, float, complex,
               bool, type(None), range, memoryview)


def _is_program_module(module) -> bool:
    path = getattr(module, "__file__", None)
    if not path:
        return False
    path = os.path.realpath(path)
    return not path.startswith(_LIBRARY_ROOTS) and "-packages" + os.sep not in path


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
        self.deadline = time.monotonic() + MAX_SECONDS
        self.visited = 0
        self._keep = []  # objects whose ids are in seen_ids stay alive meanwhile

    def push(self, obj, path):
        if obj is None:
            return
        if isinstance(obj, _SKIP_TYPES) and not self.program_class(obj):
            return
        if id(obj) in self.seen_ids:
            return
        self.seen_ids.add(id(obj))
        self._keep.append(obj)
        self.queue.append((obj, path))

    @staticmethod
    def program_class(obj) -> bool:
        # The program's own classes: their attributes (a class-level cache,
        # an lru_cache on a method) can hold tensors.
        if not isinstance(obj, type):
            return False
        module = sys.modules.get(getattr(obj, "__module__", "") or "")
        return module is not None and (module.__name__ == "__main__" or _is_program_module(module))

    def run(self):
        while self.queue and self.visited < MAX_OBJECTS:
            if (self.visited & 1023) == 0 and time.monotonic() > self.deadline:
                break
            obj, path = self.queue.popleft()
            self.visited += 1
            try:
                self.visit(obj, path)
            except Exception:  # a container changed under us, a property raised
                pass

    def tensor(self, t, path):
        if not self.storage(t, path):
            return
        # .grad of a non-leaf tensor warns: leaves only.
        grad = t.grad if t.is_leaf else None
        if grad is not None:
            self.push(grad, path + ".grad")
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

    def storage(self, t, path) -> bool:
        """Records the path of the tensor's storage when it is the first to
        reach it; False when the tensor has no storage to name."""
        if type(t) not in (self.torch.Tensor, self.torch.nn.Parameter):
            return False  # a subclass may dispatch ops (see visit)
        try:
            ptr = t.untyped_storage().data_ptr()
        except Exception:
            return False
        if ptr and ptr not in self.seen_storages:
            self.seen_storages.add(ptr)
            self.emit(ptr, path)
        return True

    def visit(self, obj, path):
        torch = self.torch
        if isinstance(obj, torch.Tensor):
            # Plain tensors and parameters only: a subclass (DTensor, a
            # FakeTensor) may dispatch ops when its storage or grad is read,
            # and the walk must not run any.
            if type(obj) in (torch.Tensor, torch.nn.Parameter):
                self.tensor(obj, path)
            return
        if isinstance(obj, dict):
            for k, v in list(obj.items()):
                self.push(v, f"{path}[{_key_text(k)}]")
                if isinstance(k, torch.Tensor):
                    self.push(k, f"{path}.keys()")
            return
        if isinstance(obj, (list, tuple, collections.deque)):
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
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            for k, v in list(attrs.items()):
                if k in ("_parameters", "_buffers", "_modules") and isinstance(obj, torch.nn.Module):
                    continue
                self.push(v, f"{path}.{k}")
        # What a C type holds (an lru_cache's cache, a cell): its referents.
        # For a plain object these are its __dict__ (already walked) and
        # its class.
        for v in gc.get_referents(obj):
            self.push(v, f"{path}.<{type(obj).__name__}>")

    def frame(self, frame, path):
        for k, v in _frame_locals(frame):
            self.push(v, f"{path}.{k}")


def walk(torch, emit) -> int:
    """One walk; returns how many objects it visited."""
    w = _Walk(torch, emit)
    main = sys.modules.get("__main__")
    if main is not None:
        for k, v in list(vars(main).items()):
            w.push(v, f"__main__.{k}")
    main_globals = getattr(main, "__dict__", None)
    for frame in list(sys._current_frames().values()):
        depth = 0
        while frame is not None and depth < 64:
            code = frame.f_code
            program = not os.path.realpath(code.co_filename).startswith(_LIBRARY_ROOTS)
            if program and not (frame.f_globals is main_globals and code.co_name == "<module>"):
                for k, v in _frame_locals(frame):
                    w.push(v, f"{code.co_name}().{k}")
            frame = frame.f_back
            depth += 1
    for name, module in list(sys.modules.items()):
        if name != "__main__" and module is not None and _is_program_module(module):
            for k, v in list(vars(module).items()):
                w.push(v, f"{name}.{k}")
    w.run()
    return w.visited


_installed = False


_OPTIMIZER_MODULE = "torch.optim.optimizer"


class _AfterOptimizerImport:
    """Meta-path finder that installs the walk once torch.optim.optimizer
    has been imported: install_hooks can run while torch itself is still
    being imported, and importing torch.optim then would break torch."""

    def __init__(self, lib):
        self.lib = lib

    def find_spec(self, name, path, target=None):
        if name != _OPTIMIZER_MODULE:
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        lib = self.lib

        def exec_then_install(module):
            exec_module(module)
            try:
                install(lib)
            except Exception:
                pass

        spec.loader.exec_module = exec_then_install
        return spec


def install(lib) -> bool:
    """Registers the step and exit walks once torch.optim is loaded; True
    when they are in place or will be."""
    global _installed
    if _installed:
        return True
    if os.environ.get("MEMLIFE_HOLDERS", "1") == "0":
        return False
    module = sys.modules.get(_OPTIMIZER_MODULE)
    register = getattr(module, "register_optimizer_step_post_hook", None)
    if register is None:
        if not any(isinstance(f, _AfterOptimizerImport) for f in sys.meta_path):
            sys.meta_path.insert(0, _AfterOptimizerImport(lib))
        return True
    import atexit

    torch = sys.modules["torch"]

    def emit(ptr, path):
        lib.memlife_holder(ptr, path.encode("utf-8", "replace"))

    steps = [0]

    def after_step(optimizer, args, kwargs):
        steps[0] += 1
        n = steps[0]
        if n & (n - 1) == 0:  # 1, 2, 4, 8, ...: log-many walks
            try:
                walk(torch, emit)
            except Exception:
                pass

    def at_exit():
        try:
            walk(torch, emit)
        except Exception:
            pass

    register(after_step)
    atexit.register(at_exit)
    _installed = True
    return True
