"""Family 4: multi-device wrappers that capture a module before it is on its device."""

from __future__ import annotations


import libcst as cst

from ..analysis import (Scope, dotted_name, first_argument, is_device_move, keyword, last_identifier, method_call,
                        move_target)
from .base import Rule

DATA_PARALLEL = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                 "torch.nn.parallel.data_parallel.DataParallel"}
DISTRIBUTED = {"torch.nn.parallel.DistributedDataParallel",
               "torch.nn.parallel.distributed.DistributedDataParallel"}


class WrapBeforeMove(Rule):
    """`DataParallel` / `DistributedDataParallel` wrapping a module that is not on its device yet.

    ## What it does
    Reports `nn.DataParallel(m)` and `DistributedDataParallel(m, device_ids=...)`
    (however they were imported) when, in the enclosing function or module, `m` was
    not moved to its device before the wrap. A move is an earlier `m.to(...)` or
    `m.cuda()` statement or assignment, or the argument itself being
    `m.to(...)`. Reported cases:
    - `m` was built in this scope by calling a class (`model = Net(...)`), or in
      place (`DataParallel(Net())`), or is `self.m` wrapped in `__init__`, and it is
      not moved before the wrap;
    - `m` came from elsewhere (a parameter, an attribute, a helper such as
      `build(cfg)` that may have moved it) and this scope moves it after the wrap.

    ## Why is this bad
    `DistributedDataParallel` settles devices when it is built: given `device_ids`
    for a module still on the CPU, it raises `ValueError: DistributedDataParallel
    device_ids and output_device arguments only work with single-device/multiple-device
    GPU modules or CPU modules, but got device_ids [0], output_device None, and module
    parameters {device(type='cpu')}.` `DataParallel` checks at its first forward that
    every parameter and buffer is on `device_ids[0]`, and raises `RuntimeError: module
    must have its parameters and buffers on device cuda:0 (device_ids[0]) but found
    one of them on device: cpu` when it is not. On a machine without CUDA,
    `DataParallel` just runs the module, so only a multi-GPU run shows the bug.
    Moving first is the order PyTorch documents for both wrappers.

    ## Example
    ```python
    model = Net()
    ddp = DistributedDataParallel(model, device_ids=[rank])
    ```

    ## Use instead
    ```python
    model = Net().to(rank)
    ddp = DistributedDataParallel(model, device_ids=[rank])
    ```

    ## When it is not reported
    - The module was moved earlier in the same scope, or the argument is the move
      itself (`DistributedDataParallel(model.to(rank), device_ids=[rank])`).
    - `DistributedDataParallel` without `device_ids` or `output_device`, unless the
      module is moved after the wrap: a CPU module there is plain CPU training.
    - A module handed in from outside (a parameter, `self.model` outside
      `__init__`) or returned by a helper (`model = build(cfg)`) that this scope
      does not move later: it may have been moved already.
    - An argument that is not a name or a class-like (capitalised) call
      (`DataParallel(build())`).
    - Code under a CUDA guard (`if torch.cuda.device_count() > 1:`, ...; TDV101's
      page lists them all).

    ## How to silence it
    - One line: `model = nn.DataParallel(model)  # noqa: TDV401`.
    - A whole project: `extend-ignore = TDV401` in the `[flake8]` section.
    - Your own guards: `torchdevice-guard-names = HAS_ACCEL, requires_accelerator`
      (or `--guard-names`); code they guard is then not reported.
    """

    code = "TDV401"
    name = "wrap-before-move"
    message = ("{name} wraps a module that is not on its device yet; move it first, "
               "e.g. {short}(model.to(device){extra})")
    triggers = r"\b(?:DataParallel|DistributedDataParallel)\b"

    VALID = [
        "import torch.nn as nn\nmodel = Net()\nmodel.to(device)\nmodel = nn.DataParallel(model)\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nddp = DDP(Net().to(rank), device_ids=[rank])\n",
        "import torch\nif torch.cuda.device_count() > 1:\n    model = torch.nn.DataParallel(model)\nmodel = model.to(device)\n",
    ]
    INVALID = [
        "import torch.nn as nn\nmodel = Net()\nmodel = nn.DataParallel(model)  # expect: TDV401\nmodel.to(device)\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\nddp = DDP(model, device_ids=[rank])  # expect: TDV401\n",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        target = move_target(node)
        if target is not None:
            self._on_move(target)
            return
        qualified = self.ctx.resolve(node.func)
        if qualified not in DATA_PARALLEL and qualified not in DISTRIBUTED:
            return
        if self.ctx.guarded:
            return
        module = first_argument(node, "module")
        if module is None or is_device_move(module):
            return
        distributed = qualified in DISTRIBUTED
        # DDP without device_ids on a CPU module is plain CPU training: nothing to move.
        gpu_intended = not distributed or any(
            keyword(node, name) is not None for name in ("device_ids", "output_device"))
        message = self._message(qualified, distributed)
        scope = self.ctx.function_scope()
        if isinstance(module, cst.Call):
            if _is_constructor(module) and gpu_intended:  # built in place, `DDP(Net())`: on the CPU
                self.report(node, message)
            return
        key = dotted_name(module)
        if key is None or key in scope.moved:
            return
        if gpu_intended and self._built_here(key, scope):
            self.report(node, message)
        else:
            scope.note("wraps waiting", list).append((key, node, message))

    def leave_Assign(self, node: cst.Assign) -> None:
        # `model = Net()` builds a module on the CPU; `model = build(cfg)` may have moved it.
        built = isinstance(node.value, cst.Call) and _is_constructor(node.value)
        constructed = self.ctx.function_scope().note("constructed", set)
        for target in node.targets:
            key = dotted_name(target.target)
            if key is None:
                continue
            if built:
                constructed.add(key)
            else:
                constructed.discard(key)

    def _built_here(self, key: str, scope: Scope) -> bool:
        """Was `key` constructed in this scope, on the CPU (not handed in, where the
        caller may have moved it, nor returned by a helper that may move it)?"""
        if key in scope.note("constructed", set):
            return True
        function = self.ctx.current_function
        return key.startswith("self.") and function is not None and function.name.value == "__init__"

    def _on_move(self, target: str) -> None:
        waiting = self.ctx.function_scope().note("wraps waiting", list)
        if not waiting:
            return
        for entry in [w for w in waiting if w[0] == target]:
            waiting.remove(entry)
            self.report(entry[1], entry[2])

    @staticmethod
    def _message(qualified: str, distributed: bool) -> str:
        short = qualified.rsplit(".", 1)[-1]
        extra = ", device_ids=[rank]" if distributed else ""
        return WrapBeforeMove.message.format(name=short, short=short, extra=extra)


def _is_constructor(call: cst.Call) -> bool:
    """`Net(...)`, `nn.Sequential(...)`, `Net().float()`: a class called by its
    (capitalised) name, maybe followed by casts that do not move it."""
    inner = method_call(call, "float", "half", "double", "bfloat16", "train", "eval", "requires_grad_")
    if isinstance(inner, cst.Call):
        return _is_constructor(inner)
    name = last_identifier(call.func) or ""
    return name[:1].isupper()  # Net, MLP, nn.Sequential
