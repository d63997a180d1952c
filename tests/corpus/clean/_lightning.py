"""Lightning for the corpus programs: the package (or its older name) and
the accelerator of the run (the GPU half sets MEMLIFE_CORPUS_DEVICE=cuda)."""
import os

try:
    import lightning as L
except ImportError:  # the older package name
    import pytorch_lightning as L

ACCELERATOR = "gpu" if os.environ.get("MEMLIFE_CORPUS_DEVICE") == "cuda" else "cpu"

__all__ = ["ACCELERATOR", "L"]
