"""TDV101 cuda-call: `x.cuda()` outside a CUDA guard (reported at the `cuda` name, where a noqa goes)."""

from __future__ import annotations

import pytest

from conftest import lint

ONLY = frozenset({"TDV101"})


def tdv101(code: str, **options):
    return lint(code, enabled=ONLY, **options)


# --------------------------------------------------------------------- reported

REPORTED = {
    "module level": ("import torch\nmodel = Net().cuda()\n", [(2, 14)]),
    "torch as th": ("import torch as th\nx = th.ones(2).cuda()\n", [(2, 15)]),
    "no import at all": ("x = x.cuda()\n", [(1, 6)]),
    "keyword args": ("def f(x):\n    return x.cuda(non_blocking=True)\n", [(2, 13)]),
    "device index": ("y = x.cuda(0)\n", [(1, 6)]),
    "bare statement": ("model.cuda()\n", [(1, 6)]),
    "attribute receiver": ("class T:\n    def go(self):\n        self.model.cuda()\n", [(3, 19)]),
    "in a method of nn.Module": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n        return self.fc(x.cuda())\n",
        [(4, 25)]),
    "class body": ("class C:\n    table = lut.cuda()\n", [(2, 16)]),
    "list comprehension": ("y = [t.cuda() for t in xs]\n", [(1, 7)]),
    "dict comprehension": ("y = {k: v.cuda() for k, v in d.items()}\n", [(1, 10)]),
    "generator": ("y = tuple(t.cuda() for t in xs)\n", [(1, 12)]),
    "lambda": ("f = lambda t: t.cuda()\n", [(1, 16)]),
    "nested function": ("def outer():\n    def inner(t):\n        return t.cuda()\n    return inner\n", [(3, 17)]),
    "chained": ("batch = batch.float().cuda()\n", [(1, 22)]),
    "two on one line": ("a, b = x.cuda(), y.cuda()\n", [(1, 9), (1, 19)]),
    "call argument": ("loss = crit(out, y.cuda())\n", [(1, 19)]),
    # The move of torch.load(...).cuda() is TDV101; the load itself is TDV301 (not enabled here).
    "after torch.load": ("import torch\nmodel = torch.load('m.pth').cuda()\n", [(2, 28)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv101(code) == [(line, col, "TDV101") for line, col in expected]


# ------------------------------------------------------------------ CUDA guards

GUARDED = {
    "if is_available": "import torch\nif torch.cuda.is_available():\n    x.cuda()\n",
    "if is_available, th alias": "import torch as th\nif th.cuda.is_available():\n    x.cuda()\n",
    "from torch import cuda": "from torch import cuda\nif cuda.is_available():\n    x.cuda()\n",
    "elif": ("import torch\nif mode == 'a':\n    pass\nelif torch.cuda.is_available():\n    x.cuda()\n"),
    "while": "import torch\nwhile torch.cuda.is_available():\n    x.cuda()\n",
    "ternary true arm": "import torch\nx = x.cuda() if torch.cuda.is_available() else x\n",
    "device_count > 1": "import torch\nif torch.cuda.device_count() > 1:\n    x.cuda()\n",
    "device_count >= 1": "import torch\nif torch.cuda.device_count() >= 1:\n    x.cuda()\n",
    "device_count != 0": "import torch\nif torch.cuda.device_count() != 0:\n    x.cuda()\n",
    "device_count == 0 else arm": "import torch\nif torch.cuda.device_count() == 0:\n    pass\nelse:\n    x.cuda()\n",
    "use_cuda": "if use_cuda:\n    x.cuda()\n",
    "args.cuda": "if args.cuda:\n    x.cuda()\n",
    "self.use_gpu": "class T:\n    def go(self, x):\n        if self.use_gpu:\n            x = x.cuda()\n        return x\n",
    "opt.gpu_ids": "if opt.gpu_ids:\n    x.cuda()\n",
    "len(opt.gpu_ids) > 0": "if len(opt.gpu_ids) > 0:\n    x.cuda()\n",
    "cfg.device == 'cuda'": "if cfg.device == 'cuda':\n    x.cuda()\n",
    "device.type == 'cuda'": "if device.type == 'cuda':\n    x.cuda()\n",
    "str(device).startswith('cuda')": "if str(device).startswith('cuda'):\n    x.cuda()\n",
    "x.is_cuda": "if y.is_cuda:\n    x.cuda()\n",
    "device != 'cpu'": "if device != 'cpu':\n    x.cuda()\n",
    "not args.no_cuda": "if not args.no_cuda:\n    x.cuda()\n",
    "and, guard first": "import torch\nif torch.cuda.is_available() and big:\n    x.cuda()\n",
    "and, guard last": "import torch\nif big and torch.cuda.is_available():\n    x.cuda()\n",
    "else of not is_available": "import torch\nif not torch.cuda.is_available():\n    pass\nelse:\n    x.cuda()\n",
    "else of ternary with not": "import torch\nx = x if not torch.cuda.is_available() else x.cuda()\n",
    "early return": ("import torch\ndef f(x):\n    if not torch.cuda.is_available():\n        return x\n"
                     "    return x.cuda()\n"),
    "early raise": ("import torch\ndef f(x):\n    if not torch.cuda.is_available():\n"
                    "        raise RuntimeError('needs a GPU')\n    return x.cuda()\n"),
    "early continue": ("import torch\nfor x in xs:\n    if not torch.cuda.is_available():\n        continue\n"
                       "    x.cuda()\n"),
    "sys.exit": "import sys\nimport torch\nif not torch.cuda.is_available():\n    sys.exit(1)\nx.cuda()\n",
    "pytest.skip": ("import pytest\nimport torch\ndef test_a():\n    if not torch.cuda.is_available():\n"
                    "        pytest.skip('gpu')\n    x.cuda()\n"),
    "assert": "import torch\ndef test_a():\n    assert torch.cuda.is_available()\n    x.cuda()\n",
    "skipIf(not ...)": ("import unittest\nimport torch\n@unittest.skipIf(not torch.cuda.is_available(), 'gpu')\n"
                        "def test_a():\n    x.cuda()\n"),
    "skipUnless on a class": ("import unittest\nimport torch\n@unittest.skipUnless(torch.cuda.is_available(), 'gpu')\n"
                              "class T(unittest.TestCase):\n    def test_a(self):\n        x.cuda()\n"),
    "pytest.mark.skipif": ("import pytest\nimport torch\n"
                           "@pytest.mark.skipif(not torch.cuda.is_available(), reason='gpu')\n"
                           "def test_a():\n    x.cuda()\n"),
    "requires_cuda": "@requires_cuda\ndef test_a():\n    x.cuda()\n",
    "gpu_only": "@gpu_only\ndef test_a():\n    x.cuda()\n",
    "device compared with torch.device": "import torch\nif x.device == torch.device('cuda'):\n    x.cuda()\n",
    "one-line early return": "import torch\ndef f():\n    if not torch.cuda.is_available(): return\n    x.cuda()\n",
    "early break in a loop": ("import torch\ndef f():\n    while True:\n        if not torch.cuda.is_available():\n"
                              "            break\n        x.cuda()\n"),
    "assert with a message": "import torch\ndef f():\n    assert torch.cuda.is_available(), 'GPU'\n    x.cuda()\n",
    "early exit with or": ("import torch\ndef f(x):\n    if not torch.cuda.is_available() or x is None:\n"
                           "        return\n    x.cuda()\n"),
    "elif of a negated test": "import torch\nif not torch.cuda.is_available():\n    pass\nelif big:\n    x.cuda()\n",
    "module-level early raise, module code after it": (
        "import torch\nif not torch.cuda.is_available():\n    raise ImportError('gpu')\nx.cuda()\n"),
    "comprehension filter": "import torch\nys = [x.cuda() for x in xs if torch.cuda.is_available()]\n",
    "nested comprehension filter": "ys = {k: x.cuda() for k, x in d.items() for _ in r if use_cuda}\n",
    "and short-circuit": "import torch\nok = torch.cuda.is_available() and x.cuda()\n",
    "and chain short-circuit": "import torch\nok = torch.cuda.is_available() and big and x.cuda()\n",
    "or short-circuit of a negated test": "import torch\nok = not torch.cuda.is_available() or x.cuda()\n",
    "a flag parameter that a call sets": (
        "import torch\ndef to_var(x, use_cuda=True):\n    if use_cuda:\n        x = x.cuda()\n    return x\n"
        "a = to_var(torch.zeros(1))\nb = to_var(torch.zeros(1), use_cuda=torch.cuda.is_available())\n"),
    "a flag parameter set by position": (
        "import torch\ndef to_var(x, use_cuda=True):\n    if use_cuda:\n        x = x.cuda()\n    return x\n"
        "a = to_var(torch.zeros(1), torch.cuda.is_available())\n"),
    "a flag parameter the function rebinds": (
        "import torch\ndef to_var(x, use_cuda=True):\n    use_cuda = use_cuda and torch.cuda.is_available()\n"
        "    if use_cuda:\n        x = x.cuda()\n    return x\na = to_var(torch.zeros(1))\n"),
    "a flag parameter of a function the file never calls": (
        "def to_var(x, use_cuda=True):\n    if use_cuda:\n        x = x.cuda()\n    return x\n"),
    "a flag parameter of a function handed on": (
        "def to_var(x, use_cuda=True):\n    if use_cuda:\n        x = x.cuda()\n    return x\n"
        "a = to_var(x)\nys = list(map(to_var, xs))\n"),
    "a flag parameter of a function called with **kwargs": (
        "def to_var(x, use_cuda=True):\n    if use_cuda:\n        x = x.cuda()\n    return x\n"
        "a = to_var(x)\nb = to_var(x, **options)\n"),
    "function defined under a guard": ("import torch\nif torch.cuda.is_available():\n    def f(x):\n"
                                       "        return x.cuda()\n"),
}


@pytest.mark.parametrize("code", GUARDED.values(), ids=list(GUARDED))
def test_guarded_is_not_reported(code):
    assert tdv101(code) == []


NOT_GUARDS = {
    "try/except": ("import torch\ntry:\n    x = x.cuda()\nexcept AssertionError:\n    pass\n", [(3, 10)]),
    "is_available without a call": ("import torch\nif torch.cuda.is_available:\n    x.cuda()\n", [(3, 6)]),
    "body of not is_available": ("import torch\nif not torch.cuda.is_available():\n    x.cuda()\n", [(3, 6)]),
    "else arm of is_available": ("import torch\nif torch.cuda.is_available():\n    pass\nelse:\n    x.cuda()\n",
                                 [(5, 6)]),
    "false arm of ternary": ("import torch\nx = x if torch.cuda.is_available() else x.cuda()\n", [(2, 42)]),
    "or-combination": ("import torch\nif big or torch.cuda.is_available():\n    x.cuda()\n", [(3, 6)]),
    "device_count == 0": ("import torch\nif torch.cuda.device_count() == 0:\n    x.cuda()\n", [(3, 6)]),
    "device_count < 1": ("import torch\nif torch.cuda.device_count() < 1:\n    x.cuda()\n", [(3, 6)]),
    "negative flag": ("if args.no_cuda:\n    x.cuda()\n", [(2, 6)]),
    "cpu flag": ("if use_cpu:\n    x.cuda()\n", [(2, 6)]),
    "unrelated flag": ("if verbose:\n    x.cuda()\n", [(2, 6)]),
    "early exit without exit statement": (
        "import torch\ndef f(x):\n    if not torch.cuda.is_available():\n        print('no')\n    return x.cuda()\n",
        [(5, 13)]),
    "early exit does not leak into the next function": (
        "import torch\ndef f(x):\n    if not torch.cuda.is_available():\n        return x\n    return 1\n"
        "def g(x):\n    return x.cuda()\n", [(7, 13)]),
    "early exit does not leak out of its block": (
        "import torch\ndef f(x, c):\n    if c:\n        if not torch.cuda.is_available():\n            return\n"
        "        x.cuda()\n    x.cuda()\n", [(7, 6)]),
    "guard in class body does not cover methods": (
        "import torch\nclass M:\n    if torch.cuda.is_available():\n        y = 1\n    def f(self):\n"
        "        return self.net.cuda()\n", [(6, 24)]),
    "comprehension filter that says nothing": ("ys = [x.cuda() for x in xs if x is not None]\n", [(1, 8)]),
    "or short-circuit": ("import torch\nok = torch.cuda.is_available() or x.cuda()\n", [(2, 36)]),
    "and with an unrelated flag": ("ok = flag and x.cuda()\n", [(1, 16)]),
    "elif of a positive test": ("import torch\nif torch.cuda.is_available():\n    pass\nelif big:\n    x.cuda()\n",
                                [(5, 6)]),
    "assert of a negated test": ("import torch\ndef f():\n    assert not torch.cuda.is_available()\n    x.cuda()\n",
                                 [(4, 6)]),
    "early exit with and": ("import torch\ndef f(x):\n    if not torch.cuda.is_available() and x is None:\n"
                            "        return\n    x.cuda()\n", [(5, 6)]),
    "unknown decorator": ("@slow\ndef test_a():\n    x.cuda()\n", [(3, 6)]),
    "skipIf without not": ("import unittest\nimport torch\n@unittest.skipIf(torch.cuda.is_available(), 'cpu only')\n"
                           "def test_a():\n    x.cuda()\n", [(5, 6)]),
    # The spec: an early exit or assert never reaches past its own function. (A raise at the
    # top of the module, before its functions, makes the module CUDA-only: issue 15, part 7,
    # tests/test_cuda_only_modules.py.)
    "module-level early raise does not reach into functions defined before it": (
        "import torch\ndef f():\n    return x.cuda()\nif not torch.cuda.is_available():\n"
        "    raise ImportError('gpu')\n", [(3, 13)]),
    "outer call of a guarded ternary": (
        "import torch\nx = (x.cuda() if torch.cuda.is_available() else x).cuda()\n", [(2, 51)]),
    # mmpose's AE loss: `need_cuda=True`, and no call of the helper in the file sets it
    "a flag parameter that every call leaves at True": (
        "import torch\ndef make_input(t, need_cuda=True):\n    if need_cuda:\n        t = t.cuda()\n    return t\n"
        "a = make_input(torch.zeros(1))\nb = make_input(torch.zeros(1), requires_grad=False)\n", [(4, 14)]),
    "a method's flag that every call leaves at True": (
        "class Loss:\n    def _input(self, t, use_gpu=True):\n        if use_gpu:\n            t = t.cuda()\n"
        "        return t\n    def forward(self, x):\n        return self._input(x)\n", [(4, 18)]),
}


@pytest.mark.parametrize("code, expected", NOT_GUARDS.values(), ids=list(NOT_GUARDS))
def test_not_a_guard(code, expected):
    assert tdv101(code) == [(line, col, "TDV101") for line, col in expected]


def test_extra_guard_names_from_options():
    flag = "if HAS_ACCEL:\n    x.cuda()\n"
    decorated = "@requires_accelerator\ndef f(x):\n    return x.cuda()\n"
    assert tdv101(flag) == [(2, 6, "TDV101")]
    assert tdv101(decorated) == [(3, 13, "TDV101")]
    names = ("HAS_ACCEL", "requires_accelerator")
    assert tdv101(flag, guard_names=names) == []
    assert tdv101(decorated, guard_names=names) == []


def test_function_of_an_imported_module_is_not_a_tensor_method():
    assert tdv101("import mylib\ny = mylib.cuda(x)\n") == []
    assert tdv101("from numba import cuda\ncuda.to_device(a)\n") == []


def test_other_families_not_reported_when_only_tdv101_enabled():
    code = "import torch\nmodel = torch.load('m.pth').cuda()\n"
    assert lint(code) == [(2, 8, "TDV301"), (2, 28, "TDV101")]


# Every guard form also covers the other rules that respect guards (not TDV401:
# tests/test_rule_tdv401.py checks that no guard silences it).
PREAMBLE = "import torch\nimport torch.nn as nn\n"
OTHER_RULES = {
    "TDV102": "x.to('cuda')",
    "TDV301": "torch.load(x)",
}


@pytest.mark.parametrize("code", GUARDED.values(), ids=list(GUARDED))
@pytest.mark.parametrize("rule", list(OTHER_RULES))
def test_guard_forms_cover_other_rules(code, rule):
    guarded = PREAMBLE + code.replace("x.cuda()", OTHER_RULES[rule])
    assert OTHER_RULES[rule] in guarded
    assert lint(guarded, enabled=frozenset({rule})) == []


@pytest.mark.parametrize("rule", list(OTHER_RULES))
def test_other_rules_report_without_the_guard(rule):
    assert [c for _, _, c in lint(PREAMBLE + OTHER_RULES[rule] + "\n", enabled=frozenset({rule}))] == [rule]


def test_multi_line_chain_is_reported_on_the_cuda_line_where_noqa_works():
    code = "import torch\nmodel = (Net()\n         .float()\n         .cuda())\n"
    assert tdv101(code) == [(4, 10, "TDV101")]
    silenced = code.replace(".cuda())", ".cuda())  # noqa: TDV101")
    from flake8_torchdevice.engine import Options, lint_source
    assert [f.line for f in lint_source(silenced, "t.py", Options(enabled=ONLY))] == [4]
    from conftest import run_module
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "chain.py"), "w") as handle:
            handle.write(silenced)
        assert run_module("flake8", ["--select=TDV", "chain.py"], cwd=folder).stdout == ""
        with open(os.path.join(folder, "chain.py"), "w") as handle:
            handle.write(code)
        assert run_module("flake8", ["--select=TDV", "chain.py"], cwd=folder).stdout.startswith(
            "chain.py:4:11: TDV101 ")


FIXES = {
    "device in scope": ("import torch\ndef f(x: torch.Tensor, m):\n    return m.cuda()\n",
                        "import torch\ndef f(x: torch.Tensor, m):\n    return m.to(x.device)\n"),
    "non_blocking kept": ("import torch\ndevice = torch.device(args.device)\nb = b.cuda(non_blocking=True)\n",
                          "import torch\ndevice = torch.device(args.device)\nb = b.to(device, non_blocking=True)\n"),
    "multi-line chain": ("import torch\ndevice = torch.device(args.device)\nm = (Net()\n     .cuda())\n",
                         "import torch\ndevice = torch.device(args.device)\nm = (Net()\n     .to(device))\n"),
    # a GPU index names a device the fix cannot know
    "index": ("import torch\ndevice = torch.device(args.device)\nm = m.cuda(1)\n",
              "import torch\ndevice = torch.device(args.device)\nm = m.cuda(1)\n"),
    # no device in scope: only with --add-device
    "no device": ("import torch\nm = m.cuda()\n", "import torch\nm = m.cuda()\n"),
}


@pytest.mark.parametrize("before, after", FIXES.values(), ids=list(FIXES))
def test_fix(before, after):
    from flake8_torchdevice.engine import Options
    from flake8_torchdevice.fix import fix_source
    assert fix_source(before, "t.py", Options(enabled=ONLY)).text == after
    assert fix_source(after, "t.py", Options(enabled=ONLY)).text == after


def test_fix_with_added_device():
    from flake8_torchdevice.engine import Options
    from flake8_torchdevice.fix import fix_source
    result = fix_source("import torch\nm = m.cuda()\n", "t.py", Options(enabled=ONLY), add_device=True).text
    assert result == ('import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
                      "m = m.to(device)\n")


# Issue 15, part 5: a test that a tensor is already on CUDA guards its arm (research code).
TENSOR_TYPE_GUARDS = {
    "isinstance of a legacy CUDA type": "import torch\nif isinstance(x.data, torch.cuda.FloatTensor):\n    y = y.cuda()\n",
    "isinstance, imported type": "from torch.cuda import LongTensor\nif isinstance(x, LongTensor):\n    y = y.cuda()\n",
    "isinstance of a tuple of CUDA types": (
        "import torch\nif isinstance(x, (torch.cuda.FloatTensor, torch.cuda.HalfTensor)):\n    y = y.cuda()\n"),
    "type() == a CUDA type name": "def f(x, y):\n    if x.type() == 'torch.cuda.FloatTensor':\n        y = y.cuda()\n    return y\n",
    "type() != a CUDA type name, else arm": (
        "def f(x, y):\n    if x.data.type() != 'torch.cuda.FloatTensor':\n        pass\n    else:\n        y = y.cuda()\n"
        "    return y\n"),
    "type() startswith": "def f(x, y):\n    if x.type().startswith('torch.cuda'):\n        y = y.cuda()\n    return y\n",
    "'cuda' in type()": "def f(x, y):\n    if 'cuda' in x.type():\n        y = y.cuda()\n    return y\n",
    "is_cuda": "def f(x, y):\n    if x.is_cuda:\n        y = y.cuda()\n    return y\n",
    "is_cuda of an attribute": "def f(self, y):\n    if self.weight.data.is_cuda:\n        y = y.cuda()\n    return y\n",
}


@pytest.mark.parametrize("code", TENSOR_TYPE_GUARDS.values(), ids=list(TENSOR_TYPE_GUARDS))
def test_tensor_already_on_cuda_guards(code):
    assert tdv101(code) == []


TENSOR_TYPE_NOT_GUARDS = {
    "not isinstance": ("import torch\nif not isinstance(x, torch.cuda.FloatTensor):\n    y = y.cuda()\n", [(3, 10)]),
    "isinstance of a CPU type": ("import torch\nif isinstance(x, torch.FloatTensor):\n    y = y.cuda()\n", [(3, 10)]),
    "isinstance of a mixed tuple": (
        "import torch\nif isinstance(x, (torch.cuda.FloatTensor, torch.FloatTensor)):\n    y = y.cuda()\n", [(3, 10)]),
    "type() == a CPU type name": ("def f(x, y):\n    if x.type() == 'torch.FloatTensor':\n        y = y.cuda()\n"
                                  "    return y\n", [(3, 14)]),
    # `torch.cuda` is always imported with torch: no test of CUDA
    "'torch.cuda' in sys.modules": ("import sys\nif 'torch.cuda' in sys.modules:\n    y = y.cuda()\n", [(3, 10)]),
    "a module name's prefix": ("if fn.__module__.startswith('torch.cuda'):\n    y = y.cuda()\n", [(2, 10)]),
    "else arm of type() == a CUDA type": (
        "def f(x, y):\n    if x.type() == 'torch.cuda.FloatTensor':\n        pass\n    else:\n        y = y.cuda()\n"
        "    return y\n", [(5, 14)]),
}


@pytest.mark.parametrize("code, expected", TENSOR_TYPE_NOT_GUARDS.values(), ids=list(TENSOR_TYPE_NOT_GUARDS))
def test_tensor_type_tests_that_are_no_guard(code, expected):
    assert tdv101(code) == [(line, col, "TDV101") for line, col in expected]
