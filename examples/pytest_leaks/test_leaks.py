"""The pytest plugin on two tests (README, "Tests that assert they leak
nothing"):

    python3 -m pytest -p memlife.pytest_plugin examples/pytest_leaks

test_release_leaks fails (its release keeps the gathered storage alive
through the view it handed out); test_release_frees passes.
"""
import pytest
import torch

_KEEP = []  # what the program keeps: the views it handed out


def gather_then_release(buggy):
    padded = torch.empty(1024 * 1024)
    padded.fill_(1.0)
    view = padded.narrow(0, 0, 1000 * 1000).view(1000, 1000)
    _KEEP.append(view)
    if buggy:
        padded.data = torch.empty(0)  # LEAK_LINE: the view still holds the storage
    else:
        _KEEP[-1] = None  # the view goes too: the storage is freed
        padded.data = torch.empty(0)


@pytest.mark.memlife_no_leaks
def test_release_leaks():
    gather_then_release(buggy=True)


@pytest.mark.memlife_no_leaks
def test_release_frees():
    gather_then_release(buggy=False)
