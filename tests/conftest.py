"""Shared helpers for the lint tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from typing import Dict, List, Sequence, Tuple

import pytest

from flake8_torchdevice.engine import Options, lint_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The suite proves what happens on a machine without CUDA, as CI's is. On a machine with a
# GPU it hides the GPU from itself and every program it starts (the emulator refuses to run
# beside a real GPU, and the CPU-only failures would not happen); .ci/gpu-check runs the
# checks meant for the GPU with TDV_CONFORMANCE=gpu, which keeps it visible.
if os.environ.get("TDV_CONFORMANCE") != "gpu":
    os.environ["CUDA_VISIBLE_DEVICES"] = ""


# One finding of each core rule, for the end-to-end tests of flake8 and the CLI.
ONE_OF_EACH = """\
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Head(nn.Module):
    def forward(self, x):
        return x + torch.zeros(3)


def main(rank):
    model = Head().cuda()
    device = torch.device("cuda")
    state = torch.load("m.pt")
    net = Head()
    ddp = DDP(net, device_ids=[rank])
    return model, device, state, ddp
"""


def lint(code: str, fast: bool = True, **options) -> List[Tuple[int, int, str]]:
    """(line, 0-based col, code) of every finding in the dedented `code`.

    Keyword arguments become `Options` fields (guard_names=..., enabled=...).
    Every call also checks that the fast path agrees with a full parse.
    """
    source = textwrap.dedent(code)
    opts = Options(**options)
    found = [(f.line, f.col, f.code) for f in lint_source(source, "t.py", opts, fast=fast)]
    if fast:
        full = [(f.line, f.col, f.code) for f in lint_source(source, "t.py", opts, fast=False)]
        assert found == full, "fast and full parse disagree"
    return found


def lint_in_project(root, files: Dict[str, str], target: str, enabled) -> List[Tuple[int, int, str]]:
    """(line, 0-based col, code) of every finding in `target`, one of the project `files`
    (name -> text) written under `root`: linted with the project index reading the others."""
    from flake8_torchdevice.analysis import project

    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    project.clear_cache()
    path = root / target
    found = lint_source(path.read_text(encoding="utf-8"), str(path), Options(enabled=enabled))
    return [(f.line, f.col, f.code) for f in found]


def lint_codes(code: str, **options) -> List[str]:
    return [c for _, _, c in lint(code, **options)]


FIX_MARK_RE = re.compile(r"^(\S.*?: [A-Z]+[0-9]+) \[\*\]", re.M)
FIX_SUMMARY_RE = re.compile(r"^\[\*\] \d+ fixable with `flake8-torchdevice fix`\n", re.M)


def unmarked(stdout: str) -> str:
    """`check`'s text output without its fix marks (`[*]` and the closing count), which
    flake8 does not print: the rest is flake8's output byte for byte."""
    return FIX_SUMMARY_RE.sub("", FIX_MARK_RE.sub(r"\1", stdout))


def run_module(module: str, args: Sequence[str], cwd: str, stdin: str = None) -> subprocess.CompletedProcess:
    """`python -m module args...` in a subprocess, text output."""
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def write(tmp_path):
    """write("a/b.py", code) -> path of the dedented file under tmp_path."""
    def _write(name: str, code: str) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code), encoding="utf-8")
        return str(path)
    return _write
