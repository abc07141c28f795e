"""TDV102 cuda-literal: a CUDA device string picking the device outside a guard.

The finding is on the string literal itself, not on the call around it.
"""

from __future__ import annotations

import pytest

from conftest import lint

ONLY = frozenset({"TDV102"})


def tdv102(code: str, **options):
    return lint(code, enabled=ONLY, **options)


REPORTED = {
    "torch.device": ("import torch\ndevice = torch.device('cuda')\n", [(2, 22)]),
    "torch as th, device= keyword": ("import torch as th\nx = th.zeros(2, device='cuda:0')\n", [(2, 23)]),
    "from torch import zeros": ("from torch import zeros\nx = zeros(2, device='cuda')\n", [(2, 20)]),
    "any call's device= keyword": ("x = make_batch(n, device='cuda')\n", [(1, 25)]),
    ".to('cuda')": ("x = y.to('cuda')\n", [(1, 9)]),
    ".to(f'cuda:{rank}')": ("x = y.to(f'cuda:{rank}')\n", [(1, 9)]),
    "built with +": ("import torch\nstate = torch.load(p, map_location='cuda:' + str(rank))\n", [(2, 35)]),
    "built with .format": ("import torch\nd = torch.device('cuda:{}'.format(rank))\n", [(2, 17)]),
    "built with %": ("x = y.to('cuda:%d' % rank)\n", [(1, 9)]),
    ".to(device='cuda') keyword": ("x = y.to(dtype=torch.float16, device='cuda')\n", [(1, 37)]),
    "set_default_device": ("import torch\ntorch.set_default_device('cuda')\n", [(2, 25)]),
    "with torch.device": ("import torch\nwith torch.device('cuda'):\n    pass\n", [(2, 18)]),
    "torch.device with index": ("import torch\nx = torch.device('cuda', 1)\n", [(2, 17)]),
    "torch.device(type=...)": ("import torch\nx = torch.device(type='cuda')\n", [(2, 22)]),
    "map_location='cuda'": ("import torch\nstate = torch.load(p, map_location='cuda')\n", [(2, 35)]),
    "import inside a function": (
        "def f():\n    import torch as tt\n    return tt.device('cuda')\n", [(3, 21)]),
    "in a method": (
        "class M:\n    def f(self):\n        return self.x.to('cuda:1')\n", [(3, 25)]),
    "comprehension": ("ys = [t.to('cuda') for t in xs]\n", [(1, 11)]),
    "lambda": ("f = lambda t: t.to('cuda')\n", [(1, 19)]),
    "nested function": ("def a():\n    def b(t):\n        return t.to('cuda')\n    return b\n", [(3, 20)]),
    "false arm of a guard": (
        "import torch\nif torch.cuda.is_available():\n    pass\nelse:\n    d = torch.device('cuda')\n", [(5, 21)]),
    "try/except is no guard": (
        "import torch\ntry:\n    x = x.to('cuda')\nexcept RuntimeError:\n    pass\n", [(3, 13)]),
    "uncalled is_available is no guard": (
        "import torch\nif torch.cuda.is_available:\n    x = x.to('cuda')\n", [(3, 13)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv102(code) == [(line, col, "TDV102") for line, col in expected]


NOT_REPORTED = {
    "selection idiom": "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
    "selection idiom, string": "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
    "selection by flag": "import torch\ndevice = torch.device('cuda:0' if args.cuda else 'cpu')\n",
    "selection by gpu_ids": "import torch\ndevice = torch.device('cuda:0' if opt.gpu_ids else 'cpu')\n",
    "comparison of type": "if device.type == 'cuda':\n    pass\n",
    "other device built with +": "x = y.to('cpu:' + str(rank))\n",
    "a name ending in cuda, formatted": "x = y.to('{}'.format(name))\n",
    "membership": "if 'cuda' in str(device):\n    pass\n",
    "comparison with torch.device": "import torch\nif x.device != torch.device('cuda'):\n    pass\n",
    "comparison, reversed": "import torch\nif torch.device('cuda:0') == x.device:\n    pass\n",
    "parameter default": "def build(device='cuda'):\n    pass\n",
    "parameter default torch.device": "import torch\ndef build(device=torch.device('cuda')):\n    pass\n",
    "not a device": "print('cuda')\nbackend = 'nccl'\n",
    "autocast device_type": "import torch\nwith torch.autocast('cuda'):\n    pass\n",
    "cpu": "x = y.to('cpu')\n",
    "not a cuda device string": "x = y.to('cudax')\n",
    "guarded by if": "import torch\nif torch.cuda.is_available():\n    x = torch.zeros(2, device='cuda')\n",
    "guarded by ternary flag": "import torch\nx = torch.ones(2, device='cuda') if use_cuda else torch.ones(2)\n",
    "guarded by device test": "import torch\nif x.device == torch.device('cuda'):\n    y = y.to('cuda')\n",
    "guarded by early exit": ("import torch\ndef f(x):\n    if not torch.cuda.is_available():\n        return x\n"
                              "    return x.to('cuda')\n"),
    "guarded by decorator": "@requires_cuda\ndef test_a():\n    x.to('cuda')\n",
    "rebound torch": "import torch\ndef f():\n    torch = None\n    return torch.device('cuda')\n",
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv102(code) == []


def test_parameter_defaults_only_on_request():
    code = "import torch\ndef build(device='cuda', dev=torch.device('cuda:0'), name='cuda'):\n    pass\n"
    assert tdv102(code) == []
    # `name` does not name a device, so its default is not one.
    assert tdv102(code, check_param_defaults=True) == [(2, 17, "TDV102"), (2, 42, "TDV102")]


def test_parameter_defaults_respect_guards():
    code = "import torch\nif torch.cuda.is_available():\n    def build(device='cuda'):\n        pass\n"
    assert tdv102(code, check_param_defaults=True) == []
    idiom = "import torch\ndef build(device=torch.device('cuda' if torch.cuda.is_available() else 'cpu')):\n    pass\n"
    assert tdv102(idiom, check_param_defaults=True) == []


def test_extra_guard_names():
    code = "import torch\nif HAS_ACCEL:\n    d = torch.device('cuda')\n"
    assert tdv102(code) == [(3, 21, "TDV102")]
    assert tdv102(code, guard_names=("HAS_ACCEL",)) == []


def test_map_location_cuda_is_not_also_tdv301():
    assert lint("import torch\nstate = torch.load(p, map_location='cuda')\n") == [(2, 35, "TDV102")]


# ------------------------------------------------------------ the root of a device

ROOTS = {
    "device = 'cuda'": ("device = 'cuda'\nx = x.to(device)\n", [(1, 9)]),
    "self.device = 'cuda:0'": ("class T:\n    def __init__(self):\n        self.device = 'cuda:0'\n", [(3, 22)]),
    "DEVICE = torch.device('cuda')": ("import torch\nDEVICE = torch.device('cuda')\n", [(2, 22)]),
    "annotated": ("device: str = 'cuda'\n", [(1, 14)]),
    "args.device": ("args.device = 'cuda'\n", [(1, 14)]),
    "argparse default": ("parser.add_argument('--device', default='cuda', help='where')\n", [(1, 40)]),
    "argparse dest": ("parser.add_argument('-d', dest='device', default='cuda:0')\n", [(1, 49)]),
    "argparse dashed name": ("parser.add_argument('--train-device', type=str, default='cuda')\n", [(1, 56)]),
    "uncalled is_available is no guard": ("import torch\nif torch.cuda.is_available:\n    device = 'cuda'\n",
                                          [(3, 13)]),
}


@pytest.mark.parametrize("code, expected", ROOTS.values(), ids=list(ROOTS))
def test_root_binding_reported(code, expected):
    assert tdv102(code) == [(line, col, "TDV102") for line, col in expected]


ROOTS_NOT_REPORTED = {
    "selection idiom": "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
    "guarded": "import torch\nif torch.cuda.is_available():\n    device = 'cuda'\nelse:\n    device = 'cpu'\n",
    "guarded by a flag": "if args.cuda:\n    device = 'cuda:0'\n",
    "not a device name": "backend = 'cuda'\nkind = 'cuda'\n",
    "class attribute default": "class Config:\n    device: str = 'cuda'\n",
    "argparse gpu option": "parser.add_argument('--gpu', default='cuda')\n",
    "argparse choices": "parser.add_argument('--device', choices=['cuda', 'cpu'], default='cpu')\n",
    "argparse positional": "parser.add_argument('device', default='cuda')\n",
    "later uses are not literals": "device = get_device()\nx = x.to(device)\n",
}


@pytest.mark.parametrize("code", ROOTS_NOT_REPORTED.values(), ids=list(ROOTS_NOT_REPORTED))
def test_root_not_reported(code):
    assert tdv102(code) == []


def test_class_attribute_reported_with_param_defaults():
    assert tdv102("class Config:\n    device = 'cuda'\n", check_param_defaults=True) == [(2, 13, "TDV102")]


FIXES = {
    "binding": ("import torch\ndevice = 'cuda'\n",
                "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"),
    "torch.device with an alias": ('import torch as th\nDEVICE = th.device("cuda")\n',
                                   'import torch as th\nDEVICE = th.device("cuda" if th.cuda.is_available() else "cpu")\n'),
    # a chosen GPU: the fix cannot know it is the right one
    "cuda:0 binding": ('import torch\ndevice = "cuda:0"\n', 'import torch\ndevice = "cuda:0"\n'),
    "argparse": ('import torch\np.add_argument("--device", default="cuda")\n',
                 'import torch\np.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")\n'),
    "a use with a device in scope": ("import torch\ndef f(x: torch.Tensor):\n    return torch.ones(2, device='cuda') + x\n",
                                     "import torch\ndef f(x: torch.Tensor):\n    return torch.ones(2, device=x.device) + x\n"),
    # without a device in scope only `fix --add-device` fixes a use (tests/test_fix.py)
    "a use without one": ("import torch\ny = x.to('cuda')\n", "import torch\ny = x.to('cuda')\n"),
    "option default with a dest": ("import torch\np.add_argument('-d', dest='device', default='cuda')\n",
                                   "import torch\np.add_argument('-d', dest='device', "
                                   "default='cuda' if torch.cuda.is_available() else 'cpu')\n"),
    "no torch import: no fix": ("y = x.to('cuda')\n", "y = x.to('cuda')\n"),
}


@pytest.mark.parametrize("before, after", FIXES.values(), ids=list(FIXES))
def test_fix(before, after):
    from flake8_torchdevice.engine import Options
    from flake8_torchdevice.fix import fix_source
    assert fix_source(before, "t.py", Options(enabled=ONLY)).text == after
    assert fix_source(after, "t.py", Options(enabled=ONLY)).text == after


# Issue 15, part 4: a CUDA literal in the CUDA arm of a device dispatch.
DISPATCH_ARMS = {
    "if args.device == 'cuda'": "    if args.device == 'cuda':\n        d = torch.device('cuda')\n    else:\n"
                                "        d = torch.device('cuda')\n",
    "if 'cuda' in str(device)": "    if 'cuda' in str(device):\n        d = torch.device('cuda')\n    else:\n"
                                "        d = torch.device('cuda')\n",
    "match device.type": "    match device.type:\n        case 'cuda':\n            d = torch.device('cuda')\n"
                         "        case _:\n            d = torch.device('cuda')\n",
}


@pytest.mark.parametrize("arms", DISPATCH_ARMS.values(), ids=list(DISPATCH_ARMS))
def test_cuda_arm_of_a_device_dispatch(arms):
    code = "import torch\ndef pick(device, args):\n" + arms + "    return d\n"
    last = code.count("\n") - 1  # the other arm's line
    col = 29 if "match" in arms else 25  # the literal
    assert tdv102(code) == [(last, col, "TDV102")]
