"""`fix` on real code: a copy of timm's sources through the real command, and
PyTorch's installed Python sources through `fix_file` in two processes (nothing
written). For every file: an output that parses, a second `fix` that changes
nothing, findings afterwards no more than the findings before minus the fixed ones (per
code) with nothing fixable left, and byte-identical files where nothing was fixable.

Measured here (2 cores shared with other jobs): timm about 2 minutes (two `fix` runs
and a lint of the changed files), PyTorch about 6 minutes.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import sys

import pytest

from conftest import run_module
from test_real_code import timm_dir, torch_dir

from flake8_torchdevice.cli import iter_python_files

pytestmark = pytest.mark.slow
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))


def test_fix_on_a_copy_of_timm(request, tmp_path):
    from fix_numbers import measure

    from flake8_torchdevice.engine import Options

    source = timm_dir(request)
    copy = tmp_path / "timm"
    shutil.copytree(source, copy)
    first = run_module("flake8_torchdevice", ["fix", "--add-device", str(copy)], cwd=str(tmp_path))
    assert first.returncode in (0, 1) and "internal error" not in first.stderr, first.stderr[-2000:]
    changed = []
    for path in iter_python_files([str(copy)]):
        original = os.path.join(source, os.path.relpath(path, copy))
        if not filecmp.cmp(original, path, shallow=False):
            changed.append(original)
    # every changed file had something fixable, and its output is sound
    options = Options(add_device=True)
    for original in changed:
        numbers = measure((original, options))
        assert numbers.fixable and numbers.changed and not numbers.problems, (original, numbers.problems)
    snapshot = {path: open(path, "rb").read() for path in iter_python_files([str(copy)])}
    second = run_module("flake8_torchdevice", ["fix", "--add-device", str(copy)], cwd=str(tmp_path))
    assert second.returncode == 0, second.stderr[-2000:]
    assert all(open(path, "rb").read() == data for path, data in snapshot.items())


def test_fix_on_pytorch_sources():
    from fix_numbers import run

    from flake8_torchdevice.engine import Options

    summary = run("torch", torch_dir(), Options(add_device=True), jobs=2)
    assert summary["files"] > 2000
    assert summary["problems"] == []
    assert summary["fixed"] <= summary["fixable"]
