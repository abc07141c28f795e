"""The CUDA-guard model as people write guards (issue 8, part 2): flags stored in
dicts and configs, locals bound from a CUDA test under any name, and tests that
look like guards but admit a non-CUDA device."""

from __future__ import annotations

import pytest

from conftest import lint

GUARDED_RULES = frozenset({"TDV101", "TDV102", "TDV301"})


def findings(code: str):
    return lint(code, enabled=GUARDED_RULES)


# Each guard form in front of one finding of each guarded family.
BODY = "    m = m.cuda()\n    d = torch.device('cuda')\n    s = torch.load(p)\n"

GUARDS = {
    "dict flag": 'if opt["cuda"]:\n',
    "dict flag, single quotes, nested": "if self.opt['use_gpu']:\n",
    "config .get": 'if cfg.get("use_gpu"):\n',
    "config .get with a default": 'if cfg.get("cuda", False):\n',
    "gpus key": 'if config["gpus"]:\n',
    "len of gpu ids": "if len(opt.gpu_ids) > 0:\n",
    "gpu index is not None": "if args.gpu is not None:\n",
    "local from is_available": "have_accel = torch.cuda.is_available()\nif have_accel:\n",
    "local from device_count": "n_dev = torch.cuda.device_count()\nif n_dev > 1:\n",
    "local from a combination": "ok = args.fast and torch.cuda.is_available()\nif ok:\n",
    "local from a dict flag": 'on = opt["cuda"]\nif on:\n',
    "module flag read in a function": None,  # below
    "all-CUDA membership": 'if device.type in ("cuda",):\n',
    # pytorch/examples' old mnist: `cuda` set by a probe, compared with True
    "flag == True": "if cuda == True:\n",
    "flag is True": "if args.use_gpu is True:\n",
    "not-flag == False": "if args.no_cuda == False:\n",
    "flag != False": "if use_cuda != False:\n",
}


@pytest.mark.parametrize("guard", [g for g in GUARDS.values() if g], ids=[k for k, g in GUARDS.items() if g])
def test_guard_forms_silence_families_1_and_3(guard):
    code = "import torch\n" + guard + BODY
    assert findings(code) == []


def test_module_flag_guards_a_function_body():
    code = "import torch\nHAS_GPU = torch.cuda.is_available()\ndef f(m, p):\n    if HAS_GPU:\n" + BODY.replace(
        "    ", "        ")
    assert findings(code) == []


def test_annotated_module_flag_guards_a_skipped_test():
    # torchrec's `_CUDA_UNAVAILABLE: bool = not torch.cuda.is_available()`, then
    # `@unittest.skipIf(_CUDA_UNAVAILABLE, ...)`: an annotation changes nothing
    body = "        x = torch.zeros(3, device='cuda')\n"
    code = ("import unittest\nimport torch\n_CUDA_UNAVAILABLE: bool = not torch.cuda.is_available()\n"
            "class T(unittest.TestCase):\n    @unittest.skipIf(_CUDA_UNAVAILABLE, 'needs a GPU')\n"
            "    def test_a(self):\n" + body)
    assert findings(code) == []
    unrelated = code.replace("not torch.cuda.is_available()", "sys.platform == 'win32'").replace(
        "_CUDA_UNAVAILABLE", "_ON_WINDOWS")
    assert findings(unrelated) == [(7, 34, "TDV102")]


def test_negated_local_flag_guards_the_else_arm():
    code = ("import torch\nhave = torch.cuda.is_available()\nif not have:\n    pass\nelse:\n" + BODY)
    assert findings(code) == []


NOT_GUARDS = {
    # `in ("cuda", "cpu")` admits the CPU: the body runs on a CPU-only machine too.
    "membership admitting cpu": 'if device.type in ("cuda", "cpu"):\n',
    "membership admitting mps": 'if device.type in ["cuda", "mps"]:\n',
    "dict key that says nothing": 'if opt["verbose"]:\n',
    "negative dict flag": 'if opt["no_cuda"]:\n',
    "local rebound to something else": "have = torch.cuda.is_available()\nhave = len(xs)\nif have:\n",
    "local from a .cuda() call is not a flag": "moved = net.cuda()\nif moved:\n",
    "is_available without a call, stored": "use = torch.cuda.is_available\nif use:\n",
    "flag == False": "if use_cuda == False:\n",
    "flag is not True": "if args.cuda is not True:\n",
}


@pytest.mark.parametrize("guard", NOT_GUARDS.values(), ids=list(NOT_GUARDS))
def test_tests_that_are_no_guard(guard):
    code = "import torch\n" + guard + BODY
    first = code.count("\n") - 2  # the line of `m = m.cuda()`
    codes = [(line, c) for line, _, c in findings(code)]
    assert [c for _, c in codes] == (["TDV101", "TDV102", "TDV301"] if "net.cuda()" not in guard
                                     else ["TDV101", "TDV101", "TDV102", "TDV301"])
    assert codes[-3:] == [(first, "TDV101"), (first + 1, "TDV102"), (first + 2, "TDV301")]


def test_module_level_assert_admitting_cpu_silences_nothing():
    code = ('import torch\ndevice = torch.device(args.device)\nassert device.type in ("cuda", "cpu", "mps")\n'
            "def f(m):\n    return m.cuda()\n")
    assert [(line, c) for line, _, c in findings(code)] == [(5, "TDV101")]


def test_assert_does_not_reach_past_its_function():
    code = ("import torch\ndef setup():\n    assert torch.cuda.is_available()\n    m.cuda()\n"
            "def train(m):\n    return m.cuda()\n")
    assert [(line, c) for line, _, c in findings(code)] == [(6, "TDV101")]


def test_module_level_assert_guards_the_module_code_after_it():
    code = "import torch\nassert torch.cuda.is_available()\nmodel = Net().cuda()\n"
    assert findings(code) == []


def test_pytestmark_still_guards_every_test_of_the_module():
    code = ("import pytest\nimport torch\npytestmark = pytest.mark.skipif(not torch.cuda.is_available(), "
            "reason='gpu')\ndef test_a():\n    x.cuda()\n")
    assert findings(code) == []


def test_early_exit_in_a_function_guards_the_rest_of_it_but_not_nested_functions_defined_after():
    code = ("import torch\ndef f(x):\n    if not torch.cuda.is_available():\n        return\n    y = x.cuda()\n"
            "    def later(z):\n        return z.cuda()\n    return later\n")
    assert [(line, c) for line, _, c in findings(code)] == [(7, "TDV101")]


# Research code (yolov5-style DDP setup): a GPU count above a rank or a size means a GPU.
COUNT_ABOVE_A_NAME = {
    "assert count > rank": "assert torch.cuda.device_count() > local_rank, 'not enough GPUs'\n",
    "if count >= world size": "if torch.cuda.device_count() >= world_size:\n",
    "if rank < count": "if args.rank < torch.cuda.device_count():\n",
}


@pytest.mark.parametrize("guard", COUNT_ABOVE_A_NAME.values(), ids=list(COUNT_ABOVE_A_NAME))
def test_gpu_count_compared_with_a_name(guard):
    body = BODY if guard.startswith("if") else BODY.replace("    ", "")
    code = "import torch\ndef setup(m, p, local_rank, world_size, args):\n" + "".join(
        "    " + line + "\n" for line in (guard + body).splitlines())
    assert findings(code) == []


def test_gpu_count_below_a_name_is_no_guard():
    code = "import torch\nif torch.cuda.device_count() < n:\n    m.cuda()\n"
    assert [(line, c) for line, _, c in findings(code)] == [(3, "TDV101")]


@pytest.mark.parametrize("test", [
    "assert cfg.NUM_GPUS <= torch.cuda.device_count(), 'not enough GPUs'",
    "assert torch.cuda.device_count() >= args.n_gpu",
])
def test_at_least_the_gpus_asked_for_is_no_guard(test):
    # SlowFast's build_model: zero GPUs asked for passes, and the model is then moved with .cuda()
    code = f"import torch\ndef build(cfg, args, model):\n    {test}\n    return model.cuda()\n"
    assert findings(code) == [(4, 17, "TDV101")]
    strict = code.replace("<=", "<").replace(">=", ">")
    assert findings(strict) == []


# Issue 15, part 3: a guard may compare with a named constant or enum member.
CONSTANT_GUARDS = {
    "== enum member": "if rng_type == RNGType.CUDA:\n",
    "== on a device type": "if device_type == DeviceType.CUDA:\n",
    "is enum member": "if backend is Backend.CUDA:\n",
    "lower-case member": "if self.kind == Kind.cuda:\n",
    "constant on the left": "if DeviceType.CUDA == self.device_type:\n",
    "nested class attribute": "if cfg.backend is self.Backends.CUDA:\n",
    "combined with and": "if rng_type == RNGType.CUDA and seed is not None:\n",
    # openmixup's `get_comm_device` (blind sample of set 29): NCCL runs only on CUDA GPUs
    "the NCCL backend": "if backend == torch.distributed.Backend.NCCL:\n",
    "the NCCL backend's name": "if dist.get_backend() == 'nccl':\n",
}


@pytest.mark.parametrize("guard", CONSTANT_GUARDS.values(), ids=list(CONSTANT_GUARDS))
def test_comparison_with_a_cuda_constant_guards(guard):
    assert findings("import torch\n" + guard + BODY) == []


def test_elif_comparison_with_a_cuda_constant_guards_its_arm():
    code = ("import torch\nif self.device_type is DeviceType.CPU:\n    pass\nelif self.device_type is DeviceType.CUDA:\n"
            + BODY + "else:\n    m = m.cuda()\n")
    assert [(line, c) for line, _, c in findings(code)] == [(9, "TDV101")]


def test_negated_comparison_with_a_cuda_constant_guards_the_else_arm():
    code = ("import torch\nif device_type != DeviceType.CUDA:\n    m = m.cuda()\nelse:\n" + BODY)
    assert findings(code) == [(3, 10, "TDV101")]
    code = ("import torch\nif backend is not Backend.CUDA:\n    m = m.cuda()\nelse:\n" + BODY)
    assert findings(code) == [(3, 10, "TDV101")]


CONSTANT_NOT_GUARDS = {
    "another member": "if rng_type == RNGType.CUDA_GRAPH:\n",
    "a member that only contains cuda": "if kind == Kind.CUDA_OR_CPU:\n",
    "a bare name": "if rng_type == CUDA:\n",
    "ordering": "if version >= Versions.CUDA:\n",
    "membership": "if kind in Kind.CUDA:\n",
}


@pytest.mark.parametrize("guard", CONSTANT_NOT_GUARDS.values(), ids=list(CONSTANT_NOT_GUARDS))
def test_comparisons_with_other_constants_are_no_guard(guard):
    code = "import torch\n" + guard + BODY
    assert [(line, c) for line, _, c in findings(code)] == [(3, "TDV101"), (4, "TDV102"), (5, "TDV301")]


def test_flag_compared_with_a_literal_keeps_its_meaning():
    """`args.cuda == False` is a flag test, not an enum comparison."""
    code = "import torch\nif args.cuda == False:\n" + BODY
    assert [(line, c) for line, _, c in findings(code)] == [(3, "TDV101"), (4, "TDV102"), (5, "TDV301")]


def test_match_case_on_a_device_guards_its_body():
    """Issue 15, part 4: `match device.type: case "cuda":` reads as `device.type == "cuda"`."""
    body = "".join("        " + line + "\n" for line in BODY.strip("\n").splitlines())
    code = ("import torch\ndef f(device, m, p):\n    match device.type:\n        case 'cuda':\n" + body
            + "        case 'cpu' | 'mps':\n            pass\n        case _:\n            m = m.cuda()\n")
    assert findings(code) == [(11, 18, "TDV101")]


# `cuda_absent`: stricter than the polarity, for placement per path (TDV401). Only a
# real availability test tells that CUDA is certainly absent on one outcome.
def _absent(test: str, locals_absent=None):
    import libcst as cst

    from flake8_torchdevice.analysis.guards import GuardModel

    def resolve(node):
        text = cst.Module([]).code_for_node(node)
        return text if text.startswith("torch.") else None

    model = GuardModel(resolve, lambda name: 0, (), lambda name: (locals_absent or {}).get(name, frozenset()))
    expression = cst.parse_expression(test)
    return model.cuda_absent(expression, True), model.cuda_absent(expression, False)


@pytest.mark.parametrize("test, absent_if_true, absent_if_false", [
    ("torch.cuda.is_available()", False, True),
    ("not torch.cuda.is_available()", True, False),
    ("torch.cuda.device_count() > 0", False, True),
    ("torch.cuda.device_count() >= 1", False, True),
    ("torch.cuda.device_count() == 0", True, False),
    ("torch.cuda.device_count() > 1", False, False),  # one GPU makes it false
    ("args.cuda", False, False),  # a user's flag can be false on a GPU machine
    ("use_cuda", False, False),
    ("args.cuda and torch.cuda.is_available()", False, False),
    ("args.cuda or torch.cuda.is_available()", False, True),
    ("not args.no_cuda and torch.cuda.is_available()", False, False),
    ("torch.cuda.is_available() and torch.cuda.device_count() > 0", False, True),
])
def test_cuda_absent(test, absent_if_true, absent_if_false):
    assert _absent(test) == (absent_if_true, absent_if_false)


def test_cuda_absent_follows_a_local_bound_from_is_available():
    assert _absent("have_gpu", {"have_gpu": frozenset({False})}) == (False, True)
    assert _absent("not have_gpu", {"have_gpu": frozenset({False})}) == (True, False)


# A helper that only guarded code calls runs only where CUDA exists (analysis/helpers.py).
SKIPPED_TESTS = """\
import unittest
import torch
from common import gpu_unavailable


class T(unittest.TestCase):
    @unittest.skipIf(*gpu_unavailable)
    def test_a(self, *args, **kwargs):
        self._check(*args, **kwargs)

    @unittest.skipIf(not torch.cuda.is_available(), "needs a GPU")
    def test_b(self):
        self._check(3)
        _shared(3)

    def _check(self, n):
        return torch.zeros(n, device=torch.device("cuda"))


def _shared(n):
    return _load("w.pt").cuda() + n


def _load(path):
    return torch.load(path)
"""


def test_named_pair_of_a_gpu_skip_guards_the_test():
    code = "import unittest\nimport torch\nfrom common import gpu_unavailable\n" \
           "@unittest.skipIf(*gpu_unavailable)\ndef test_a():\n    return torch.zeros(3, device='cuda')\n"
    assert findings(code) == []
    assert findings(code.replace("gpu_unavailable", "gpu_settings")) == [(6, 33, "TDV102")]


def test_helpers_only_guarded_tests_call_are_guarded():
    # the `cuda` literal of `_check`, the `.cuda()` and the load of the helpers `_shared` calls
    assert findings(SKIPPED_TESTS) == []


SHARED_AND_LOAD = [(21, 25, "TDV101"), (25, 11, "TDV301")]
HELPER_REPORTED = {
    "a call outside any guard": (SKIPPED_TESTS + "\ndef run():\n    return _shared(2)\n", SHARED_AND_LOAD),
    "a reference that is no call": (SKIPPED_TESTS + "\nCALLBACKS = [_shared]\n", SHARED_AND_LOAD),
    "handed on as a callback": (
        SKIPPED_TESTS.replace("        _shared(3)\n", "        list(map(_shared, [3]))\n"), SHARED_AND_LOAD),
    "a method of another object with the name": (
        SKIPPED_TESTS + "\ndef run(other):\n    return other._check(1)\n", [(17, 50, "TDV102")]),
    "a public helper outside a test file": (SKIPPED_TESTS.replace("_shared", "shared"), SHARED_AND_LOAD),
}


@pytest.mark.parametrize("code, expected", HELPER_REPORTED.values(), ids=list(HELPER_REPORTED))
def test_helpers_called_where_cuda_may_be_absent_are_reported(code, expected):
    assert findings(code) == expected


def test_the_unguarded_helpers_of_a_chain_are_reported():
    code = SKIPPED_TESTS + "\ndef run():\n    return _load('x.pt')\n"
    # `_check` and `_shared` stay guarded; `_load`, also called from `run`, does not
    assert findings(code) == [(25, 11, "TDV301")]


def test_public_helpers_of_a_test_file_are_guarded_by_their_tests():
    code = SKIPPED_TESTS.replace("_shared", "shared")
    assert lint_source_codes(code, "tests/test_kernels.py") == []
    # (`_load` is called from `shared`, whose guards nobody knows there)
    assert lint_source_codes(code, "tests/kernels.py") == ["TDV101", "TDV301"]


def test_guarded_helpers_keep_what_guards_do_not_silence():
    code = SKIPPED_TESTS.replace("    def _check(self, n):\n",
                                 "    def _check(self, n):\n        x = torch.ones(n)\n        x.cuda()\n"
                                 "        with torch.cuda.amp.autocast():\n            pass\n")
    assert lint(code, enabled=frozenset({"TDV101", "TDV203", "TDV501"})) == [(18, 8, "TDV203"), (19, 13, "TDV501")]


def lint_source_codes(code: str, filename: str):
    from flake8_torchdevice.engine import Options, lint_source

    options = Options(enabled=GUARDED_RULES)
    fast = [f.code for f in lint_source(code, filename, options)]
    assert fast == [f.code for f in lint_source(code, filename, options, fast=False)]
    return fast


MODULE_SKIP = """\
import pytest
import torch


def _is_sm_10x():
    return torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 10


if not (torch.cuda.is_available() and _is_sm_10x()):
    pytest.skip("needs an SM 10.x GPU", allow_module_level=True)


def test_kernel():
    x = torch.zeros(3, device="cuda")
    return x
"""


def test_a_module_level_skip_guards_the_whole_test_module():
    """torchao's kernel tests (set 25's precision sample) skip their module without CUDA
    after defining a helper: like `pytestmark`, the skip reaches every test."""
    assert findings(MODULE_SKIP) == []
    one_line = MODULE_SKIP.replace('if not (torch.cuda.is_available() and _is_sm_10x()):\n    pytest.skip(',
                                   'if not torch.cuda.is_available(): pytest.skip(')
    assert findings(one_line) == []
    # an early exit that ends the import some other way reaches no function defined before or after
    returned = MODULE_SKIP.replace('    pytest.skip("needs an SM 10.x GPU", allow_module_level=True)\n',
                                   '    raise SystemExit(0)\n')
    assert findings(returned) == [(14, 30, "TDV102")]


def test_an_else_arm_that_exits_guards_the_rest_of_the_function():
    # mmrazor's latency counter: CUDA or NotImplementedError, then torch.cuda.synchronize()
    code = ("import torch\ndef measure(model):\n    if next(model.parameters()).is_cuda:\n        device = 'cuda'\n"
            "    else:\n        raise NotImplementedError('cpu')\n    torch.cuda.synchronize()\n    return device\n")
    assert lint(code, enabled=frozenset({"TDV103"})) == []
    kept = code.replace("        raise NotImplementedError('cpu')\n", "        device = 'cpu'\n")
    assert lint(kept, enabled=frozenset({"TDV103"})) == [(7, 4, "TDV103")]
