"""Family 1: code that hard-codes CUDA and so fails on CPU-only, MPS and XPU machines.

Code under a CUDA guard (see `Analyzer.guarded`) only runs where CUDA exists and is
never reported by this family.
"""

from __future__ import annotations

import libcst as cst

from ..analysis import dotted_name, first_argument, is_cuda_literal, is_device_name, keyword, method_call
from .base import Rule


class CudaCall(Rule):
    """`x.cuda()` on a tensor or module outside a CUDA guard."""

    code = "TDV101"
    name = "cuda-call"
    message = ".cuda() hard-codes CUDA and fails without a GPU; use .to(device) with a device chosen at run time"
    triggers = r"\.cuda\b"

    VALID = [
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).to(device)\n",
        "import torch\nif torch.cuda.is_available():\n    model.cuda()\n",
        "import torch\nx = x.cuda() if args.cuda else x\n",
        "import torch\ndef f(x):\n    if not torch.cuda.is_available():\n        return x\n    return x.cuda()\n",
    ]
    INVALID = [
        "import torch\nmodel = Net().cuda()  # expect: TDV101\n",
        "def f(x):\n    return x.cuda(non_blocking=True)  # expect: TDV101\n",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.guarded:
            return
        receiver = method_call(node, "cuda")
        if receiver is None:
            return
        if self.ctx.resolve(receiver) is not None:
            return  # `some_module.cuda(...)`: a function of an imported module, not a tensor
        self.report(node)


class CudaLiteral(Rule):
    """The string `"cuda"` / `"cuda:N"` used as a device outside a CUDA guard."""

    code = "TDV102"
    name = "cuda-literal"
    message = ('"cuda" hard-codes the device and fails without a GPU; use a device chosen at run time, '
               'e.g. torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    triggers = r"""["']cuda"""

    VALID = [
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
        "import torch\nif x.device.type == 'cuda':\n    pass\n",
        "import torch\ndef make(device='cuda'):\n    return torch.zeros(2, device=device)\n",
        "import torch\nif torch.cuda.is_available():\n    x = torch.zeros(2, device='cuda')\n",
    ]
    INVALID = [
        "import torch\nx = torch.zeros(2, device='cuda')  # expect: TDV102\n",
        "import torch\nx = y.to('cuda:0')  # expect: TDV102\n",
        "import torch\nwith torch.device('cuda'):  # expect: TDV102\n    pass\n",
    ]

    # Functions whose first positional argument is a device.
    DEVICE_FUNCTIONS = ("torch.device", "torch.set_default_device", "torch.get_device_module")
    DEVICE_KEYWORDS = ("device", "map_location")

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.guarded:
            return
        for name in self.DEVICE_KEYWORDS:
            arg = keyword(node, name)
            if arg is not None and is_cuda_literal(arg.value):
                self.report(arg.value)
        if self.ctx.resolve(node.func) in self.DEVICE_FUNCTIONS:
            device = first_argument(node, "type")
            if device is not None and is_cuda_literal(device) and keyword(node, "device") is None:
                self.report(device)
        elif method_call(node, "to") is not None and node.args:
            first = node.args[0]
            if first.keyword is None and first.star == "" and is_cuda_literal(first.value):
                self.report(first.value)

    def visit_Param(self, node: cst.Param) -> None:
        if not self.options.check_param_defaults or self.ctx.guarded:
            return
        if node.default is not None and is_cuda_literal(node.default) and is_device_name(node.name.value):
            self.report(node.default)


__all__ = ["CudaCall", "CudaLiteral", "dotted_name"]
