"""Whether a program updates its parameters by hand between backward passes.

A loop without an optimizer (`p -= lr * p.grad` under no_grad, or
`p.data.add_(p.grad, alpha=-lr)`) has no optimizer step to mark its steps.
The end of each backward pass is its step only when the parameters
(`nn.Parameter`s) that pass reached changed before the next one: a program
that runs backward passes without training (Grad-CAM or saliency maps over
a dataset, collected on purpose) has no steps, as before, and no growth to
report.

The probe is small: a few leaves of the pass's graph, nearest its outputs
first (the last layer's parameters, which every training step changes),
each with its version counter (bumped by in-place writes and `.data =`),
and the recorder's watch of their storages: `p.data.add_` writes through a
tensor with a version counter of its own, and the torch plugin sees that
op write the parameter's storage (memlife_watch_storages), on any device.
On the CPU the first element is compared as well, read without an op, for
writes no torch op makes (through a NumPy view); on a GPU reading it would
synchronize the device.
"""

import collections
import ctypes
import sys
import weakref

MAX_LEAVES = 4
MAX_NODES = 4096


def _leaves(outputs):
    """Up to MAX_LEAVES parameters (nn.Parameter leaves) of the graph behind
    `outputs` (tensors or GradientEdges), breadth first. Other leaves are
    not a model's weights: an input whose saliency is asked for, a latent
    code or an adversarial perturbation fitted per sample (a loop over
    samples, not training steps), a tracer's fake tensor."""
    parameter = sys.modules["torch"].nn.Parameter
    queue = collections.deque()
    for out in outputs if isinstance(outputs, (list, tuple)) else (outputs,):
        node = getattr(out, "grad_fn", None) or getattr(out, "node", None)
        if node is not None:
            queue.append(node)
    # Keeps the nodes it has seen: a C++ node's Python wrapper lives only
    # while referenced, and a new one may take a dead one's id (the walk then
    # skipped nodes it had never visited: on Python 3.12 it found no leaf).
    seen = {}
    leaves = []
    visited = 0
    while queue and len(leaves) < MAX_LEAVES and visited < MAX_NODES:
        node = queue.popleft()
        visited += 1
        leaf = getattr(node, "variable", None)  # an AccumulateGrad node's
        if leaf is not None:
            if isinstance(leaf, parameter):
                leaves.append(leaf)
            continue
        for child, _ in getattr(node, "next_functions", ()):
            if child is not None and id(child) not in seen:
                seen[id(child)] = child
                queue.append(child)
    return leaves


def _state(leaf, storages=None):
    """The leaf's version counter and, on the CPU, its first element's
    bytes; appends its storage's address to `storages` when given."""
    try:
        version = leaf._version
    except Exception:  # not a plain tensor: nothing to compare
        return None
    sample = None
    try:
        storage = leaf.untyped_storage()
        if storages is not None:
            storages.append(storage._cdata)
        if leaf.device.type == "cpu" and leaf.numel() > 0:
            # The first element's bytes, read without a torch op: under
            # memlife every op is recorded, with its stack (reading it
            # through ops cost 90 us a pass, against 13 here). Only from a
            # storage that holds it (FSDP frees a resharded view's storage).
            size = leaf.element_size()
            if storage.data_ptr() != 0 and storage.nbytes() >= (leaf.storage_offset() + 1) * size:
                sample = ctypes.string_at(leaf.data_ptr(), min(8, size))
    except Exception:  # a subclass without one storage (DTensor), a sparse tensor
        pass
    return version, sample


class HandUpdates:
    """Call before() at the start of each outermost backward pass and
    after() at its end; after() says whether the parameters of the previous
    pass changed between that pass and this one."""

    def __init__(self):
        self._probe = []  # (weak leaf, its state at the end of the previous pass)
        self._leaves = []
        self._updated = False
        self.stopped = False
        self.unavailable = False  # a recorder without backward steps
        self._watch = None  # memlife_watch_storages, memlife_watched_storage_written

    def use_watch(self, watch, written) -> None:
        """The recorder's watch of the probed storages (none without it: an
        older recorder, or no torch plugin)."""
        self._watch = (watch, written)

    def _watch_storages(self, storages) -> None:
        if self._watch is None:
            return
        array = (ctypes.c_uint64 * max(1, len(storages)))(*storages)
        if self._watch[0](array, len(storages)) < 0:
            self._watch = None  # no torch plugin: nothing will ever be seen

    def stop(self) -> None:
        """Steps come from elsewhere now (an optimizer step, the program's
        own marks): nothing more to probe."""
        self.stopped = True
        self._probe, self._leaves = [], []
        self._watch_storages([])

    def restart(self) -> None:
        """A memlife.record() block starts: its code may update its
        parameters by hand even if earlier code had an optimizer."""
        self.stopped = self.unavailable
        self._probe, self._leaves = [], []
        self._watch_storages([])

    def before(self, outputs) -> None:
        self._updated = bool(self._probe) and self._watch is not None and self._watch[1]() == 1
        for ref, state in self._probe if not self._updated else ():
            leaf = ref()
            if leaf is not None and state is not None and _state(leaf) != state:
                self._updated = True
                break
        self._leaves = []
        self.reached(outputs)

    def reached(self, outputs) -> None:
        """A pass run inside the outermost one (a reentrant checkpoint's,
        whose parameters the outer graph does not show) adds its leaves."""
        if len(self._leaves) < 2 * MAX_LEAVES:
            try:
                self._leaves += _leaves(outputs)
            except Exception:
                pass

    def after(self) -> bool:
        # Weak: memlife must not keep a model alive (a record() block would
        # report its parameters as what the block leaked).
        storages = []
        self._probe = [(weakref.ref(leaf), _state(leaf, storages)) for leaf in self._leaves]
        self._watch_storages(storages)
        self._leaves = []
        return self._updated


# The process's one probe: the backward wrapper feeds it and stops it once
# the recorder says it takes its steps from an optimizer or the program's
# marks (the recorder alone ranks step sources); a memlife.record() block
# restarts it.
PROBE = HandUpdates()
