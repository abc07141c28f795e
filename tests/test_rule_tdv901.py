"""TDV901 optimizer-before-move (off by default): an optimizer built from
`model.parameters()` before `model` is moved later in the same scope."""

from __future__ import annotations

import pytest

from conftest import lint

ONLY = frozenset({"TDV901"})


def tdv901(code: str, **options):
    return lint(code, enabled=ONLY, **options)


REPORTED = {
    "module level": ("import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel.to(device)\n", [(2, 6)]),
    "in a function, cuda()": (
        "import torch\ndef main():\n    model = Net()\n    opt = torch.optim.Adam(model.parameters())\n"
        "    model.cuda()\n", [(4, 10)]),
    "reassigned move": (
        "import torch\ndef main(model, device):\n    opt = torch.optim.Adam(model.parameters())\n"
        "    model = model.to(device)\n", [(3, 10)]),
    "import torch.optim as optim": (
        "import torch.optim as optim\nopt = optim.SGD(params=model.parameters(), lr=0.1)\nmodel.to(device)\n",
        [(2, 6)]),
    "from torch.optim import AdamW": (
        "from torch.optim import AdamW\nopt = AdamW(model.parameters())\nmodel.to(device)\n", [(2, 6)]),
    "parameter groups": (
        "import torch\nopt = torch.optim.SGD([{'params': model.parameters()}, {'params': head.parameters(), 'lr': 1}])\n"
        "model.to(device)\n", [(2, 6)]),
    "filtered": (
        "import torch\nopt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=1)\n"
        "model.to(device)\n", [(2, 6)]),
    "self.model in a method": (
        "import torch\nclass Trainer:\n    def setup(self):\n"
        "        self.opt = torch.optim.Adam(self.model.parameters())\n        self.model.to(self.device)\n",
        [(4, 19)]),
    "move under a guard still counts": (
        "import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nif use_cuda:\n    model.cuda()\n",
        [(2, 6)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv901(code) == [(line, col, "TDV901") for line, col in expected]


NOT_REPORTED = {
    "moved first": "import torch\nmodel.to(device)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
    "moved by assignment first": (
        "import torch\ndef f(device):\n    model = Net().to(device)\n    opt = torch.optim.SGD(model.parameters(), lr=1)\n"),
    "never moved": "import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
    "moved in another function": (
        "import torch\ndef build(model):\n    return torch.optim.SGD(model.parameters(), lr=1)\n"
        "def run(model, device):\n    model.to(device)\n"),
    "another model moved": ("import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                            "teacher.to(device)\n"),
    "a scheduler": ("import torch\nsched = torch.optim.lr_scheduler.StepLR(model.parameters(), 1)\n"
                    "model.to(device)\n"),
    "not torch.optim": "import timm\nopt = timm.optim.Lamb(model.parameters())\nmodel.to(device)\n",
    "dtype only": "import torch\nopt = torch.optim.SGD(model.parameters(), lr=1)\nmodel.to(dtype=torch.half)\n",
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv901(code) == []


def test_off_by_default():
    code = "import torch\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel.to(device)\n"
    assert lint(code) == []
