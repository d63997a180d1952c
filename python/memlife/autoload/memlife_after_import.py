"""Runs a function once a module has been imported.

The autoload installs memlife's hooks once torch.distributed is loaded, and
torch's own import loads it before torch.autograd and torch.optim: a hook on
those waits for them, since importing them from there would break torch's
import. In this folder, so that the autoload's sitecustomize imports it as a
top-level module: importing the memlife package at every Python start would
cost 25 ms (the package imports it as memlife.autoload.memlife_after_import).
"""

import importlib.abc
import importlib.util
import sys


class _AfterImport(importlib.abc.MetaPathFinder):
    def __init__(self, name):
        self.name = name
        self.then = []  # what runs after the import, in the order asked

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module
        then = self.then

        def exec_then_run(module):
            exec_module(module)
            for run in then:
                try:
                    run(module)
                except Exception:  # a hook never breaks the program's import
                    pass

        spec.loader.exec_module = exec_then_run
        return spec


def after_import(name, then) -> None:
    """Calls then(module) once module `name` has been imported: now when it
    was, else right after its import (once for each distinct `then`,
    however often it is asked)."""
    module = sys.modules.get(name)
    if module is not None:
        then(module)
        return
    finder = next((f for f in sys.meta_path if isinstance(f, _AfterImport) and f.name == name), None)
    if finder is None:
        finder = _AfterImport(name)
        sys.meta_path.insert(0, finder)
    if then not in finder.then:
        finder.then.append(then)
