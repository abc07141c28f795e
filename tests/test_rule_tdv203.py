"""TDV203 discarded-to (reported at the start of the discarded call)."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint

ONLY = frozenset({"TDV203"})


def tdv203(code: str, **options):
    return lint(code, enabled=ONLY, **options)


def function(body: str, params: str = "model, loader, device") -> str:
    """`def run(<params>):` with `body` starting on line 3 (4 spaces of indent)."""
    return "import torch\ndef run(%s):\n%s" % (params, textwrap.indent(textwrap.dedent(body), "    "))


REPORTED = {
    "batch unpacked from a loader": (function("""\
        for x, y in loader:
            x.to(device)
            y.cuda()
            model(x, y)
        """), [(4, 8), (5, 8)]),
    "enumerate of a train_loader": (function("""\
        for i, (images, labels) in enumerate(train_loader):
            images.to(device)
        """), [(4, 8)]),
    "tqdm of a dataloader": (function("""\
        for x, y in tqdm(self.val_dataloader, desc="val"):
            y.to(device, non_blocking=True)
        """), [(4, 8)]),
    "whole batch unpacked afterwards": (function("""\
        for batch in loader:
            x, y = batch
            x.to(device)
        """), [(5, 8)]),
    "factory": (function("""\
        noise = torch.randn(4, 8)
        noise.to(device)
        return model(noise)
        """), [(4, 4)]),
    "tensor op and arithmetic": (function("""\
        z = torch.cat([a, b]) * 2
        z.cpu()
        return z
        """, "a, b"), [(4, 4)]),
    "float chain of a tensor": (function("""\
        t = torch.from_numpy(arr).float()
        t.to(device)
        return t
        """, "arr, device"), [(4, 4)]),
    "annotated parameter": (function("""\
        x.to(device)
        return x
        """, "x: torch.Tensor, device"), [(3, 4)]),
    "Optional[Tensor] parameter": (
        "from typing import Optional\nfrom torch import Tensor\ndef run(x: Optional[Tensor], device):\n"
        "    x.cuda()\n    return x\n", [(4, 4)]),
    "name used with a tensor-only method before": (function("""\
        x = x.unsqueeze(0)
        x.to(device)
        return x
        """, "x, device"), [(4, 4)]),
    "name used with a tensor-only method after": (function("""\
        x.to(device)
        return x.masked_fill(x > 0, 0)
        """, "x, device"), [(3, 4)]),
    "attribute assigned a tensor in this function": (
        "import torch\nclass A:\n    def setup(self, device):\n        self.t = torch.ones(3)\n"
        "        self.t.to(device)\n", [(5, 8)]),
    "a guard changes nothing": (function("""\
        x = torch.ones(3)
        if torch.cuda.is_available():
            x.cuda()
        """), [(5, 8)]),
    "module level": ("import torch\nx = torch.zeros(3)\nx.to('cpu')\n", [(3, 0)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv203(code) == [(line, col, "TDV203") for line, col in expected]


NOT_REPORTED = {
    "module moved in place": function("""\
        model.to(device)
        model.cuda()
        net = Net()
        net.to(device)
        """),
    "nn constructor": function("""\
        layer = torch.nn.Linear(3, 3)
        layer.to(device)
        """),
    "module class of the file": (
        "import torch.nn as nn\nclass Net(nn.Module):\n    pass\ndef run(device):\n    m = Net()\n"
        "    m.to(device)\n"),
    "annotated module": function("m.to(device)\n", "m: torch.nn.Module, device"),
    "unknown kind": function("""\
        x = get_input()
        x.to(device)
        thing.cuda()
        """),
    "whole batch object (PyG Data, BatchEncoding)": function("""\
        for batch in loader:
            batch.to(device)
            model(batch)
        """),
    "result used": function("""\
        for x, y in loader:
            x = x.to(device)
            out = model(y.to(device))
        return x.cuda()
        """),
    "index of enumerate is not a tensor": function("""\
        for i, batch in enumerate(loader):
            i.to(device)
        """),
    "not a loader": function("""\
        for x, y in pairs:
            x.to(device)
        """),
    "rebound to a module": function("""\
        x = torch.ones(3)
        x = Net()
        x.to(device)
        """),
    "temporary made for its side effect": function("""\
        for i in range(torch.cuda.device_count()):
            torch.zeros(1).cuda(i)
        """),
    "parameter that may be a module": function("""\
        x.to(device)
        return x
        """, "x, device"),
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv203(code) == []


def test_message_and_remedy():
    from flake8_torchdevice.engine import Options, lint_source

    code = function("for x, y in loader:\n    x.to(device)\n")
    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    assert finding.message == ("x.to() returns a moved copy and leaves the tensor where it was; "
                               "assign it: x = x.to(device)")


def test_cuda_call_is_also_tdv101():
    code = function("for x, y in loader:\n    x.cuda()\n")
    found = lint(code)
    assert (4, 8, "TDV203") in found
    assert [(line, code) for line, _, code in found if code != "TDV203"] == [(4, "TDV101")]


def test_fix_assigns_the_move_back():
    from flake8_torchdevice.fix import fix_source

    code = function("""\
        for x, y in loader:
            x.to(device, non_blocking=True)  # inputs
            model(x, y)
        t = torch.zeros(3)
        t.cpu()
        """)
    result = fix_source(code, "t.py")
    assert result.text == code.replace("x.to(device, non_blocking=True)  # inputs",
                                       "x = x.to(device, non_blocking=True)  # inputs").replace(
        "    t.cpu()", "    t = t.cpu()")
    assert fix_source(result.text, "t.py").text == result.text
