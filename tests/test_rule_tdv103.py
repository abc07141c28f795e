"""TDV103 cuda-only-api: torch.cuda APIs that raise on a CPU-only build, outside a guard.

tests/test_cuda_only_apis.py shows on CPU-only torch that every API in the rule's
tables raises (and that the safe ones run); this file checks what the rule reports.
"""

from __future__ import annotations

import pytest

from conftest import lint
from flake8_torchdevice.rules.cuda import CUDA_ONLY_APIS, LEGACY_CUDA_TYPES, SAFE_CUDA_APIS

ONLY = frozenset({"TDV103"})


def tdv103(code: str, **options):
    return lint(code, enabled=ONLY, **options)


REPORTED = {
    # nanoGPT's get_batch: pinned, then moved without blocking
    "pin_memory() of a tensor": (
        "import torch\ndef get_batch(data, ix, device):\n    x = torch.stack([data[i] for i in ix])\n"
        "    return x.pin_memory().to(device, non_blocking=True)\n", [(4, 11)]),
    "synchronize": ("import torch\ntorch.cuda.synchronize()\n", [(2, 0)]),
    "set_device with th alias": ("import torch as th\nth.cuda.set_device(args.local_rank)\n", [(2, 0)]),
    "from torch import cuda": ("from torch import cuda\nname = cuda.get_device_name(0)\n", [(2, 7)]),
    "from torch.cuda import": ("from torch.cuda import synchronize\ndef f():\n    synchronize()\n", [(3, 4)]),
    "aliased import": ("from torch.cuda import synchronize as sync\ndef f():\n    sync()\n", [(3, 4)]),
    "import torch.cuda as tc": ("import torch.cuda as tc\nfree, total = tc.mem_get_info()\n", [(2, 14)]),
    "Event in a timing helper": (
        "import torch\ndef timed(fn):\n    start = torch.cuda.Event(enable_timing=True)\n    return start\n",
        [(3, 12)]),
    "Stream in with": ("import torch\nwith torch.cuda.stream(torch.cuda.Stream()):\n    pass\n", [(2, 23)]),
    "with torch.cuda.device(0)": ("import torch\nwith torch.cuda.device(0):\n    pass\n", [(2, 5)]),
    "get_device_properties": ("import torch\ntotal = torch.cuda.get_device_properties(0).total_memory\n", [(2, 8)]),
    "reset_peak_memory_stats": ("import torch\ntorch.cuda.reset_peak_memory_stats()\n", [(2, 0)]),
    "current_device": ("import torch\nrank = torch.cuda.current_device()\n", [(2, 7)]),
    "legacy constructor": ("import torch\nx = torch.cuda.FloatTensor(2, 3)\n", [(2, 4)]),
    "legacy constructor with data": ("import torch\ny = torch.cuda.LongTensor([1, 0])\n", [(2, 4)]),
    "legacy constructor imported": ("from torch.cuda import ByteTensor\nm = ByteTensor(4)\n", [(2, 4)]),
    ".type(torch.cuda.FloatTensor)": ("import torch\ny = x.type(torch.cuda.FloatTensor)\n", [(2, 11)]),
    ".type('torch.cuda.FloatTensor')": ("y = x.type('torch.cuda.HalfTensor')\n", [(1, 11)]),
    ".type(dtype=...)": ("import torch\ny = x.type(dtype=torch.cuda.FloatTensor)\n", [(2, 17)]),
    "set_default_tensor_type": ("import torch\ntorch.set_default_tensor_type(torch.cuda.FloatTensor)\n", [(2, 30)]),
    "set_default_tensor_type by name": ("import torch\ntorch.set_default_tensor_type('torch.cuda.FloatTensor')\n",
                                        [(2, 30)]),
    "type bound to a name": ("import torch\nTensor = torch.cuda.FloatTensor\n", [(2, 9)]),
    # No call: the test is always true, so the type is always CUDA's (TDV104 reports the test).
    "type chosen by an uncalled is_available": (
        "import torch\nTensor = torch.cuda.FloatTensor if torch.cuda.is_available else torch.FloatTensor\n",
        [(2, 9)]),
    "type chosen by an unrelated test": (
        "import torch\nTensor = torch.cuda.FloatTensor if big else torch.FloatTensor\n", [(2, 9)]),
    "pin_memory=True in a factory": ("import torch\nb = torch.empty(8, 3, pin_memory=True)\n", [(2, 22)]),
    "pin_memory=True in tensor()": ("import torch\nb = torch.tensor(data, pin_memory=True)\n", [(2, 23)]),
    "pin_memory=True in a *_like": ("import torch\nb = torch.zeros_like(x, pin_memory=True)\n", [(2, 24)]),
    "pin_memory=True in new_zeros": ("b = x.new_zeros(3, pin_memory=True)\n", [(1, 19)]),
    "in a method": ("import torch\nclass Timer:\n    def stop(self):\n        torch.cuda.synchronize()\n", [(4, 8)]),
    "false arm of a guard": ("import torch\nif torch.cuda.is_available():\n    pass\nelse:\n    torch.cuda.synchronize()\n",
                             [(5, 4)]),
    "under an uncalled is_available": ("import torch\nif torch.cuda.is_available:\n    torch.cuda.synchronize()\n",
                                       [(3, 4)]),
    "try/except is no guard": ("import torch\ntry:\n    torch.cuda.synchronize()\nexcept AssertionError:\n    pass\n",
                               [(3, 4)]),
    "membership that admits cpu is no guard": (
        "import torch\nif device.type in ('cuda', 'cpu'):\n    torch.cuda.synchronize()\n", [(3, 4)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv103(code) == [(line, col, "TDV103") for line, col in expected]


NOT_REPORTED = {
    "pin_memory() under a device test": (
        "import torch\ndef get_batch(data, ix, device):\n    x = torch.stack([data[i] for i in ix])\n"
        "    if device.type == 'cuda':\n        x = x.pin_memory().to(device, non_blocking=True)\n    return x\n"),
    "a batch class's own pin_memory": (
        "import torch\nclass Batch:\n    def __init__(self, x: torch.Tensor):\n        self.x = x\n"
        "    def pin_memory(self):\n        x: torch.Tensor = self.x\n        self.x = x.pin_memory()\n        return self\n"),
    "pin_memory() of something not known as a tensor": "def f(obj):\n    return obj.pin_memory()\n",
    "guarded by is_available": "import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n",
    "guarded by device type": "import torch\nif device.type == 'cuda':\n    torch.cuda.synchronize()\n",
    "guarded by a flag": "import torch\nif args.cuda:\n    torch.cuda.set_device(args.gpu)\n",
    "guarded by a dict flag": "import torch\nif opt['cuda']:\n    torch.cuda.set_device(0)\n",
    "guarded by a local flag": ("import torch\nhave_accel = torch.cuda.is_available()\nif have_accel:\n"
                                "    torch.cuda.synchronize()\n"),
    "guarded ternary": "import torch\nname = torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu'\n",
    "guarded by and": "import torch\nok = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8\n",
    "early exit": ("import torch\ndef f():\n    if not torch.cuda.is_available():\n        return\n"
                   "    torch.cuda.synchronize()\n"),
    "decorated test": "@requires_cuda\ndef test_a():\n    torch.cuda.synchronize()\n",
    "type chosen by a guard": "import torch\nTensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor\n",
    "type chosen by is_available()": (
        "import torch\nT = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor\n"),
    "safe APIs": ("import torch\ntorch.cuda.manual_seed_all(0)\ntorch.cuda.empty_cache()\n"
                  "n = torch.cuda.device_count()\nm = torch.cuda.max_memory_allocated()\n"
                  "with torch.cuda.stream(None):\n    pass\n"),
    "isinstance with a legacy type": "import torch\nok = isinstance(x, torch.cuda.FloatTensor)\n",
    "legacy type compared by name": "ok = x.type() == 'torch.cuda.FloatTensor'\n",
    "legacy types in a tuple": "import torch\nGPU_TYPES = (torch.cuda.FloatTensor, torch.cuda.HalfTensor)\n",
    "CPU legacy type": "import torch\nx = torch.FloatTensor(2)\ny = x.type(torch.FloatTensor)\n",
    "DataLoader pin_memory": ("from torch.utils.data import DataLoader\n"
                              "loader = DataLoader(ds, batch_size=8, pin_memory=True)\n"),
    "pin_memory expression": "import torch\nb = torch.empty(8, pin_memory=torch.cuda.is_available())\n",
    "pin_memory=False": "import torch\nb = torch.empty(8, pin_memory=False)\n",
    "unrelated synchronize": "import threading\nbarrier.synchronize()\ndist.barrier()\n",
    "another library's Stream": "import mylib\ns = mylib.cuda.Stream()\n",
    "numba cuda": "from numba import cuda\ncuda.synchronize()\n",
    "rebound torch": "import torch\ndef f():\n    torch = fake\n    torch.cuda.synchronize()\n",
    "unrelated .type()": "kind = node.type('x')\n",
    "method named new_zeros on a module": "import torch\nb = torch.new_zeros(3, pin_memory=True)\n",
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv103(code) == []


def test_tables_are_disjoint_and_name_the_spec_list():
    assert not CUDA_ONLY_APIS & SAFE_CUDA_APIS
    assert {"synchronize", "set_device", "current_device", "get_device_name", "get_device_properties",
            "mem_get_info", "reset_peak_memory_stats", "Stream", "Event"} <= CUDA_ONLY_APIS
    assert len(LEGACY_CUDA_TYPES) == 10


@pytest.mark.parametrize("name", sorted(CUDA_ONLY_APIS))
def test_every_cuda_only_api_is_reported(name):
    assert tdv103(f"import torch\nx = torch.cuda.{name}()\n") == [(2, 4, "TDV103")]


@pytest.mark.parametrize("name", sorted(SAFE_CUDA_APIS))
def test_no_safe_api_is_reported(name):
    assert tdv103(f"import torch\nx = torch.cuda.{name}()\n") == []


def test_ineffective_guard_is_both_tdv103_and_tdv104():
    code = "import torch\nTensor = torch.cuda.FloatTensor if torch.cuda.is_available else torch.FloatTensor\n"
    assert lint(code, enabled=frozenset({"TDV103", "TDV104"})) == [(2, 9, "TDV103"), (2, 46, "TDV104")]


def test_messages_name_the_api_and_the_remedy():
    from flake8_torchdevice.engine import Options, lint_source
    source = ("import torch\ntorch.cuda.synchronize()\nx = torch.cuda.LongTensor(2)\n"
              "y = x.type(torch.cuda.HalfTensor)\nz = torch.ones(2, pin_memory=True)\n")
    messages = [f.message for f in lint_source(source, "t.py", Options(enabled=ONLY))]
    assert messages[0].startswith("torch.cuda.synchronize() raises without CUDA; call it only under a CUDA guard")
    assert "dtype=torch.int64, device=device" in messages[1]
    assert ".to(device, torch.float16)" in messages[2]
    assert "pin_memory=torch.cuda.is_available()" in messages[3]


@pytest.mark.parametrize("code, expected", [
    ("from torch.cuda import device\nx = device(0)\n", [(2, 4, "TDV103")]),
    ("from torch.cuda import device as d\nd(1)\n", [(2, 0, "TDV103")]),
    ("from torch.cuda import device\nwith device(0):\n    pass\n", [(2, 5, "TDV103")]),
])
def test_imported_cuda_device_name_is_reported_by_fast_path_too(code, expected):
    # lint() also asserts the fast path (no full parse) finds the same as a full parse
    assert lint(code, enabled=ONLY) == expected


def test_parenthesised_import_of_cuda_device_is_reported():
    code = "from torch.cuda import (\n    synchronize as s,\n    device,\n)\ndevice(0)\n"
    assert lint(code, enabled=ONLY) == [(5, 0, "TDV103")]


ANNOTATIONS = {
    "return annotation": "import torch\ndef make(n) -> torch.cuda.FloatTensor:\n    return build(n)\n",
    "parameter": "import torch\ndef f(x: torch.cuda.FloatTensor, s: torch.cuda.Stream = None):\n    return x\n",
    "variable": "import torch\nx: torch.cuda.FloatTensor = make()\n",
    "string": "import torch\ndef f(x: 'torch.cuda.FloatTensor') -> 'torch.cuda.Event':\n    return x\n",
}


@pytest.mark.parametrize("code", ANNOTATIONS.values(), ids=list(ANNOTATIONS))
def test_annotation_is_not_a_use(code):
    """Issue 15: a type annotation names a type; nothing runs."""
    assert lint(code) == []


def test_annotated_function_still_reports_its_body():
    code = "import torch\ndef make(n) -> torch.cuda.FloatTensor:\n    return torch.cuda.FloatTensor(n)\n"
    assert tdv103(code) == [(3, 11, "TDV103")]
