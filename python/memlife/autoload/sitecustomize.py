"""Installs memlife's Python hooks once the program imports torch.distributed.

``memlife run`` prepends this folder to PYTHONPATH. It chains to any other
sitecustomize on the path, costs one meta-path lookup per import until
torch.distributed is loaded, and does nothing outside ``memlife run``.
"""

import os
import sys


def _install_hooks(module):
    import memlife

    memlife.install_hooks()


def _chain_to_next_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    # The import system looks this module up in sys.modules once it has
    # run: put it back after the next one ran, or site.py reports an error.
    me = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        try:
            import sitecustomize  # noqa: F401
        except ImportError:
            pass
    finally:
        sys.path[:] = saved
        if me is not None:
            sys.modules["sitecustomize"] = me


if os.environ.get("MEMLIFE_OUTPUT_DIR"):
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if package_root not in sys.path:
        sys.path.append(package_root)
    from memlife_after_import import after_import  # this folder's, without the package

    after_import("torch.distributed", _install_hooks)
_chain_to_next_sitecustomize()
