"""What several rules need to know about the code around a node.

One `Analyzer` walks the libcst tree once. While it walks it keeps:

- the import map of every scope, so `th.load`, `from torch import load` and
  `import torch.nn as nn; nn.DataParallel` resolve to qualified names, and a name
  rebound locally (`load = my_loader`) stops resolving to torch;
- the CUDA-guard depth (the spec's "CUDA guard"): code under
  `if torch.cuda.is_available():`, after `if not ...: return`, in a function
  decorated with `skipIf(not torch.cuda.is_available())`, ...;
- the class stack, with "is this class an `nn.Module`";
- the function stack and, per scope, which targets were moved to a device so far
  (statement order).

Rules subscribe to node types with `visit_<Node>` / `leave_<Node>` methods and read
this state through the analyzer; they never re-derive it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set

import libcst as cst

# --------------------------------------------------------------------------------------
# Small expression helpers


def dotted_name(node: cst.CSTNode) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    parts: List[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def last_identifier(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Call):
        return last_identifier(node.func)
    return None


def string_value(node: cst.CSTNode) -> Optional[str]:
    """The text of a plain (non-f, non-bytes) string literal, else None."""
    if isinstance(node, cst.SimpleString):
        prefix = node.prefix.lower()
        if "b" in prefix:
            return None
        try:
            value = node.evaluated_value
        except Exception:  # malformed escapes: not a literal we understand
            return None
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_value(node.left), string_value(node.right)
        if left is None or right is None:
            return None
        return left + right
    return None


def string_prefix(node: cst.CSTNode) -> Optional[str]:
    """The literal text a string or f-string starts with (`f"cuda:{r}"` -> `cuda:`)."""
    plain = string_value(node)
    if plain is not None:
        return plain
    if isinstance(node, cst.FormattedString) and node.parts:
        first = node.parts[0]
        if isinstance(first, cst.FormattedStringText):
            return first.value
        return ""
    return None


_CUDA_DEVICE_RE = re.compile(r"cuda(:\d*)?$")


def is_cuda_literal(node: cst.CSTNode) -> bool:
    """`"cuda"`, `"cuda:0"`, `f"cuda:{rank}"`: a device string naming CUDA."""
    plain = string_value(node)
    if plain is not None:
        return bool(_CUDA_DEVICE_RE.match(plain.strip()))
    prefix = string_prefix(node)
    return prefix is not None and prefix.startswith("cuda:")


def number_value(node: cst.CSTNode) -> Optional[float]:
    if isinstance(node, cst.Integer):
        return float(node.evaluated_value)
    if isinstance(node, cst.Float):
        return node.evaluated_value
    if (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, (cst.Integer, cst.Float))
    ):
        return -float(node.expression.evaluated_value)
    return None


def keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def has_star_kwargs(call: cst.Call) -> bool:
    return any(arg.star == "**" for arg in call.args)


def positional_args(call: cst.Call) -> List[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and arg.star == ""]


def first_argument(call: cst.Call, keyword_name: str) -> Optional[cst.BaseExpression]:
    """The first positional argument, or the keyword that can stand for it."""
    positional = positional_args(call)
    if positional:
        return positional[0].value
    arg = keyword(call, keyword_name)
    return arg.value if arg is not None else None


def method_call(node: cst.CSTNode, *names: str) -> Optional[cst.BaseExpression]:
    """For `recv.name(...)` with name in `names`: the receiver, else None."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in names
    ):
        return node.func.value
    return None


# --------------------------------------------------------------------------------------
# Devices and moves

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


# --------------------------------------------------------------------------------------
# The CUDA-guard model

_NEGATIVE_FLAG_RE = re.compile(r"(^|_)(no|not|disable|disabled|without|skip)(_|$)|nocuda|nogpu|cpu", re.I)
_CUDA_FLAG_RE = re.compile(r"cuda|gpu", re.I)
_DEVICE_ID_RE = re.compile(r"^(device_ids?|gpu_ids?|gpus?|cuda_device)$", re.I)
_EXIT_CALLS = {"exit", "_exit", "quit", "skip", "skipTest", "fail", "abort"}


def is_exit_statement(statement: cst.CSTNode) -> bool:
    """`return`, `raise`, `continue`, `break`, `sys.exit()`, `pytest.skip()`, ..."""
    if isinstance(statement, cst.SimpleStatementLine):
        return any(is_exit_statement(small) for small in statement.body)
    if isinstance(statement, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
        return True
    if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call):
        return last_identifier(statement.value.func) in _EXIT_CALLS
    return False


def block_statements(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return body.body  # IndentedBlock.body and SimpleStatementSuite.body


@dataclass
class Scope:
    """A function, lambda, class or module body, with its own names."""

    node: cst.CSTNode
    kind: str  # "module" | "class" | "function" | "lambda"
    # name -> qualified name it was imported as, or None when rebound to a non-import
    bindings: Dict[str, Optional[str]] = field(default_factory=dict)
    # dotted names moved to a device so far in this scope, in statement order
    moved: Set[str] = field(default_factory=set)
    params: Set[str] = field(default_factory=set)
    # Per-scope state that rules keep (what was saved, wraps waiting for a move, ...):
    # it lives exactly as long as the scope.
    notes: Dict[str, Any] = field(default_factory=dict)

    def note(self, key: str, make: Callable[[], Any]) -> Any:
        """This scope's entry `key`, created with `make()` on first use."""
        if key not in self.notes:
            self.notes[key] = make()
        return self.notes[key]


@dataclass
class ClassInfo:
    node: cst.ClassDef
    is_module: bool


# Classes from torch.nn that are not modules.
_NN_NON_MODULES = {"Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer"}
# Third-party base classes that are `nn.Module` subclasses, recognised by name.
_MODULE_BASE_RE = re.compile(r"(^|\.)[A-Za-z0-9_]*Module$")


class Analyzer(cst.CSTVisitor):
    """One traversal: keeps the shared state and dispatches nodes to every rule."""

    def __init__(self, rules_factory: Callable[["Analyzer"], Iterable["object"]],
                 guard_names: Iterable[str] = ()) -> None:
        super().__init__()
        self.guard_names = {name.lower() for name in guard_names}
        self.scopes: List[Scope] = []
        # The nodes from the module down to the one being visited (for "what is my parent").
        self.stack: List[cst.CSTNode] = []
        self.classes: List[ClassInfo] = []
        self.functions: List[cst.FunctionDef] = []
        self.module_classes: Set[str] = set()
        self.guard_depth = 0
        self._attribute_guards: List[bool] = []
        self._block_guards: List[int] = []
        self._elif_ids: Set[int] = set()
        self.rules = list(rules_factory(self))
        self._visitors: Dict[str, List[Callable]] = {}
        self._leavers: Dict[str, List[Callable]] = {}
        for rule in self.rules:
            for attr in dir(type(rule)):
                if attr.startswith("visit_"):
                    self._visitors.setdefault(attr[6:], []).append(getattr(rule, attr))
                elif attr.startswith("leave_"):
                    self._leavers.setdefault(attr[6:], []).append(getattr(rule, attr))

    # ---------------------------------------------------------------- state queries

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    @property
    def guarded(self) -> bool:
        """True inside code that only runs when CUDA is present."""
        return self.guard_depth > 0

    @property
    def current_class(self) -> Optional[ClassInfo]:
        return self.classes[-1] if self.classes else None

    @property
    def current_function(self) -> Optional[cst.FunctionDef]:
        return self.functions[-1] if self.functions else None

    def parent(self, depth: int = 1) -> Optional[cst.CSTNode]:
        """The parent (depth=1), grandparent (2), ... of the node being visited."""
        index = len(self.stack) - 1 - depth
        return self.stack[index] if index >= 0 else None

    def function_scope(self) -> Scope:
        """The innermost function or module scope (class bodies and lambdas skipped)."""
        for scope in reversed(self.scopes):
            if scope.kind in ("function", "module"):
                return scope
        return self.scopes[0]

    def resolve(self, node: cst.CSTNode) -> Optional[str]:
        """The qualified name an expression refers to, when it comes from an import.

        `th.nn.DataParallel` -> `torch.nn.DataParallel` after `import torch as th`.
        """
        if isinstance(node, cst.Name):
            for scope in reversed(self.scopes):
                if scope.kind == "class" and scope is not self.scopes[-1]:
                    continue  # class bodies do not enclose their methods
                if node.value in scope.bindings:
                    return scope.bindings[node.value]
            return None
        if isinstance(node, cst.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def resolves_to(self, node: cst.CSTNode, *qualified_names: str) -> bool:
        return self.resolve(node) in qualified_names

    def is_torch_call(self, call: cst.Call, *qualified_names: str) -> bool:
        return self.resolve(call.func) in qualified_names

    # ---------------------------------------------------------------- guard model

    def cuda_polarity(self, test: cst.BaseExpression) -> int:
        """+1 when `test` being true means CUDA is present, -1 when it means CUDA is
        absent, 0 when it says nothing about CUDA."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return -self.cuda_polarity(test.expression)
        if isinstance(test, cst.BooleanOperation):
            left, right = self.cuda_polarity(test.left), self.cuda_polarity(test.right)
            if isinstance(test.operator, cst.And):
                # the body runs only if every operand is true
                if left > 0 or right > 0:
                    return 1
                return -1 if left < 0 and right < 0 else 0
            # `or`: the else arm runs only if every operand is false
            if left < 0 or right < 0:
                return -1
            return 1 if left > 0 and right > 0 else 0
        if isinstance(test, cst.Comparison):
            return self._comparison_polarity(test)
        if isinstance(test, cst.Call):
            qualified = self.resolve(test.func)
            if qualified in ("torch.cuda.is_available", "torch.cuda.device_count",
                             "torch.cuda.is_initialized", "torch.backends.cudnn.is_available"):
                return 1
            if qualified in ("torch.cuda.is_available.__call__",):
                return 1
            receiver = method_call(test, "startswith")
            if receiver is not None and test.args:
                prefix = string_value(test.args[0].value)
                if prefix is not None and prefix.startswith("cuda"):
                    return 1
                if prefix == "cpu":
                    return -1
            name = last_identifier(test.func)
            if name in ("len", "bool", "any", "all") and test.args:
                return self.cuda_polarity(test.args[0].value)
            if name in ("is_available", "device_count") and qualified is None:
                # `cuda.is_available()` after `from torch import cuda`
                inner = test.func.value if isinstance(test.func, cst.Attribute) else None
                if inner is not None and last_identifier(inner) == "cuda":
                    return 1
            return self._flag_polarity(test.func)
        if isinstance(test, (cst.Name, cst.Attribute)):
            return self._flag_polarity(test)
        return 0

    def _flag_polarity(self, node: cst.BaseExpression) -> int:
        """A flag whose name says CUDA/GPU: `use_cuda`, `args.cuda`, `opt.gpu_ids`."""
        identifier = last_identifier(node)
        if identifier is None:
            return 0
        if identifier.lower() in self.guard_names or (dotted_name(node) or "").lower() in self.guard_names:
            return 1
        if identifier == "is_available":
            return 0  # `torch.cuda.is_available` without a call is always true: a bug, not a guard
        if _NEGATIVE_FLAG_RE.search(identifier):
            return -1 if _CUDA_FLAG_RE.search(identifier) or "cpu" in identifier.lower() else 0
        if _CUDA_FLAG_RE.search(identifier) or identifier == "is_cuda":
            return 1
        return 0

    def _comparison_polarity(self, test: cst.Comparison) -> int:
        if len(test.comparisons) != 1:
            return 0
        target = test.comparisons[0]
        op, left, right = target.operator, test.left, target.comparator
        # String literal on either side: `device.type == "cuda"`, `"cuda" in str(d)`.
        for literal, other in ((right, left), (left, right)):
            text = string_value(literal)
            if (text is None and isinstance(literal, cst.Call) and literal.args
                    and self.resolve(literal.func) == "torch.device"):
                text = string_value(literal.args[0].value)  # `x.device == torch.device("cuda")`
            if text is None and isinstance(literal, (cst.Tuple, cst.List, cst.Set)):
                texts = [string_value(el.value) for el in literal.elements]
                if any(t is not None and t.startswith("cuda") for t in texts):
                    text = "cuda"
            if text is None:
                continue
            text = text.strip().lower()
            if text.startswith("cuda") or text.startswith("gpu"):
                sign = 1
            elif text == "cpu":
                sign = -1
            else:
                return 0
            if isinstance(op, (cst.Equal, cst.In, cst.Is)):
                return sign
            if isinstance(op, (cst.NotEqual, cst.NotIn, cst.IsNot)):
                return -sign
            return 0
        # `device_id is not None`: a device was asked for explicitly.
        if isinstance(right, cst.Name) and right.value == "None" and isinstance(op, (cst.Is, cst.IsNot)):
            identifier = last_identifier(left) or ""
            if is_device_name(identifier) or _DEVICE_ID_RE.match(identifier):
                return 1 if isinstance(op, cst.IsNot) else -1
            return 0
        # Number on the right: `torch.cuda.device_count() > 1`, `len(gpu_ids) == 0`.
        number = number_value(right)
        if number is None:
            return 0
        sign = self.cuda_polarity(left)
        if sign == 0:
            return 0
        if isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
            return sign
        if isinstance(op, cst.NotEqual):
            return sign if number == 0 else 0
        if isinstance(op, cst.Equal):
            return -sign if number == 0 else sign
        if isinstance(op, (cst.LessThan, cst.LessThanEqual)):
            return -sign
        return 0

    def _loops_over_gpus(self, iterable: cst.BaseExpression) -> bool:
        """`for i in range(torch.cuda.device_count())`: the body never runs without CUDA."""
        return (isinstance(iterable, cst.Call) and last_identifier(iterable.func) == "range"
                and len(iterable.args) == 1 and self.cuda_polarity(iterable.args[0].value) > 0)

    def is_guard_decorator(self, decorator: cst.BaseExpression) -> bool:
        """`@skipIf(not torch.cuda.is_available(), ...)`, `@requires_cuda`, ..."""
        if isinstance(decorator, cst.Call):
            name = last_identifier(decorator.func)
            if name in ("skipIf", "skipif") and decorator.args:
                return self.cuda_polarity(decorator.args[0].value) < 0
            if name == "skipUnless" and decorator.args:
                return self.cuda_polarity(decorator.args[0].value) > 0
            decorator = decorator.func
        full = (dotted_name(decorator) or "").lower()
        if not full:
            return False
        if full in self.guard_names or full.rsplit(".", 1)[-1] in self.guard_names:
            return True
        return bool(_CUDA_FLAG_RE.search(full))

    def _is_early_exit_guard(self, statement: cst.CSTNode) -> bool:
        """`if not torch.cuda.is_available(): return` and `assert torch.cuda.is_available()`."""
        if isinstance(statement, cst.If):
            return (
                statement.orelse is None
                and self.cuda_polarity(statement.test) < 0
                and any(is_exit_statement(s) for s in block_statements(statement.body))
            )
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assert) and self.cuda_polarity(small.test) > 0:
                    return True
                if (
                    isinstance(small, cst.Assign)
                    and any(dotted_name(t.target) == "pytestmark" for t in small.targets)
                    and self._marks_guard(small.value)
                ):
                    return True
        return False

    def _marks_guard(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, (cst.List, cst.Tuple)):
            return any(self._marks_guard(el.value) for el in value.elements)
        return self.is_guard_decorator(value)

    # ---------------------------------------------------------------- classes

    def _class_is_module(self, node: cst.ClassDef) -> bool:
        for base in node.bases:
            if base.keyword is not None:
                continue
            qualified = self.resolve(base.value)
            if qualified:
                if qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1] not in _NN_NON_MODULES:
                    last = qualified.rsplit(".", 1)[-1]
                    if last[:1].isupper():
                        return True
                if qualified.startswith(("pytorch_lightning.", "lightning.")) and qualified.endswith("Module"):
                    return True
            name = dotted_name(base.value)
            if name is None:
                continue
            if name in self.module_classes:
                return True
            if qualified is None and _MODULE_BASE_RE.search(name) and name != "Module":
                return True
        return False

    # ---------------------------------------------------------------- bindings

    def _bind_import(self, node: cst.CSTNode) -> None:
        bindings = self.scope.bindings
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    bindings[alias.asname.name.value] = full
                else:
                    top = full.split(".", 1)[0]
                    bindings[top] = top
        elif isinstance(node, cst.ImportFrom):
            if isinstance(node.names, cst.ImportStar):
                return
            # `from .utils import load`: a local module's name shadows torch's.
            module = "" if node.relative or node.module is None else dotted_name(node.module) or ""
            for alias in node.names:
                imported = dotted_name(alias.name) or ""
                local = imported
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                bindings[local] = f"{module}.{imported}" if module else None

    def _bind_targets(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.scope.bindings[target.value] = None
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_targets(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind_targets(target.value)

    def _record_move(self, value: cst.CSTNode, assigned_to: Sequence[str] = ()) -> None:
        if not is_device_move(value):
            return
        moved = self.function_scope().moved
        target = move_target(value)
        if target:
            moved.add(target)
        moved.update(assigned_to)

    # ---------------------------------------------------------------- traversal

    def _dispatch(self, table: Dict[str, List[Callable]], node: cst.CSTNode) -> None:
        callbacks = table.get(type(node).__name__)
        if callbacks:
            for callback in callbacks:
                callback(node)

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        kind = type(node).__name__
        if kind == "Module":
            self.scopes.append(Scope(node, "module"))
            self._block_guards.append(0)
        elif kind in ("Import", "ImportFrom"):
            self._bind_import(node)
        elif kind == "Assign":
            for target in node.targets:  # type: ignore[attr-defined]
                self._bind_targets(target.target)
        elif kind in ("AnnAssign", "AugAssign", "For", "NamedExpr"):
            self._bind_targets(node.target)  # type: ignore[attr-defined]
        elif kind in ("ListComp", "SetComp", "DictComp", "GeneratorExp"):
            comp_for = node.for_in  # type: ignore[attr-defined]  # bound before the element is visited
            while comp_for is not None:
                self._bind_targets(comp_for.target)
                comp_for = comp_for.inner_for_in
        elif kind == "AsName" and not isinstance(self.parent(), cst.ImportAlias):
            self._bind_targets(node.name)  # type: ignore[attr-defined]  # `with ... as x`, `except E as x`
        elif kind == "ClassDef":
            info = ClassInfo(node, self._class_is_module(node))  # type: ignore[arg-type]
            if info.is_module:
                self.module_classes.add(node.name.value)  # type: ignore[attr-defined]
            self.scope.bindings[node.name.value] = None  # type: ignore[attr-defined]
            self.classes.append(info)
        elif kind == "FunctionDef":
            self.scope.bindings[node.name.value] = None  # type: ignore[attr-defined]
        self._dispatch(self._visitors, node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._dispatch(self._leavers, original_node)
        self.stack.pop()
        kind = type(original_node).__name__
        # A move counts from the next statement on: `m = DP(m).to(d)` wraps m unmoved.
        if kind == "Assign":
            targets = [dotted_name(t.target) for t in original_node.targets]  # type: ignore[attr-defined]
            self._record_move(original_node.value, [t for t in targets if t])  # type: ignore[attr-defined]
        elif kind == "Expr":
            self._record_move(original_node.value)  # type: ignore[attr-defined]
        if kind == "Module":
            self.scopes.pop()
            self.guard_depth -= self._block_guards.pop()
        elif kind == "ClassDef":
            self.classes.pop()
        elif kind in ("If", "SimpleStatementLine") and self._block_guards:
            if id(original_node) not in self._elif_ids and self._is_early_exit_guard(original_node):
                self._block_guards[-1] += 1
                self.guard_depth += 1

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        guard = False
        kind = type(node).__name__
        if attribute == "body":
            if kind in ("If", "While"):
                guard = self.cuda_polarity(node.test) > 0  # type: ignore[attr-defined]
            elif kind == "IndentedBlock":
                self._block_guards.append(0)
            elif kind in ("FunctionDef", "ClassDef"):
                # Decorated as CUDA-only, or named so (`def to_cuda(x)`, `class TestGPUKernels`).
                guard = any(self.is_guard_decorator(d.decorator) for d in node.decorators) or (  # type: ignore[attr-defined]
                    self._flag_polarity(node.name) > 0)  # type: ignore[attr-defined]
                self._enter_body(node)
            elif kind == "Lambda":
                self._enter_body(node)
            elif kind == "IfExp":
                guard = self.cuda_polarity(node.test) > 0  # type: ignore[attr-defined]
            elif kind == "For":
                guard = self._loops_over_gpus(node.iter)  # type: ignore[attr-defined]
        elif attribute in ("elt", "key", "value") and kind in ("ListComp", "SetComp", "GeneratorExp", "DictComp"):
            guard = self._loops_over_gpus(node.for_in.iter) or self._filters_guard(node.for_in)  # type: ignore[attr-defined]
        elif attribute == "right" and kind == "BooleanOperation":
            # `torch.cuda.is_available() and x.cuda()`: the right runs only if the left allows it.
            polarity = self.cuda_polarity(node.left)  # type: ignore[attr-defined]
            guard = polarity > 0 if isinstance(node.operator, cst.And) else polarity < 0  # type: ignore[attr-defined]
        elif attribute == "orelse":
            if kind == "If" and isinstance(node.orelse, cst.If):  # type: ignore[attr-defined]
                self._elif_ids.add(id(node.orelse))  # type: ignore[attr-defined]
            if kind in ("If", "While", "IfExp"):
                guard = self.cuda_polarity(node.test) < 0  # type: ignore[attr-defined]
        if guard:
            self.guard_depth += 1
        self._attribute_guards.append(guard)

    def _filters_guard(self, comp_for: Optional[cst.CompFor]) -> bool:
        """`[x.cuda() for x in xs if torch.cuda.is_available()]`: the element runs only if every `if` holds."""
        while comp_for is not None:
            if any(self.cuda_polarity(cond.test) > 0 for cond in comp_for.ifs):
                return True
            comp_for = comp_for.inner_for_in
        return False

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        if self._attribute_guards.pop():
            self.guard_depth -= 1
        kind = type(original_node).__name__
        if attribute == "body":
            if kind == "IndentedBlock":
                self.guard_depth -= self._block_guards.pop()
            elif kind in ("FunctionDef", "ClassDef", "Lambda"):
                self._leave_body(original_node)

    def _enter_body(self, node: cst.CSTNode) -> None:
        kind = type(node).__name__
        if kind == "ClassDef":
            self.scopes.append(Scope(node, "class"))
            return
        scope = Scope(node, "function" if kind == "FunctionDef" else "lambda")
        params = node.params  # type: ignore[attr-defined]
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            scope.bindings[param.name.value] = None
            scope.params.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bindings[star.name.value] = None
                scope.params.add(star.name.value)
        self.scopes.append(scope)
        if kind == "FunctionDef":
            self.functions.append(node)  # type: ignore[arg-type]

    def _leave_body(self, node: cst.CSTNode) -> None:
        self.scopes.pop()
        if type(node).__name__ == "FunctionDef":
            self.functions.pop()


def parameter_names(function: cst.FunctionDef) -> List[str]:
    params = function.params
    return [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]


def is_static_or_class_method(function: cst.FunctionDef) -> bool:
    return any(last_identifier(d.decorator) in ("staticmethod", "classmethod") for d in function.decorators)
