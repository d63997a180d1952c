"""Runs a function once a module has been imported.

memlife's hooks can be installed while torch itself is still being imported
(the autoload installs them once torch.distributed is loaded, which torch's
own import does before torch.autograd and torch.optim): importing another
part of torch from there would break torch's import. A hook on such a part
waits for it instead.
"""

import importlib.abc
import importlib.util
import sys


class _AfterImport(importlib.abc.MetaPathFinder):
    def __init__(self, name, then):
        self.name = name
        self.then = then

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
            try:
                then(module)
            except Exception:  # a hook never breaks the program's import
                pass

        spec.loader.exec_module = exec_then_run
        return spec


def after_import(name, then) -> None:
    """Calls then(module) once module `name` has been imported: now when it
    was, else right after its import (once, however often this is asked)."""
    module = sys.modules.get(name)
    if module is not None:
        then(module)
        return
    if not any(isinstance(f, _AfterImport) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, then))
