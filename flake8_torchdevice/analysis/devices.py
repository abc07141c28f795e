"""Devices and moves: which names hold a device, which calls move something to one."""

from __future__ import annotations

import re
from typing import AbstractSet, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst

from .syntax import (dotted_name, first_argument, is_cuda_literal, keyword, last_identifier, method_call,
                     positional_args, string_value)

_DEVICE_IDENTIFIER_RE = re.compile(r"^(device|dev|[a-z0-9_]*_device|[a-z0-9_]*_dev)$", re.I)


def is_device_name(identifier: str) -> bool:
    return bool(_DEVICE_IDENTIFIER_RE.match(identifier))


def is_device_move(node: cst.CSTNode) -> bool:
    """`x.to(device)`, `x.to("cpu")`, `x.cuda()`: a call that moves `x` to a device.

    `.to(memory_format=...)` and `.to(dtype=...)` alone do not move anything.
    """
    receiver = method_call(node, "to", "cuda")
    if receiver is None:
        return False
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    if node.func.attr.value == "to":
        return bool(positional_args(node)) or keyword(node, "device") is not None
    return True


def move_target(node: cst.CSTNode) -> Optional[str]:
    """For a device move `m.to(...)` / `m.cuda(...)`: the dotted name of `m`."""
    if not is_device_move(node):
        return None
    receiver = method_call(node, "to", "cuda")
    while True:  # m.float().cuda() / m.to(a).half()
        inner = method_call(receiver, "to", "cuda", "float", "half", "double", "train", "eval")
        if inner is None:
            break
        receiver = inner
    return dotted_name(receiver)



_HOST_DEVICE_NAMES = frozenset({"cpu", "host", "cpu_device", "host_device", "device_cpu"})


def moves_to_cpu(node: cst.CSTNode) -> bool:
    """`x.cpu()`, `x.to("cpu")`, `x.to(device="cpu")`, `x.to(torch.device("cpu"))`, and a move to
    a device named for the host (`host = torch.device("cpu")`, `x.to(host)`: kornia's round trips)."""
    if method_call(node, "cpu") is not None:
        return True
    if method_call(node, "to") is None:
        return False
    assert isinstance(node, cst.Call)
    device = first_argument(node, "device")
    return device is not None and names_the_cpu(device)


def names_the_cpu(device: cst.BaseExpression) -> bool:
    """`"cpu"`, `torch.device("cpu")`, or a name for the host (`host`, `cpu_device`)."""
    if isinstance(device, (cst.Name, cst.Attribute)) and (last_identifier(device) or "").lower() in _HOST_DEVICE_NAMES:
        return True
    if isinstance(device, cst.Call) and dotted_name(device.func) in ("torch.device", "device") and device.args:
        device = device.args[0].value
    text = string_value(device)
    return text is not None and text.strip().lower() == "cpu"



# --------------------------------------------------------------------------------------
# The device-aware value in scope (the spec's "device-aware value"), for remedies and fixes


def is_device_aware(value: cst.BaseExpression, cuda_polarity: Callable[[cst.BaseExpression], int],
                    resolve: Callable[[cst.CSTNode], Optional[str]]) -> bool:
    """An expression carrying a device chosen at run time: `x.device`,
    `next(model.parameters()).device`, `torch.device(x)` with a non-literal `x`, the
    selection idiom `"cuda" if torch.cuda.is_available() else "cpu"` (wrapped or not)."""
    if isinstance(value, cst.Attribute):
        return value.attr.value == "device"
    if isinstance(value, cst.IfExp):
        return (cuda_polarity(value.test) > 0 and is_cuda_literal(value.body)
                and string_value(value.orelse) in ("cpu", "mps"))
    if isinstance(value, cst.Call) and resolve(value.func) == "torch.device":
        args = positional_args(value)
        if len(args) != 1 or keyword(value, "index") is not None:
            return False
        argument = args[0].value
        return (not isinstance(argument, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
                                          cst.Integer))
                and (not isinstance(argument, cst.IfExp) or is_device_aware(argument, cuda_polarity, resolve)))
    return False


def _is_literal_device(value: cst.BaseExpression, resolve: Callable[[cst.CSTNode], Optional[str]]) -> bool:
    """`"cuda"`, `0`, `None`, `torch.device("cpu")`: a fixed device (or none), not one chosen at run time."""
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer)):
        return True
    if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
        return True
    if isinstance(value, cst.Call) and resolve(value.func) == "torch.device":
        return all(isinstance(arg.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
                                          cst.Integer)) for arg in value.args)
    return False


class DeviceFinder:
    """Which device-aware value is visible from the node being visited, found on demand
    (only remedies and fixes ask) from the analyzer's stack of enclosing nodes:

    1. innermost first, in each enclosing block, the latest earlier binding of a name
       that holds a device-aware value, or of a `device`/`dev`/`*_device` name bound to
       something other than a literal (`device = args.device`);
    2. a parameter named so (not defaulting to None), then (unless `tensors` is off) a
       tensor parameter's `.device` (annotated `Tensor`; an unannotated `forward(self, x)`
       may take a dict), not one of the names in `avoid`;
    3. in a method, `self.<device name>` assigned in `__init__`;
    then the same in the enclosing functions, and the module's earlier statements.
    """

    def __init__(self, resolve: Callable[[cst.CSTNode], Optional[str]],
                 cuda_polarity: Callable[[cst.BaseExpression], int]) -> None:
        self.resolve = resolve
        self.cuda_polarity = cuda_polarity
        self._tables: Dict[int, Tuple[Dict[int, int], List[Optional[str]]]] = {}

    def find(self, stack: Sequence[cst.CSTNode], avoid: AbstractSet[str] = frozenset(),
             tensors: bool = True) -> Optional[str]:
        """`stack`: the nodes from the module down to the one being visited."""
        passed_function = False
        for index in range(len(stack) - 1, 0, -1):
            parent, child = stack[index - 1], stack[index]
            if isinstance(parent, (cst.Module, cst.IndentedBlock)):
                if passed_function and index >= 2 and isinstance(stack[index - 2], cst.ClassDef):
                    continue  # a class body does not enclose its methods
                found = self._earlier_bindings(parent.body, child)
            elif isinstance(parent, cst.FunctionDef) and child is parent.body:
                owner = stack[index - 3] if index >= 3 else None
                found = self._from_parameters(parent, owner, avoid, tensors)
                passed_function = True
            else:
                continue
            if found:
                return found
        return None

    def _value_is_aware(self, name: str, value: cst.BaseExpression) -> bool:
        if is_device_aware(value, self.cuda_polarity, self.resolve):
            return True
        identifier = name.rsplit(".", 1)[-1]
        return is_device_name(identifier) and not _is_literal_device(value, self.resolve)

    def _earlier_bindings(self, body: Sequence[cst.CSTNode], current: cst.CSTNode) -> Optional[str]:
        """The latest device-aware binding among the statements of `body` before `current`."""
        positions, latest = self._block_table(body)
        index = positions.get(id(current))
        return None if index is None else latest[index]

    def _block_table(self, body: Sequence[cst.CSTNode]) -> Tuple[Dict[int, int], List[Optional[str]]]:
        """For a block, once: statement -> its index, and for each index the latest
        device-aware binding before that statement (a name rebound to something else
        no longer counts). One pass, so a block with thousands of findings stays linear."""
        table = self._tables.get(id(body))
        if table is None:
            positions = {id(statement): index for index, statement in enumerate(body)}
            latest: List[Optional[str]] = [None]
            state: Dict[str, Tuple[int, bool]] = {}
            best: Optional[Tuple[int, str]] = None
            order = 0
            for statement in body:
                for name, aware in self._bindings(statement):
                    order += 1
                    state[name] = (order, aware)
                    if aware:
                        best = (order, name)
                    elif best is not None and best[1] == name:
                        candidates = [(o, n) for n, (o, a) in state.items() if a]
                        best = max(candidates) if candidates else None
                latest.append(best[1] if best else None)
            table = self._tables[id(body)] = (positions, latest)
        return table

    def _bindings(self, statement: cst.CSTNode) -> Iterator[Tuple[str, bool]]:
        """(name, holds a device-aware value) for each binding in a statement, in order;
        compound statements' arms included, nested functions and classes not."""
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target, value = small.targets[0].target, small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    target, value = small.target, small.value
                else:
                    continue
                name = dotted_name(target)
                if name is not None and name.count(".") <= (1 if name.startswith("self.") else 0):
                    yield name, self._value_is_aware(name, value)
        elif isinstance(statement, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
            for block in _blocks(statement):
                for inner in block:
                    yield from self._bindings(inner)

    def _from_parameters(self, function: cst.FunctionDef, owner: Optional[cst.CSTNode],
                         avoid: AbstractSet[str] = frozenset(), tensors: bool = True) -> Optional[str]:
        params = function.params
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        for param in every:
            default = param.default
            if is_device_name(param.name.value) and not (isinstance(default, cst.Name) and default.value == "None"):
                return param.name.value
        method = isinstance(owner, cst.ClassDef) and bool(every) and every[0].name.value == "self"
        for param in every if tensors else ():
            annotation = param.annotation.annotation if param.annotation is not None else None
            if param.name.value in avoid:
                continue
            if annotation is not None and dotted_name(annotation) in ("Tensor", "torch.Tensor"):
                return f"{param.name.value}.device"
        if method and function.name.value != "__init__":
            return self._init_attribute(owner)  # type: ignore[arg-type]
        return None

    def _init_attribute(self, cls: cst.ClassDef) -> Optional[str]:
        """`self.device` when `__init__` binds it to a device chosen at run time."""
        for statement in cls.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
                state: Dict[str, bool] = {}
                for inner in statement.body.body:
                    state.update(self._bindings(inner))
                aware = [name for name, is_aware in state.items() if is_aware and name.startswith("self.")]
                return aware[-1] if aware else None
        return None


def _blocks(statement: cst.CSTNode) -> List[Sequence[cst.CSTNode]]:
    """The statement lists of a compound statement's arms, in order."""
    blocks: List[Sequence[cst.CSTNode]] = []
    arms: List[cst.CSTNode] = [statement]
    if isinstance(statement, cst.Try):
        arms += list(statement.handlers)
        arms += [arm for arm in (statement.orelse, statement.finalbody) if arm is not None]
    elif isinstance(statement, (cst.If, cst.For, cst.While)):
        orelse = statement.orelse
        while orelse is not None:
            arms.append(orelse)
            orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    for arm in arms:
        body = getattr(arm, "body", None)
        if isinstance(body, cst.IndentedBlock):
            blocks.append(body.body)
    return blocks


# --------------------------------------------------------------------------------------
# Where `fix --add-device` can add a device selection


def leading_imports(body: Sequence[object]) -> int:
    """How many statements at the top of a module are its docstring and imports."""
    count = 0
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine):
            break
        docstring = (index == 0 and len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr)
                     and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
        if not docstring and not all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body):
            break
        count = index + 1
    return count


def selection_site(module) -> Optional[Tuple[int, str]]:
    """Where the added selection goes (after the leading imports) and the name torch
    is imported as there; None when those imports do not import torch."""
    count = leading_imports(module.body)
    alias = None
    for statement in module.body[:count]:
        for small in statement.body:
            if isinstance(small, cst.Import):
                for name in small.names:
                    if isinstance(name.name, cst.Name) and name.name.value == "torch":
                        alias = name.asname.name.value if name.asname is not None else "torch"
    return (count, alias) if alias else None
