"""TDV104 uncalled-device-method: a device method or query referenced where a call was meant.

Reported at the method's name (where the missing `()` goes).
"""

from __future__ import annotations

import pytest

from conftest import lint

ONLY = frozenset({"TDV104"})


def tdv104(code: str, **options):
    return lint(code, enabled=ONLY, **options)


REPORTED = {
    "if is_available": ("import torch\nif torch.cuda.is_available:\n    pass\n", [(2, 14)]),
    "th alias": ("import torch as th\nif th.cuda.is_available:\n    pass\n", [(2, 11)]),
    "from torch.cuda import is_available": (
        "from torch.cuda import is_available\nif is_available:\n    pass\n", [(2, 3)]),
    "cuda.is_available without a torch import": ("if cuda.is_available:\n    pass\n", [(1, 8)]),
    "while": ("import torch\nwhile torch.cuda.is_available:\n    break\n", [(2, 17)]),
    "ternary": ("import torch\nd = 'cuda' if torch.cuda.is_available else 'cpu'\n", [(2, 25)]),
    "inside torch.device": ("import torch\nd = torch.device('cuda' if torch.cuda.is_available else 'cpu')\n",
                            [(2, 38)]),
    "and": ("import torch\nuse = torch.cuda.is_available and not args.no_cuda\n", [(2, 17)]),
    "not": ("import torch\nif not torch.cuda.is_available:\n    pass\n", [(2, 18)]),
    "assert": ("import torch\nassert torch.cuda.is_available\n", [(2, 18)]),
    "device_count compared": ("import torch\nif torch.cuda.device_count > 1:\n    pass\n", [(2, 14)]),
    "device_count compared, reversed": ("import torch\nmulti = 1 < torch.cuda.device_count\n", [(2, 23)]),
    "mps is_available": ("import torch\nif torch.backends.mps.is_available:\n    pass\n", [(2, 22)]),
    "returned query": ("import torch\ndef has_gpu():\n    return torch.cuda.is_available\n", [(3, 22)]),
    "return net.cuda": ("def build(net):\n    return net.cuda\n", [(2, 15)]),
    "return net.cpu": ("def build(net):\n    return net.cpu\n", [(2, 15)]),
    "x = x.to": ("x = x.to\n", [(1, 6)]),
    "self.net = self.net.cuda": ("class T:\n    def go(self):\n        self.net = self.net.cuda\n", [(3, 28)]),
    "net = Net().cuda": ("net = Net().cuda\n", [(1, 12)]),
    "bare statement": ("model.cuda\n", [(1, 6)]),
    "bare .to statement": ("def f(x):\n    x.to\n", [(2, 6)]),
    "return self.cuda in a module": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def moved(self):\n        return self.cuda\n", [(4, 20)]),
    "multi-line chain": ("model = (Net()\n         .cuda)\n", [(2, 10)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv104(code) == [(line, col, "TDV104") for line, col in expected]


NOT_REPORTED = {
    "called": "import torch\nif torch.cuda.is_available():\n    model.cuda()\nx = x.to(device)\n",
    "callback to map": "import torch\nxs = list(map(torch.Tensor.cuda, xs))\n",
    "callback keyword": "model.apply(fn=x.cuda)\n",
    "callback argument": "ys = map(lambda t: t, xs)\nrun(x.cuda)\n",
    "saved before a patch": "import torch\noriginal = torch.cuda.is_available\n",
    "monkeypatched": "import torch\ntorch.cuda.is_available = lambda: False\n",
    "patched with mock": "import torch\nfrom unittest import mock\nwith mock.patch.object(torch.cuda, 'is_available'):\n    pass\n",
    "flags named cuda": "if args.cuda:\n    pass\nuse = opt.cuda and cfg.cpu\nreturn_value = config.cuda\n",
    "return a flag": "def f(args):\n    return args.cuda\n",
    "return self.cuda outside a module": "class Options:\n    def uses_gpu(self):\n        return self.cuda\n",
    "return msg.to": "def recipient(msg):\n    return msg.to\n",
    "alias under another name": "move = x.to\n",
    "is_cuda is a property": "if x.is_cuda:\n    pass\n",
    "module attribute": "import torch\nbackend = torch.cuda\n",
    "numba cuda": "from numba import cuda\nif cuda.is_available():\n    pass\n",
    "getattr check": "import torch\nok = hasattr(torch.cuda, 'is_available')\n",
    "in a list of checks": "import torch\nchecks = [torch.cuda.is_available, torch.backends.mps.is_available]\n",
    "callable test": "import torch\nif callable(torch.cuda.is_available):\n    pass\n",
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv104(code) == []


def test_code_under_an_uncalled_test_is_unguarded():
    code = ("import torch\nif torch.cuda.is_available:\n    model = model.cuda()\n"
            "    x = torch.zeros(2, device='cuda')\n    torch.cuda.synchronize()\n")
    assert lint(code, enabled=frozenset({"TDV101", "TDV102", "TDV103", "TDV104"})) == [
        (2, 14, "TDV104"), (3, 18, "TDV101"), (4, 30, "TDV102"), (5, 4, "TDV103")]


def test_messages_say_what_to_add():
    from flake8_torchdevice.engine import Options, lint_source
    source = "import torch\nif torch.cuda.is_available:\n    pass\ndef f(net):\n    return net.cuda\n"
    messages = [f.message for f in lint_source(source, "t.py", Options(enabled=ONLY))]
    assert messages == ["torch.cuda.is_available without () is always true; call it: torch.cuda.is_available()",
                        ".cuda without () does not move anything; call it: .cuda(...)"]


FIXES = {
    "is_available": ("import torch\nif torch.cuda.is_available:\n    pass\n",
                     "import torch\nif torch.cuda.is_available():\n    pass\n"),
    "imported name": ("from torch.cuda import is_available\nok = not is_available\n",
                      "from torch.cuda import is_available\nok = not is_available()\n"),
    "device_count compared": ("import torch\nmulti = torch.cuda.device_count > 1\n",
                              "import torch\nmulti = torch.cuda.device_count() > 1\n"),
    # which device a method reference meant is not in the code: reported, not fixed
    "return net.cpu": ("def f(net):\n    return net.cpu\n", "def f(net):\n    return net.cpu\n"),
    # `.to` needs a device: reported, not fixed
    "x = x.to": ("x = x.to\n", "x = x.to\n"),
}


@pytest.mark.parametrize("before, after", FIXES.values(), ids=list(FIXES))
def test_fix(before, after):
    from flake8_torchdevice.fix import fix_source
    options = __import__("flake8_torchdevice.engine", fromlist=["Options"]).Options(enabled=ONLY)
    assert fix_source(before, "t.py", options).text == after
    assert fix_source(after, "t.py", options).text == after
