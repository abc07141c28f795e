"""Family 1: code that hard-codes CUDA and so fails on CPU-only, MPS and XPU machines.

Code under a CUDA guard (see `Analyzer.guarded`) only runs where CUDA exists and is
never reported by this family.
"""

from __future__ import annotations

import re

import libcst as cst

from ..analysis import (dotted_name, first_argument, is_cuda_literal, is_device_name, keyword, last_identifier,
                        method_call)
from .base import Rule


# Functions that test or skip by device rather than put anything on it.
_PREDICATE_RE = re.compile(r"_*(check|is|has|skip|assert|expect|only|require|get)", re.I)


def _asks_about_device(call: cst.Call) -> bool:
    """`check_device(t, device="cuda")`, `pg._get_backend(torch.device("cuda"))`,
    `partial(skipDeviceIf, device="cuda")`: the device is a question, not a placement."""
    name = last_identifier(call.func) or ""
    if name == "partial" and call.args:
        name = last_identifier(call.args[0].value) or ""
    return bool(_PREDICATE_RE.match(name))


class CudaCall(Rule):
    """`x.cuda()` on a tensor or module outside a CUDA guard.

    ## What it does
    Reports every `.cuda(...)` method call (on a tensor, an `nn.Module` or anything
    else) that is not inside a CUDA guard, i.e. code that can run on a machine
    without CUDA.

    ## Why is this bad
    `.cuda()` always means a CUDA device. Where there is none (a laptop, a CPU-only
    CI runner, Apple silicon, an Intel XPU) the call raises instead of running:
    `AssertionError: Torch not compiled with CUDA enabled` with a CPU-only build of
    PyTorch (`RuntimeError: Cannot access accelerator device when none is available.`
    for `.cuda(0)` with an index), or a `RuntimeError` such as `No CUDA GPUs are
    available` with a CUDA build on a machine without a usable GPU. The code can
    then only be run, tested and debugged on a CUDA machine.

    ## Example
    ```python
    model = Net().cuda()
    for batch in loader:
        batch = batch.cuda(non_blocking=True)
    ```

    ## Use instead
    Choose the device once, at run time, and move with `.to(device)`:
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
    ```

    ## When it is not reported
    Code under a CUDA guard only runs where CUDA exists. Guarded code is:
    - the body of `if`, `elif` and `while`, the true arm of `a if cond else b` and
      the right side of `cond and ...`, whose test calls `torch.cuda.is_available()`,
      compares `torch.cuda.device_count()` with a number, reads a flag whose name
      says CUDA or GPU (`use_cuda`, `args.cuda`, `self.use_gpu`, `opt.gpu_ids`),
      tests a device (`device.type == "cuda"`, `x.device == torch.device("cuda")`,
      `str(device).startswith("cuda")`, `x.is_cuda`, `device != "cpu"`,
      `device_id is not None`), or `and`-combines one of these;
    - the `else` arm of the negated tests (`if not torch.cuda.is_available(): ... else: ...`);
    - the code after `if not torch.cuda.is_available():` that ends in `return`,
      `raise`, `continue`, `break`, `sys.exit()` or `pytest.skip()`, and the code
      after `assert torch.cuda.is_available()`;
    - loops and comprehensions over `range(torch.cuda.device_count())`, and
      comprehensions filtered by such a test (`[x.cuda() for x in xs if use_cuda]`);
    - functions and classes decorated with
      `unittest.skipIf(not torch.cuda.is_available(), ...)`,
      `unittest.skipUnless(torch.cuda.is_available(), ...)`, the same
      `pytest.mark.skipif(...)`, or a decorator whose name says CUDA or GPU
      (`@requires_cuda`, `@gpu_only`); functions and classes whose own name says so
      (`def to_cuda(x)`, `class TestGPUKernels`); a test module after such a
      `pytestmark = ...`.

    Also not reported: `cuda(...)` called as a function of an imported module
    (`some_module.cuda(x)`). Code under `try:` whose `except` catches the failure
    *is* reported: the fallback hides the bug, it does not guard against it.

    ## How to silence it
    - One line: `x = x.cuda()  # noqa: TDV101`.
    - A whole project: `extend-ignore = TDV101` in the `[flake8]` section of
      `setup.cfg`, `tox.ini` or `.flake8` (the standalone command reads it too).
    - Your own guards: name your flags and decorators in
      `torchdevice-guard-names = HAS_ACCEL, requires_accelerator` (or
      `--guard-names` on the command line); code they guard is then not reported.
    """

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
    """The string `"cuda"` / `"cuda:N"` used as a device outside a CUDA guard.

    ## What it does
    Reports a CUDA device string (`"cuda"`, `"cuda:0"`, `f"cuda:{rank}"`) where it
    picks the device, outside a CUDA guard:
    - the `device=` or `map_location=` keyword of any call
      (`torch.zeros(n, device="cuda")`, `torch.load(f, map_location="cuda")`);
    - the first argument of `torch.device(...)` (also `with torch.device("cuda"):`),
      `torch.set_default_device(...)` and `torch.get_device_module(...)`;
    - the first positional argument of `.to(...)` (`x.to("cuda:0")`).

    ## Why is this bad
    The program then only runs where CUDA exists. Without it, the first tensor
    placed on that device raises: `AssertionError: Torch not compiled with CUDA
    enabled` with a CPU-only build of PyTorch (a `RuntimeError` such as `No CUDA GPUs
    are available` with a CUDA build and no GPU), and `torch.load(f,
    map_location="cuda")` raises `RuntimeError: Attempting to deserialize object on a
    CUDA device but torch.cuda.is_available() is False...`.

    ## Example
    ```python
    device = torch.device("cuda")
    mask = torch.ones(n, device="cuda:0")
    state = torch.load(path, map_location="cuda")
    ```

    ## Use instead
    Choose the device at run time and pass it around:
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    mask = torch.ones(n, device=device)
    state = torch.load(path, map_location=device)
    ```

    ## When it is not reported
    - The selection idiom `torch.device("cuda" if torch.cuda.is_available() else "cpu")`.
    - Comparisons and other strings that do not pick a device:
      `device.type == "cuda"`, `x.device == torch.device("cuda")`, `print("cuda")`,
      `torch.autocast("cuda")` (the `device_type` of autocast is not a device).
    - Calls that ask about a device rather than put anything on it: functions whose
      name starts with `check`, `is`, `has`, `skip`, `assert`, `expect`, `only`,
      `require` or `get` (`check_device(t, device="cuda")`,
      `pg._get_backend(torch.device("cuda"))`, `partial(skipDeviceIf, device="cuda")`).
    - A parameter default such as `def build(device="cuda"):` or
      `device=torch.device("cuda")`; callers can pass another device. Set `torchdevice-check-param-defaults = true` (or
      `--check-param-defaults`) to report these too.
    - Code under a CUDA guard (`if torch.cuda.is_available():`, a flag named
      `use_cuda`, `if not torch.cuda.is_available(): return` before it, a
      `@requires_cuda` decorator, ...; TDV101's page lists them all).

    ## How to silence it
    - One line: `device = torch.device("cuda")  # noqa: TDV102`.
    - A whole project: `extend-ignore = TDV102` in the `[flake8]` section.
    - Your own guards: `torchdevice-guard-names = HAS_ACCEL, requires_accelerator`
      (or `--guard-names`); code they guard is then not reported.
    """

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
        if self.ctx.guarded or self._in_parameter_default():
            return
        if isinstance(self.ctx.parent(), (cst.Comparison, cst.ComparisonTarget)):
            return  # `x.device == torch.device("cuda")` tests a device, it does not pick one
        if _asks_about_device(node):
            return
        argument_of = self.ctx.parent(2)  # torch.device("cuda") handed to a lookup
        if isinstance(self.ctx.parent(), cst.Arg) and isinstance(argument_of, cst.Call) and _asks_about_device(argument_of):
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

    def _in_parameter_default(self) -> bool:
        """`def f(device=torch.device("cuda"))`: a default, reported only on request."""
        return any(isinstance(node, cst.Param) for node in self.ctx.stack)

    def visit_Param(self, node: cst.Param) -> None:
        if not self.options.check_param_defaults or self.ctx.guarded:
            return
        default = node.default
        if isinstance(default, cst.Call) and self.ctx.resolve(default.func) == "torch.device" and default.args:
            default = default.args[0].value
        if default is not None and is_cuda_literal(default) and is_device_name(node.name.value):
            self.report(default)


__all__ = ["CudaCall", "CudaLiteral", "dotted_name"]
