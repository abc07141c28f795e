"""Family 9: opinions. Code that works, but that the PyTorch documentation advises
against; off by default (`--extend-select=TDV9`)."""

from __future__ import annotations

from typing import Iterator, List, Tuple

import libcst as cst

from ..analysis import children, dotted_name, is_cuda_literal, keyword, method_call, positional_args, string_value
from .base import Rule

# torch.optim members that are not optimizers.
_NOT_OPTIMIZERS = {"Optimizer", "lr_scheduler", "swa_utils"}


def _parameter_owners(node: cst.CSTNode) -> Iterator[str]:
    """`model` for every `model.parameters()` in `node`: in a list of parameter groups
    (`[{"params": model.parameters()}]`), `filter(..., model.parameters())`, `chain(...)`."""
    receiver = method_call(node, "parameters")
    if receiver is not None:
        owner = dotted_name(receiver)
        if owner is not None:
            yield owner
        return
    if isinstance(node, (cst.Lambda, cst.FunctionDef)):
        return
    for child in children(node):
        yield from _parameter_owners(child)


class OptimizerBeforeMove(Rule):
    """An optimizer built from `model.parameters()` before `model` is moved to its device.

    ## What it does
    Reports an optimizer (`torch.optim.SGD`, `optim.Adam`, `AdamW`, ..., however
    imported) built from `model.parameters()` (as the first argument, `params=`, a
    list of parameter groups, or through `filter`/`chain`) when `model` is moved to a
    device (`model.to(device)`, `model.cuda()`, `model = model.to(device)`) later in the
    same function or module body.

    ## Why is this bad
    The `torch.optim` documentation asks to move the model first: "If you need to move
    a model to GPU via .cuda(), please do so before constructing optimizers for it.
    Parameters of a model after .cuda() will be different objects with those before
    the call." Today `Module.to()` mostly updates parameters in place, so the common
    case works; but with `torch.__future__.set_overwrite_module_params_on_conversion(True)`,
    for modules that swap their parameters on conversion, and for optimizer state built
    before the move (a loaded `optimizer.load_state_dict(...)`), the optimizer keeps
    tensors on the old device: it then updates parameters the model no longer uses, or
    fails with `RuntimeError: Expected all tensors to be on the same device`.

    ## Example
    ```python
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.to(device)
    ```

    ## Use instead
    ```python
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    ```

    ## When it is not reported
    - The model was moved before the optimizer was built, or is never moved in the
      same scope (a move in another function, e.g. a trainer's `setup`, is not seen).
    - Learning-rate schedulers and other `torch.optim` members that are not optimizers.

    ## Fix
    None: moving a statement above another changes what runs between them; the fix is left to
    the author.

    ## Runtime proof
    None in `fixtures/`: family 9 reports style the PyTorch docs recommend, not code
    that fails on a CPU-only machine, so there is no failing program to run.

    ## How to silence it
    - Off by default: it runs only with `extend-select = TDV9` (or `TDV901`) in `[flake8]`
      (`--extend-select` on the command line).
    - One line: `# noqa: TDV901`.
    - Once enabled by a broad selection, switch it off again with `extend-ignore = TDV901`.
    """

    code = "TDV901"
    name = "optimizer-before-move"
    default_enabled = False
    message = "optimizer built before the model is moved to its device; move the model first, then build the optimizer"
    triggers = r"\.parameters\s*\("
    trigger_words = (".parameters",)

    VALID = [
        "import torch\nmodel.to(device)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n",
    ]
    INVALID = [
        "import torch\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # expect: TDV901\nmodel.to(device)\n",
    ]

    def _is_optimizer(self, call: cst.Call) -> bool:
        qualified = self.ctx.resolve(call.func) or ""
        prefix, _, name = qualified.rpartition(".")
        return prefix == "torch.optim" and name[:1].isupper() and name not in _NOT_OPTIMIZERS

    def visit_Call(self, node: cst.Call) -> None:
        if not self._is_optimizer(node):
            return
        params = keyword(node, "params")
        argument = params.value if params is not None else (
            positional_args(node)[0].value if positional_args(node) else None)
        if argument is None:
            return
        scope = self.ctx.function_scope()
        waiting: List[Tuple[str, cst.Call]] = scope.note("TDV901 optimizers", list)
        for owner in _parameter_owners(argument):
            if owner not in scope.ever_moved:
                waiting.append((owner, node))

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if isinstance(self.ctx.parent(), cst.FunctionDef):
            self._report_moved_later()

    def leave_Module(self, node: cst.Module) -> None:
        self._report_moved_later()

    def _report_moved_later(self) -> None:
        """At the end of a scope: the owners moved after their optimizer was built."""
        scope = self.ctx.function_scope()
        reported = set()
        for owner, call in scope.notes.get("TDV901 optimizers", ()):
            if owner in scope.ever_moved and id(call) not in reported:
                reported.add(id(call))
                self.report(call, f"optimizer built before {owner} is moved to its device; "
                                  f"move {owner} first, then build the optimizer")


class CudaOnlySelection(Rule):
    """`"cuda" if torch.cuda.is_available() else "cpu"`, which ignores other accelerators.

    ## What it does
    Reports the selection idiom that picks CUDA when it is there and the CPU
    otherwise: `"cuda" if torch.cuda.is_available() else "cpu"` (also `"cuda:0"`,
    `torch.cuda.device_count() > 0`, inside `torch.device(...)`, written with device
    objects as `torch.device("cuda") if torch.cuda.is_available() else
    torch.device("cpu")`, or the negated form `"cpu" if not torch.cuda.is_available()
    else "cuda"`).

    ## Why is this bad
    Nothing fails: the code runs on the CPU where there is no CUDA. But on Apple
    silicon (MPS), Intel GPUs (XPU) and other accelerators it runs on the CPU although
    an accelerator is there, often ten times slower, and nobody notices. Since
    PyTorch 2.6, `torch.accelerator.current_accelerator()` returns whichever
    accelerator the machine has.

    ## Example
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ```

    ## Use instead
    ```python
    device = torch.accelerator.current_accelerator() or torch.device("cpu")
    ```
    (`torch.accelerator.is_available()` says whether there is one; on PyTorch before
    2.6 keep the idiom.)

    ## When it is not reported
    - A choice by a user's flag (`"cuda" if args.cuda else "cpu"`): the user asked for CUDA.
    - A choice between CUDA and something other than the CPU.

    ## Fix
    None: `torch.accelerator` needs PyTorch 2.6; the project's minimum version decides.

    ## Runtime proof
    None in `fixtures/`: family 9 reports style the PyTorch docs recommend, not code
    that fails on a CPU-only machine, so there is no failing program to run.

    ## How to silence it
    - Off by default: it runs only with `extend-select = TDV9` (or `TDV902`) in `[flake8]`
      (`--extend-select` on the command line).
    - One line: `# noqa: TDV902`.
    - Once enabled by a broad selection, switch it off again with `extend-ignore = TDV902`.
    """

    code = "TDV902"
    name = "cuda-only-selection"
    default_enabled = False
    message = ('"cuda" if torch.cuda.is_available() else "cpu" ignores other accelerators (MPS, XPU); use '
               'torch.accelerator.current_accelerator() or torch.device("cpu") (PyTorch 2.6+)')
    triggers = r"""["']cuda"""
    trigger_words = ("cuda",)

    VALID = [
        "import torch\ndevice = torch.device('cuda' if args.cuda else 'cpu')\n",
    ]
    INVALID = [
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')  # expect: TDV902\n",
    ]

    def _tests_cuda_presence(self, test: cst.BaseExpression) -> int:
        """+1 / -1 when `test` asks torch whether CUDA is there (not a user's flag), else 0."""
        polarity = self.ctx.cuda_polarity(test)
        if polarity == 0:
            return 0
        for node in _walk(test):
            if isinstance(node, cst.Call) and self.ctx.resolve(node.func) in (
                    "torch.cuda.is_available", "torch.cuda.device_count"):
                return polarity
        return 0

    def visit_IfExp(self, node: cst.IfExp) -> None:
        polarity = self._tests_cuda_presence(node.test)
        if polarity == 0:
            return
        cuda_arm, other_arm = (node.body, node.orelse) if polarity > 0 else (node.orelse, node.body)
        cuda_arm, other_arm = self._device_name(cuda_arm), self._device_name(other_arm)
        if is_cuda_literal(cuda_arm) and (string_value(other_arm) or "").strip() == "cpu":
            self.report(node)

    def _device_name(self, arm: cst.BaseExpression) -> cst.BaseExpression:
        """`torch.device("cuda")` -> `"cuda"`: the selection written with device objects."""
        if isinstance(arm, cst.Call) and self.ctx.resolve(arm.func) == "torch.device" and arm.args \
                and arm.args[0].keyword is None:
            return arm.args[0].value
        return arm


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in children(node):
        yield from _walk(child)
