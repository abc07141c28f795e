"""Modules that are CUDA-only on purpose (issue 15, part 7).

A CUDA backend file (`accelerators/cuda.py`, `ops_cuda.py`, `cuda/kernels.py`) or a
module whose top raises without CUDA is meant to use CUDA: the rules that say "this
needs CUDA" (TDV101, TDV102, TDV103, TDV301, and TDV501's literal device type) do not
report there. Bugs that show on CUDA machines too are still reported: tensors left on
the wrong device (TDV2xx), a device method never called (TDV104) and the deprecated
`torch.cuda.amp` API (TDV501)."""

from __future__ import annotations

import textwrap

import pytest

from flake8_torchdevice.analysis.guards import is_cuda_only_path
from flake8_torchdevice.engine import Options, lint_source
from flake8_torchdevice.rules import select_codes

ALL = Options(enabled=select_codes(extend_select=["TDV9"]))

BODY = """\
import torch
import torch.nn as nn


def setup(model, x):
    model = model.cuda()
    torch.cuda.synchronize()
    d = torch.device("cuda")
    state = torch.load("m.pt")
    with torch.autocast("cuda"):
        pass
    scaler = torch.cuda.amp.GradScaler()
    return model, x + torch.zeros(3).to(d), state, scaler


class Head(nn.Module):
    def forward(self, x: torch.Tensor):
        y = x.to("cuda")
        x.cuda()
        return y + torch.zeros(3)
"""

# Everything in BODY, as reported in an ordinary module.
EVERYWHERE = [(6, 18, "TDV101"), (7, 4, "TDV103"), (8, 21, "TDV102"), (9, 12, "TDV301"), (10, 24, "TDV501"),
              (12, 13, "TDV501"), (18, 17, "TDV102"), (19, 10, "TDV101"), (19, 8, "TDV203"), (20, 19, "TDV201")]
# What a CUDA-only module still reports: the deprecated API, tensors on the wrong device, a discarded move.
CUDA_ONLY = [(12, 13, "TDV501"), (19, 8, "TDV203"), (20, 19, "TDV201")]


def findings(source: str, path: str):
    """(line, col, code) in position order, fast path checked against a full parse."""
    source = textwrap.dedent(source)
    fast = [(f.line, f.col, f.code) for f in lint_source(source, path, ALL)]
    full = [(f.line, f.col, f.code) for f in lint_source(source, path, ALL, fast=False)]
    assert fast == full
    return fast


def test_an_ordinary_module_reports_everything():
    assert findings(BODY, "pkg/train.py") == sorted(EVERYWHERE)


CUDA_PATHS = ["pkg/accelerators/cuda.py", "cuda.py", "pkg/ops_cuda.py", "pkg/cuda_kernels.py",
              "pkg/cuda/ops.py", "src/pkg/cuda/sub/ops.py", "C:\\src\\pkg\\cuda\\ops.py", "pkg/accelerators/CUDA.py",
              "/abs/pkg/backend_cuda.py"]


@pytest.mark.parametrize("path", CUDA_PATHS)
def test_a_path_that_says_cuda_makes_the_module_cuda_only(path):
    assert is_cuda_only_path(path)
    assert findings(BODY, path) == CUDA_ONLY


ORDINARY_PATHS = ["pkg/train.py", "pkg/cudagraphs.py", "pkg/mycuda.py", "pkg/cudax/ops.py", "pkg/nocuda.py",
                  "pkg/test_cuda_graphs.py", "<stdin>", "-", "", None]


@pytest.mark.parametrize("path", ORDINARY_PATHS)
def test_other_paths_are_ordinary(path):
    assert not is_cuda_only_path(path)


def test_a_cuda_folder_must_be_a_whole_name():
    assert findings(BODY, "pkg/cuda_ops/train.py") == sorted(EVERYWHERE)
    assert findings(BODY, "pkg/cudnn/train.py") == sorted(EVERYWHERE)


MODULE_LEVEL_STOPS = {
    "raise": "if not torch.cuda.is_available():\n    raise ImportError('this backend needs CUDA')\n",
    "raise RuntimeError with a message": (
        "if not torch.cuda.is_available():\n    msg = 'needs CUDA'\n    raise RuntimeError(msg)\n"),
    "assert": "assert torch.cuda.is_available(), 'CUDA is required'\n",
    "device count": "if torch.cuda.device_count() == 0:\n    raise RuntimeError('no GPU')\n",
    "sys.exit": "import sys\nif not torch.cuda.is_available():\n    sys.exit('needs CUDA')\n",
    "pytest module skip": ("import pytest\nif not torch.cuda.is_available():\n"
                           "    pytest.skip('needs CUDA', allow_module_level=True)\n"),
}


def _with_stop(stop: str) -> str:
    """BODY with `stop` right after `import torch`; the findings' lines move down by its size."""
    head, rest = BODY.split("\n", 1)
    return head + "\n" + stop + rest


@pytest.mark.parametrize("stop", MODULE_LEVEL_STOPS.values(), ids=list(MODULE_LEVEL_STOPS))
def test_a_module_that_raises_without_cuda_is_cuda_only(stop):
    shift = stop.count("\n")
    assert findings(_with_stop(stop), "pkg/train.py") == [(line + shift, col, code) for line, col, code in CUDA_ONLY]


def test_a_raise_in_a_function_does_not_make_the_module_cuda_only():
    stop = "def check():\n    if not torch.cuda.is_available():\n        raise ImportError('needs CUDA')\n"
    shift = stop.count("\n")
    assert findings(_with_stop(stop), "pkg/train.py") == sorted(
        (line + shift, col, code) for line, col, code in EVERYWHERE)


def test_a_raise_after_the_functions_does_not_make_them_cuda_only():
    source = BODY + "\n\nif not torch.cuda.is_available():\n    raise ImportError('needs CUDA')\n"
    assert findings(source, "pkg/train.py") == sorted(EVERYWHERE)


def test_a_raise_nested_in_a_module_level_block_does_not_make_the_module_cuda_only():
    stop = "if __name__ == '__main__':\n    if not torch.cuda.is_available():\n        raise SystemExit(1)\n"
    shift = stop.count("\n")
    assert findings(_with_stop(stop), "pkg/train.py") == sorted(
        (line + shift, col, code) for line, col, code in EVERYWHERE)


def test_a_test_that_admits_the_cpu_does_not_make_the_module_cuda_only():
    stop = "if not torch.cuda.is_available():\n    print('running on the CPU')\n"
    shift = stop.count("\n")
    assert findings(_with_stop(stop), "pkg/train.py") == sorted(
        (line + shift, col, code) for line, col, code in EVERYWHERE)


def test_uncalled_device_method_is_still_reported_in_a_cuda_backend():
    """`net.cuda` without a call does nothing on any machine."""
    source = "import torch\ndef build(net):\n    return net.cuda\n"
    assert findings(source, "pkg/accelerators/cuda.py") == [(3, 15, "TDV104")]


def test_fix_leaves_a_cuda_backend_alone():
    from flake8_torchdevice.fix import fix_source
    source = "import torch\nstate = torch.load('m.pt')\nmodel = Net().cuda()\n"
    assert fix_source(source, "pkg/train.py", ALL, add_device=True).changed
    result = fix_source(source, "pkg/cuda/backend.py", ALL, add_device=True)
    assert not result.changed and result.text == source and result.remaining_findings == []
