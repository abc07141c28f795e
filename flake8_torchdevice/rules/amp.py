"""Family 5: mixed precision written for CUDA alone."""

from __future__ import annotations

import libcst as cst

from typing import Optional, Tuple

from ..analysis import first_argument, keyword, positional_args, string_value
from .base import Fix, Rule, with_first_argument

# The deprecated CUDA-only mixed-precision API, and what replaces each name.
CUDA_AMP = {
    "torch.cuda.amp.autocast": "torch.autocast(device.type)",
    "torch.cuda.amp.GradScaler": "torch.amp.GradScaler(device.type)",
    # a decorator runs where the class is defined, with no device in scope: name the type
    "torch.cuda.amp.custom_fwd": 'torch.amp.custom_fwd(device_type="cuda"), its replacement',
    "torch.cuda.amp.custom_bwd": 'torch.amp.custom_bwd(device_type="cuda"), its replacement',
}
_CUDA_AMP_NAMES = frozenset(name.rsplit(".", 1)[1] for name in CUDA_AMP)
# Device-generic mixed precision -> the parameter that names the device type.
AMP_WITH_DEVICE = {
    "torch.autocast": "device_type",
    "torch.amp.autocast": "device_type",
    "torch.amp.autocast_mode.autocast": "device_type",
    "torch.amp.GradScaler": "device",
    "torch.amp.grad_scaler.GradScaler": "device",
    "torch.GradScaler": "device",
}


class CudaAmp(Rule):
    """Mixed precision tied to CUDA: `torch.cuda.amp`, or `torch.autocast("cuda")` unguarded.

    ## What it does
    Reports
    - every use of the deprecated, CUDA-only `torch.cuda.amp.autocast`,
      `torch.cuda.amp.GradScaler`, `torch.cuda.amp.custom_fwd` and
      `torch.cuda.amp.custom_bwd`, however imported (`from torch.cuda.amp import
      autocast, GradScaler`, `from torch.cuda import amp`), guarded or not: the
      deprecation holds on every machine;
    - outside a CUDA guard, the literal device type `"cuda"` given to the
      device-generic API: `torch.autocast("cuda")`, `torch.autocast(device_type="cuda")`,
      `torch.amp.autocast("cuda")`, `torch.amp.GradScaler("cuda")`.

    ## Why is this bad
    Both only do their work on CUDA. On any other machine PyTorch warns
    (`UserWarning: CUDA is not available or torch_xla is imported. Disabling autocast.`,
    `torch.cuda.amp.GradScaler is enabled, but CUDA is not available. Disabling.`)
    and the code runs in full precision: autocast is off on the CPU, Apple silicon and
    XPU, where `torch.autocast(device.type)` works, so runs differ in speed, memory and
    numerics between machines. `torch.cuda.amp.*` also raises `FutureWarning:
    torch.cuda.amp.autocast(args...) is deprecated. Please use
    torch.amp.autocast('cuda', args...) instead.` since PyTorch 2.4.

    ## Example
    ```python
    from torch.cuda.amp import GradScaler, autocast

    scaler = GradScaler()
    with autocast():
        loss = model(x)
    ```

    ## Use instead
    Name the device type of the device the model runs on:
    ```python
    scaler = torch.amp.GradScaler(device.type)
    with torch.autocast(device.type):
        loss = model(x)
    ```

    ## When it is not reported
    - A device type chosen at run time: `torch.autocast(device.type)`,
      `torch.autocast(device_type=dev)`, `torch.autocast("cuda" if use_cuda else "cpu")`,
      and other literal types (`torch.autocast("cpu")`).
    - `torch.autocast("cuda")` under a CUDA guard (`if torch.cuda.is_available():`, a flag
      named `use_cuda`, the CUDA arm of a device dispatch: `if device.type == "cuda":`,
      `if args.device == "cuda":`, `if "cuda" in str(device):`, `match device.type: case
      "cuda":`, ...; TDV101's page lists them all).
      Likewise anywhere in a module that is CUDA-only on purpose (`accelerators/cuda.py`,
      or one whose top raises without CUDA; TDV101's page says which).
      A guard does not silence `torch.cuda.amp.*`, which is deprecated everywhere, nor
      does a CUDA-only module.
    - `torch.autocast("cuda", enabled=False)`: a region that switches CUDA autocast off
      does the same on every machine.
    - `enabled=` a CUDA test (`torch.amp.GradScaler("cuda", enabled=device.type == "cuda")`,
      `enabled=torch.cuda.is_available()`, a local flag bound from one): switched on only
      where CUDA is, off elsewhere on purpose.
    - The import statement itself (`from torch.cuda.amp import autocast`): each use is
      reported instead.
    - Another library's API imported in a `try:` whose `except ImportError:` fallback
      imports torch's (`try: from apex import amp / except ImportError: from torch.cuda
      import amp`): the name is the `try` arm's, which runs first.
    - Type annotations (`scaler: Optional[torch.cuda.amp.GradScaler] = None`, in a
      signature, a dataclass field or a variable annotation, also as a string): naming
      a type runs nothing.

    ## Fix
    When a device-aware value is in scope (and the name `torch` is imported), `fix`
    names its type, through `torch.device(...)` because the value may be a string
    (with `--add-device` and none in scope, the type of the selection it adds):
    - `torch.autocast("cuda")` -> `torch.autocast(torch.device(device).type)`;
    - `torch.cuda.amp.autocast(enabled=amp)` ->
      `torch.autocast(torch.device(device).type, enabled=amp)` (only with keyword
      arguments: the old signature starts with `enabled`, the new one with the type);
    - `torch.cuda.amp.GradScaler(...)` -> `torch.amp.GradScaler(torch.device(device).type, ...)`.
    `custom_fwd`/`custom_bwd` decorators are not fixed: they are applied when the class
    is defined, where no device is in scope. An import such as `from torch.cuda.amp
    import autocast` is left for you to remove once nothing uses it.

    ## Runtime proof
    None in `fixtures/`: on a machine without CUDA these APIs only warn and switch
    themselves off, so the program runs in full precision instead of failing
    (`tests/test_harness.py` checks that this still holds on the installed torch).

    ## How to silence it
    - One line: `with autocast():  # noqa: TDV501`.
    - A whole project: `extend-ignore = TDV501` in the `[flake8]` section.
    """

    code = "TDV501"
    silenced_by_guards = True
    name = "cuda-amp"
    message = ('mixed precision tied to CUDA is off on every other device; use torch.autocast(device.type) '
               'and torch.amp.GradScaler(device.type)')
    triggers = r"autocast|GradScaler|custom_fwd|custom_bwd"
    trigger_words = ("autocast", "GradScaler", "custom_fwd", "custom_bwd")

    VALID = [
        "import torch\nwith torch.autocast(device.type):\n    y = model(x)\n",
        "import torch\nscaler = torch.amp.GradScaler(device.type, enabled=use_amp)\n",
        "import torch\nif torch.cuda.is_available():\n    ctx = torch.autocast('cuda')\n",
    ]
    INVALID = [
        "from torch.cuda.amp import autocast\nwith autocast():  # expect: TDV501\n    y = model(x)\n",
        "import torch\nscaler = torch.cuda.amp.GradScaler()  # expect: TDV501\n",
        "import torch\nwith torch.autocast('cuda'):  # expect: TDV501\n    y = model(x)\n",
    ]

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._check_deprecated(node)

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.ctx.parent()
        if type(parent) is cst.Attribute and parent.attr is node:  # (exact class: cheap for every name)
            return  # the last name of an attribute chain: the Attribute is checked
        if isinstance(parent, cst.AssignTarget):
            return  # `GradScaler = None` in an import fallback: a binding, not a use
        self._check_deprecated(node)

    def _check_deprecated(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Attribute) and node.attr.value not in _CUDA_AMP_NAMES:
            return  # (cheap: asked of every attribute) `a.b` resolves to something ending in `.b`
        replacement = CUDA_AMP.get(self.ctx.resolve(node) or "")
        if replacement is None:
            return
        if any(isinstance(outer, (cst.Import, cst.ImportFrom)) for outer in self.ctx.stack):
            return  # the import: its uses are reported
        deprecated = self.ctx.resolve(node)
        self.report(node, f"{deprecated} is deprecated and CUDA-only (off on every other device); "
                          f"use {replacement}", fix=self._replacement_fix(node, deprecated),
                    guardable=False)  # deprecated with or without CUDA

    def _replacement_fix(self, node: cst.BaseExpression, deprecated: str) -> Optional[Fix]:
        """`torch.cuda.amp.autocast(...)` -> `torch.autocast(<type>, ...)`,
        `torch.cuda.amp.GradScaler(...)` -> `torch.amp.GradScaler(<type>, ...)`, with
        the type of the device-aware value in scope. autocast's positional parameters
        differ between the two (`enabled` comes first in the old one), so only keywords
        are carried over; GradScaler's only gain `device` in front."""
        call = self.ctx.parent()
        if not isinstance(call, cst.Call) or call.func is not node or any(a.star for a in call.args):
            return None
        if deprecated.endswith("autocast") and positional_args(call):
            return None
        found = self._device_type(call)
        if found is None:
            return None
        device_type, added = found
        torch = self.ctx.name_for("torch")
        new_func = f"{torch}.autocast" if deprecated.endswith("autocast") else f"{torch}.amp.GradScaler"
        return Fix().replace(call, call.with_changes(func=cst.parse_expression(new_func),
                                                     args=with_first_argument(call, device_type))
                             ).needs_added_device(added)

    def _device_type(self, node: cst.CSTNode) -> Optional[Tuple[str, bool]]:
        """The device type of the device-aware value in scope (or of the selection
        `fix --add-device` adds), as text, and whether it is the added one. The value
        may be a string (`device = "cuda" if ... else "cpu"`), so it goes through
        torch.device."""
        found = self.device_for_fix(node)
        torch = self.ctx.name_for("torch")
        if found is None or torch is None:
            return None
        device, added = found
        return f"{torch}.device({device}).type", added

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.guarded:
            return
        qualified = self.ctx.resolve(node.func) or ""
        parameter = AMP_WITH_DEVICE.get(qualified)
        if parameter is None:
            return
        device_type = first_argument(node, parameter)
        enabled = keyword(node, "enabled")
        if enabled is not None and isinstance(enabled.value, cst.Name) and enabled.value.value == "False":
            return  # `@autocast("cuda", enabled=False)`: a region that switches autocast off
        if enabled is not None and self.ctx.guards.cuda_polarity(enabled.value) > 0:
            return  # `GradScaler("cuda", enabled=device.type == "cuda")`: off where CUDA is not
        if device_type is not None and string_value(device_type) == "cuda":
            api = "torch.amp.GradScaler" if parameter == "device" else "torch.autocast"
            chosen = self._device_type(node)
            self.report(device_type, f'{api}("cuda") is off on every other device; '
                                     f"use {api}(device.type) with the device the model runs on",
                        fix=Fix().replace(device_type, chosen[0]).needs_added_device(chosen[1]) if chosen else None)
