"""Family 4: multi-device wrappers that capture a module before it is on its device."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Sequence, Set

import libcst as cst

from ..analysis import (Scope, dotted_name, first_argument, is_device_move, keyword, last_identifier, method_call,
                        move_target, moves_to_cpu)
from ..analysis.syntax import walk_ast
from .base import Fix, Rule

DATA_PARALLEL = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                 "torch.nn.parallel.data_parallel.DataParallel"}
DATA_PARALLEL_NAME = "torch.nn.DataParallel"
_WRAPPER_NAMES = frozenset({"DataParallel", "DistributedDataParallel"})
DISTRIBUTED = {"torch.nn.parallel.DistributedDataParallel",
               "torch.nn.parallel.distributed.DistributedDataParallel"}


class WrapBeforeMove(Rule):
    """`DataParallel` / `DistributedDataParallel` wrapping a module that is not on its device yet.

    ## What it does
    Reports `nn.DataParallel(m)` and `DistributedDataParallel(m, device_ids=...)`
    (however they were imported) when `m` is not on its device in time:
    - `DistributedDataParallel` settles devices when it is built, so `m` must be
      moved before the wrap: an earlier `m.to(...)` or `m.cuda()` statement or
      assignment in the enclosing function or module, or the argument itself being
      `m.to(...)`. Reported when `m` was built in this scope by calling a class
      (`model = Net(...)`, `DDP(Net(), ...)`, `self.m` in `__init__`) and not moved
      first, or when this scope moves `m` only after the wrap.
    - `DataParallel` checks devices at its first forward, so moving the module
      before the wrap or the wrapper after it (`nn.DataParallel(m).to(device)`,
      `model = nn.DataParallel(model)` then `model.cuda()`) are both correct. It is
      reported when `m` was built in this scope and neither the module before the
      wrap nor the wrapper after it is moved in the scope (a sub-module wrapped in
      `__init__`), and when the wrapper is moved to the CPU (`.cpu()`,
      `.to("cpu")`): DataParallel still runs on every visible GPU.

    CUDA guards do not silence this rule: wrapping before moving breaks on GPU
    machines, exactly where a guard such as `if torch.cuda.device_count() > 1:` is
    true. A move made earlier under a guard still counts as a move.

    ## Why is this bad
    `DistributedDataParallel` given `device_ids` for a module still on the CPU
    raises `ValueError: DistributedDataParallel device_ids and output_device
    arguments only work with single-device/multiple-device GPU modules or CPU
    modules, but got device_ids [0], output_device None, and module parameters
    {device(type='cpu')}.` `DataParallel` checks at its first forward that every
    parameter and buffer is on `device_ids[0]`, and raises `RuntimeError: module
    must have its parameters and buffers on device cuda:0 (device_ids[0]) but found
    one of them on device: cpu` when it is not. On a machine without CUDA,
    `DataParallel` just runs the module, so only a GPU run shows the bug.

    ## Example
    ```python
    model = Net()
    ddp = DistributedDataParallel(model, device_ids=[rank])

    model = Net()
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)   # nothing ever moves it
    ```

    ## Use instead
    ```python
    model = Net().to(rank)
    ddp = DistributedDataParallel(model, device_ids=[rank])

    model = Net().to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    ```

    ## When it is not reported
    - The module was moved earlier in the same scope, or the argument is the move
      itself (`DistributedDataParallel(model.to(rank), device_ids=[rank])`).
    - `DataParallel` whose wrapper is moved to a device later in the scope.
    - `DistributedDataParallel` without `device_ids` or `output_device`, unless the
      module is moved after the wrap: a CPU module there is plain CPU training.
    - A module handed in from outside (a parameter, `self.model` outside
      `__init__` or bound from a parameter in it) or returned by a helper
      (`model = build(cfg)`) that this scope does not move later: it may have been
      moved already.
    - A `DataParallel` wrapper handed out of the scope (returned, passed to a call,
      put in a list or dict, stored on another object: `nets.fan = fan`): whoever gets
      it may move it before its first forward.
    - An argument that is not a name or a class-like (capitalised) call
      (`DataParallel(build())`).
    - A module whose class, defined earlier in the file, moves itself or its layers to
      a device while it is built (`self.fc = nn.Linear(2, 2).cuda(rank)` or
      `self.to(device)` in `__init__` or a method it calls).
    - Code that only runs without CUDA (the `else:` of `if torch.cuda.is_available():`),
      where `DataParallel` is a no-op.

    ## Fix
    `flake8-torchdevice fix` moves the move before the wrap of a
    `DistributedDataParallel`: when the wrap is a statement of its own
    (`ddp = DDP(model, ...)`) and a later statement of the same block moves the module
    or the wrapper (`model.to(device)`, `ddp = ddp.to(device)`), that statement becomes
    a move of the module right before the wrap (`model.to(device)`), with its trailing
    comment; a module built in place gets the move inside (`DDP(Net().to(device), ...)`).
    Not fixed when a statement between them uses a name the move uses, when the move
    has a comment above it, or when it is in another block: there the order may
    matter. A `DataParallel` finding has no later move to bring forward (that would
    have been correct), so it has no fix.

    ## How to silence it
    - One line: `model = nn.DataParallel(model)  # noqa: TDV401`.
    - A whole project: `extend-ignore = TDV401` in the `[flake8]` section.
    """

    code = "TDV401"
    name = "wrap-before-move"
    message = ("{name} wraps a module that is not on its device yet; move it first, "
               "e.g. {short}(model.to(device){extra})")
    cpu_message = ("DataParallel moved to the CPU still runs on every visible GPU and fails there; "
                   "move it to its device instead, e.g. nn.DataParallel(model).to(device)")
    # The moves too: a class whose `__init__` moves its layers builds modules that are
    # not on the CPU, so that `__init__` must be kept by the fast path (`matches_function`).
    triggers = r"\b(?:DataParallel|DistributedDataParallel)\b|\.(?:to|cuda)\b"
    trigger_words = ("DataParallel", ".to", ".cuda")

    VALID = [
        "import torch.nn as nn\nmodel = Net()\nmodel.to(device)\nmodel = nn.DataParallel(model)\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nddp = DDP(Net().to(rank), device_ids=[rank])\n",
        "import torch.nn as nn\nmodel = nn.DataParallel(Net()).to(device)\n",
        "import torch\nmodel = Net()\nif torch.cuda.device_count() > 1:\n    model = torch.nn.DataParallel(model)\n"
        "model = model.to(device)\n",
    ]
    INVALID = [
        "import torch.nn as nn\nmodel = Net()\nmodel = nn.DataParallel(model)  # expect: TDV401\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\nddp = DDP(model, device_ids=[rank])  # expect: TDV401\n",
        "import torch\nif torch.cuda.is_available():\n    net = Net()\n"
        "    net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[0])  # expect: TDV401\n    net.to(0)\n",
    ]

    @staticmethod
    def matches_function(node: ast.AST) -> bool:
        """Fast path: the function names a wrapper, or moves its `self` or a part of it
        (`self.fc = nn.Linear(2, 2).cuda(rank)`, `self.to(device)`): class facts read it."""
        params = getattr(node, "args", None)
        first = params.args[0].arg if params is not None and params.args else None

        def is_move(sub: ast.AST) -> bool:
            return isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in ("to", "cuda")

        def is_own(target: ast.AST) -> bool:
            return isinstance(target, ast.Name) and target.id == first

        for sub in walk_ast(node):
            if isinstance(sub, ast.Name) and sub.id in _WRAPPER_NAMES:
                return True
            if isinstance(sub, ast.Attribute) and sub.attr in _WRAPPER_NAMES:
                return True
            if isinstance(sub, ast.alias) and sub.name.rsplit(".", 1)[-1] in _WRAPPER_NAMES:
                return True  # imported inside the function
            if first is None:
                continue
            if is_move(sub) and is_own(sub.func.value):  # type: ignore[attr-defined]
                return True  # self.to(device)
            if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None \
                    and any(isinstance(t, ast.Attribute) and is_own(t.value)
                            for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])) \
                    and any(is_move(c) for c in walk_ast(sub.value)):
                return True  # self.fc = nn.Linear(2, 2).cuda(rank)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        target = move_target(node)
        if target is not None or moves_to_cpu(node):
            self._on_move(node, target or dotted_name(method_call(node, "to", "cpu")))
            return
        qualified = self.ctx.resolve(node.func)
        if qualified not in DATA_PARALLEL and qualified not in DISTRIBUTED:
            return
        if self.ctx.cpu_only:
            return  # without CUDA, DataParallel calls the module directly
        module = first_argument(node, "module")
        if module is None or is_device_move(module):
            return
        distributed = qualified in DISTRIBUTED
        scope = self.ctx.function_scope()
        key = dotted_name(module)
        if key is not None and key in scope.moved:
            return
        built_here = (isinstance(module, cst.Call) and self._builds_on_cpu(module)) or (
            key is not None and self._built_here(key, scope))
        if not distributed:
            self._wrap_data_parallel(node, key, built_here)
            return
        # DDP without device_ids on a CPU module is plain CPU training: nothing to move.
        gpu_intended = any(keyword(node, name) is not None for name in ("device_ids", "output_device"))
        message = self._message(qualified)
        fix = _move_before_wrap(self.ctx.stack, key, node, module)
        if gpu_intended and built_here:
            self.report(node, message, fix=fix)
        elif key is not None:
            scope.note("wraps waiting", list).append(_Wait(node, message, key, None, report_on_move=True, fix=fix))

    def _wrap_data_parallel(self, node: cst.Call, key: Optional[str], built_here: bool) -> None:
        """DataParallel needs the module on its device by the first forward: a move of
        the wrapper after the wrap is fine, a move to the CPU is not."""
        # nn.DataParallel(m).to(device), .cuda(), also through `.eval()` and other links
        # that return the same module: the wrapper is moved before its first forward.
        depth = 1
        while isinstance(self.ctx.parent(depth), cst.Attribute):
            link = self.ctx.parent(depth + 1)
            if not (isinstance(link, cst.Call) and link.func is self.ctx.parent(depth)):
                break
            if moves_to_cpu(link):
                self.report(node, self.cpu_message)
                return
            if is_device_move(link):
                return
            if method_call(link, *_SAME_MODULE) is None:
                break
            depth += 2
        wrapper = None
        statement = self.ctx.parent(depth)
        if _hands_out(statement):
            return  # `return nn.DataParallel(Net())`: whoever gets it may move it
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            wrapper = dotted_name(statement.targets[0].target)
        self.ctx.function_scope().note("wraps waiting", list).append(
            _Wait(node, self._message(DATA_PARALLEL_NAME), key, wrapper, report_on_move=False,
                  built_here=built_here))

    def visit_Name(self, node: cst.Name) -> None:
        # A DataParallel wrapper handed out (`return net`, `train(net)`, `{"g": net}`)
        # may be moved by whoever gets it.
        waiting = self.ctx.function_scope().notes.get("wraps waiting")
        if not waiting or not _hands_out(self.ctx.parent()):
            return
        for wait in [w for w in waiting if not w.report_on_move and w.wrapper == node.value]:
            if all(outer is not wait.node for outer in self.ctx.stack):  # not `m = DP(m)` itself
                waiting.remove(wait)

    def leave_Assign(self, node: cst.Assign) -> None:
        # `model = Net()` builds a module on the CPU; `model = build(cfg)` or
        # `self.model = model` may have been moved already.
        built = isinstance(node.value, cst.Call) and self._builds_on_cpu(node.value)
        scope = self.ctx.function_scope()
        constructed, handed_in = scope.note("constructed", set), scope.note("handed in", set)
        for target in node.targets:
            key = dotted_name(target.target)
            if key is None:
                continue
            if built:
                constructed.add(key)
                handed_in.discard(key)
            else:
                constructed.discard(key)
                handed_in.add(key)

    def _builds_on_cpu(self, call: cst.Call) -> bool:
        """`Net(...)`: a class called by its (capitalised) name, unless the class, defined
        earlier in this file, moves itself or its layers to a device while it is built
        (`self.fc = nn.Linear(2, 2).cuda(rank)` in `__init__`)."""
        constructor = _constructor(call)
        if constructor is None:
            return False
        info = self.ctx.class_facts.by_name.get(last_identifier(constructor.func) or "")
        return info is None or not info.moves_itself_when_built()

    def _built_here(self, key: str, scope: Scope) -> bool:
        """Was `key` constructed in this scope, on the CPU (not handed in, where the
        caller may have moved it, nor returned by a helper that may move it)?"""
        if key in scope.note("constructed", set):
            return True
        if key in scope.note("handed in", set):
            return False  # `self.model = model`: the caller's module, maybe moved
        function = self.ctx.current_function
        return key.startswith("self.") and function is not None and function.name.value == "__init__"

    def _on_move(self, call: cst.Call, target: Optional[str]) -> None:
        waiting = self.ctx.function_scope().note("wraps waiting", list)
        if not waiting or target is None:
            return
        to_cpu = moves_to_cpu(call)
        for wait in [w for w in waiting if target in (w.module, w.wrapper)]:
            waiting.remove(wait)
            if wait.report_on_move:  # DDP: moved after the wrap, too late
                if not to_cpu:
                    self.report(wait.node, wait.message, fix=wait.fix)
            elif to_cpu and target == wait.wrapper:
                self.report(wait.node, self.cpu_message)

    def leave_scope(self, scope: Scope) -> None:
        # DataParallel wraps that nothing moved before the end of the scope.
        for wait in scope.notes.get("wraps waiting", ()):
            if not wait.report_on_move and wait.built_here:
                self.report(wait.node, wait.message)

    @staticmethod
    def _message(qualified: str) -> str:
        short = qualified.rsplit(".", 1)[-1]
        extra = ", device_ids=[rank]" if qualified in DISTRIBUTED else ""
        return WrapBeforeMove.message.format(name=short, short=short, extra=extra)


@dataclass
class _Wait:
    """A wrap whose verdict depends on moves later in the scope."""

    node: cst.Call
    message: str
    module: Optional[str]  # the wrapped module's dotted name
    wrapper: Optional[str]  # the name the wrapper was assigned to
    report_on_move: bool  # DDP: a later move of the module proves the wrap came too early
    built_here: bool = False  # DataParallel: report at the end of the scope if nothing moved
    fix: Optional[Fix] = None


def _hands_out(parent: Optional[cst.CSTNode]) -> bool:
    """Is a value whose parent is `parent` handed out of the scope: returned, yielded,
    passed to a call, put in a container, or stored on another object (`nets.fan = fan`,
    `nets["fan"] = fan`; `self.fan = fan` stays with the module being built)?"""
    if isinstance(parent, cst.Assign):
        return any(isinstance(t.target, (cst.Attribute, cst.Subscript))
                   and (dotted_name(t.target) or "").split(".")[0] != "self" for t in parent.targets)
    return isinstance(parent, (cst.Return, cst.Yield, cst.Arg, cst.Element, cst.DictElement))


def _constructor(call: cst.Call) -> Optional[cst.Call]:
    """In `Net(...)`, `nn.Sequential(...)`, `Net().float()` (a class called by its
    capitalised name, maybe followed by casts that do not move it): the class call."""
    inner = method_call(call, "float", "half", "double", "bfloat16", "train", "eval", "requires_grad_")
    if isinstance(inner, cst.Call):
        return _constructor(inner)
    name = last_identifier(call.func) or ""
    return call if name[:1].isupper() else None  # Net, MLP, nn.Sequential


# ---------------------------------------------------------------- the fix

_CASTS = ("to", "cuda", "float", "half", "double", "train", "eval")
# Methods of a module that return the module itself.
_SAME_MODULE = ("eval", "train", "float", "half", "double", "bfloat16", "requires_grad_", "share_memory")


def _move_before_wrap(stack: Sequence[cst.CSTNode], key: Optional[str], wrap: cst.Call,
                      module: cst.BaseExpression) -> Optional[Fix]:
    """The fix: the first later statement of the wrap's block that moves the module
    (`model.to(device)`) or the wrapper (`ddp.to(device)`, which moves the module
    inside) goes before the wrap, as a move of the module (`model.to(device)`; for a
    module built in place, `DDP(Net().to(device))`). Only when the wrap is a statement
    of its own and no statement between them uses a name the move uses."""
    index = len(stack) - 1
    while index > 0 and not isinstance(stack[index], cst.SimpleStatementLine):
        index -= 1
    statement, block = stack[index], stack[index - 1]
    if (not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1
            or not isinstance(block, (cst.Module, cst.IndentedBlock))):
        return None
    small = statement.body[0]
    if not (isinstance(small, (cst.Assign, cst.AnnAssign, cst.Expr)) and small.value is wrap):
        return None
    targets = {dotted_name(t.target) for t in small.targets} if isinstance(small, cst.Assign) else (
        {dotted_name(small.target)} if isinstance(small, cst.AnnAssign) else set())
    wrappers = {t for t in targets if t is not None and t != key}
    following = list(block.body)
    between: List[cst.CSTNode] = []
    for later in following[following.index(statement) + 1:]:
        move = _move_statement(later, wrappers | ({key} if key else set()))
        if move is None:
            between.append(later)
            continue
        call, target = move
        used = _names(later)
        if (any(line.comment is not None for line in later.leading_lines)  # would be left behind
                or any(used & _names(other) for other in between)
                or any(_names(arg) & wrappers for arg in call.args)):
            return None
        if key is not None:
            return Fix().move_statement_before(later, statement,  # type: ignore[arg-type]
                                               moved=_retarget(later, target, key))
        if later.trailing_whitespace.comment is not None or method_call(call, "to", "cuda") is None:
            return None
        # built in place: `DDP(Net(), ...)` + `ddp.to(d)` -> `DDP(Net().to(d), ...)`
        return Fix().replace(module, call.with_changes(func=call.func.with_changes(value=module))).replace(
            later, cst.RemoveFromParent())
    return None


def _move_statement(statement: cst.CSTNode, names: Set[str]):
    """For `x.to(d)` or `x = x.to(d)` alone on its line, with `x` in `names`: (the call, x)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        if dotted_name(small.targets[0].target) not in names:
            return None
        call = small.value
    elif isinstance(small, cst.Expr):
        call = small.value
    else:
        return None
    target = move_target(call)
    if target not in names or (isinstance(small, cst.Assign) and dotted_name(small.targets[0].target) != target):
        return None
    return call, target


def _retarget(statement: cst.SimpleStatementLine, old: str, new: str) -> cst.SimpleStatementLine:
    """The move statement moving `new` instead of `old` (`ddp.to(d)` -> `model.to(d)`)."""
    if old == new:
        return statement
    replacement = cst.parse_expression(new)

    def receiver_replaced(call: cst.BaseExpression) -> cst.BaseExpression:
        receiver = method_call(call, *_CASTS)
        if receiver is None:
            return call
        inner = replacement if dotted_name(receiver) == old else receiver_replaced(receiver)
        return call.with_changes(func=call.func.with_changes(value=inner))  # type: ignore[attr-defined]

    small = statement.body[0]
    if isinstance(small, cst.Assign):
        small = small.with_changes(targets=[small.targets[0].with_changes(target=replacement)],
                                   value=receiver_replaced(small.value))
    else:
        small = small.with_changes(value=receiver_replaced(small.value))  # type: ignore[attr-defined]
    return statement.with_changes(body=[small])


def _names(node: cst.CSTNode) -> Set[str]:
    """The variable names a node uses or binds (attribute names after a dot excluded)."""
    found: Set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

    node.visit(Names())
    return found
