"""The one traversal: `Analyzer` walks the libcst tree once, keeps what every rule
needs to know about the code around a node, and dispatches each node to the rules.

While it walks it keeps:
- the scope stack (`scopes.py`): imports, so `th.load` resolves to `torch.load` and a
  name rebound locally stops resolving to torch; moves in statement order; flags;
- the CUDA-guard depth (`guards.py`): `guarded` inside code that only runs with CUDA,
  `cpu_only` inside code that only runs without it;
- the class stack, with "is this class an `nn.Module`", and the function stack.

Rules subscribe to node types with `visit_<Node>` / `leave_<Node>` methods and read
this state through the analyzer; they never re-derive it. A rule that keeps per-scope
notes and must conclude when the scope ends defines `leave_scope(scope)`: it is called
for every function, lambda, class and module body, while the scope is still current.
"""

from __future__ import annotations

import builtins
import dataclasses
from dataclasses import dataclass
from typing import AbstractSet, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst

from .classes import ClassFacts, ClassInfo
from .devices import DeviceFinder, is_device_move, move_target, selection_site
from .guards import GuardModel, is_cuda_only_path, is_exit_statement
from .helpers import GuardedHelpers, candidate_names, is_test_file
from .kinds import ValueKinds
from .origins import TensorOrigins, is_data_pipeline_path
from .project import TORCH_FUNCTION_RE, ProjectIndex
from .scopes import Scope, import_fallback_names
from .syntax import (block_statements, child_fields, comprehension_clauses, dotted_name, equality_test, flag_test,
                     last_identifier, unpacked_pairs)


# The only attributes (children) of a node whose visit can enter a guard or a body, and
# the node classes where they do (what `on_visit_attribute` and `on_leave_attribute`
# act on): the walk calls those for these fields only, not for every `Arg.value`.
_COMPREHENSIONS = frozenset({"ListComp", "SetComp", "GeneratorExp", "DictComp"})
_BUILTIN_NAMES = frozenset(dir(builtins))
_GUARDING_FIELDS = {
    "body": frozenset({"If", "While", "IndentedBlock", "FunctionDef", "ClassDef", "Lambda", "IfExp", "For",
                       "MatchCase"}),
    "elt": _COMPREHENSIONS, "key": _COMPREHENSIONS, "value": _COMPREHENSIONS,
    "right": frozenset({"BooleanOperation"}),
    "orelse": frozenset({"If", "While", "IfExp"}),
}
_GUARDING_ATTRIBUTES = frozenset(_GUARDING_FIELDS)
_NO_EFFECT = (False, False)


# Nodes no rule looks into: whitespace, comments, brackets, commas and operators; and
# type annotations, which are no use of what they name (`scaler: Optional[GradScaler]`,
# `-> "torch.cuda.FloatTensor"`): the facts that read them (a parameter annotated
# `torch.Tensor`) read the annotation from its parameter, never by visiting it.
_SKIPPED_NODES = (cst.Annotation, cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline,
                  cst.Comment, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
                  cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon,
                  cst.AssignEqual, cst.ImportStar, cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp,
                  cst.BaseUnaryOp, cst.BaseAugOp)


# node class -> (field, is it one of the class's _GUARDING_FIELDS) for its fields that
# may hold children, in libcst's visiting order
_CHILD_FIELDS: Dict[type, tuple] = {}


def _child_fields(node: cst.CSTNode) -> tuple:
    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        kind = type(node).__name__
        fields = _CHILD_FIELDS[type(node)] = tuple((name, kind in _GUARDING_FIELDS.get(name, ()))
                                                   for name in child_fields(node))
    return fields


# What the walk does with a field's value, by the value's type: walk it (a node), skip
# it (a node in _SKIPPED_NODES, or not a node), or walk its items (a sequence).
_WALK, _SKIP, _ITEMS = 1, 0, 2
_ACTION_BY_TYPE: Dict[type, int] = {}


def _action(kind: type) -> int:
    """Decided from the class's bases, not with `isinstance`: libcst's node classes are
    ABCs, and every `isinstance` on them grows their caches (2 MB over timm) and costs
    a call through `abc` for each of a file's hundred thousand nodes."""
    action = _ACTION_BY_TYPE.get(kind)
    if action is None:
        bases = kind.__mro__
        if cst.CSTNode in bases:
            action = _SKIP if any(skipped in bases for skipped in _SKIPPED_NODES) else _WALK
        else:
            action = _ITEMS if tuple in bases or list in bases else _SKIP
        _ACTION_BY_TYPE[kind] = action
    return action


_HOOKS: Dict[Tuple[type, str], Tuple[str, ...]] = {}


def _hooks(kind: type, prefix: str) -> Tuple[str, ...]:
    """The names of a rule class's methods that start with `prefix` (`visit_`), in `dir`'s
    order: found once per class, not for every file."""
    names = _HOOKS.get((kind, prefix))
    if names is None:
        names = _HOOKS[(kind, prefix)] = tuple(attr for attr in dir(kind) if attr.startswith(prefix))
    return names


@dataclass
class _Branches:
    """An `if` being walked, for placement per path: the moved names before it and, for
    each arm left so far, (moved at its end, does it fall through, is it the body)."""

    scope: Scope
    before: Set[str]
    arms: List[tuple] = dataclasses.field(default_factory=list)

    def merged(self, cpu_only: Callable[[bool], bool]) -> tuple:
        """(moved after the `if`, does it fall through): moved on every arm that falls
        through, arms that only run without CUDA aside (there the CPU is the device).
        `cpu_only(True)`: does the body only run without CUDA; `(False)` the `else`."""
        falling = [arm for arm in self.arms if arm[1]]
        if len({frozenset(arm[0]) for arm in falling}) > 1:  # the arms disagree: does one not count?
            counted = [arm for arm in falling if not cpu_only(arm[2])] or falling
        else:
            counted = falling or self.arms
        moved = set(counted[0][0]).intersection(*(arm[0] for arm in counted[1:])) if counted else set(self.before)
        return moved, bool(falling)


def _ends_in_exit(body: cst.BaseSuite) -> bool:
    statements = block_statements(body)
    return bool(statements) and is_exit_statement(statements[-1])


@dataclass
class _Block:
    """An indented block (or the module) and the guards its own statements opened."""

    exit_guards: int = 0  # `if not torch.cuda.is_available(): return` / `assert ...` above here
    mark_guards: int = 0  # `pytestmark = skipif(no CUDA)`: reaches into functions too
    cpu_exits: int = 0  # `if x.is_cuda: return kernel(x)` above here: the rest runs without CUDA


class Analyzer(cst.CSTVisitor):
    """One traversal: keeps the shared state and dispatches nodes to every rule."""

    def __init__(self, rules_factory: Callable[["Analyzer"], Iterable["object"]],
                 guard_names: Iterable[str] = (), project: Optional[ProjectIndex] = None,
                 filename: Optional[str] = None) -> None:
        super().__init__()
        self.project = project  # the other files of the project, when the file has some
        self._star_torch_names: Dict[str, Optional[str]] = {}  # `_star_torch_name`, per name
        # A module that is CUDA-only on purpose: its path says so (`accelerators/cuda.py`), or
        # its top raises without CUDA (set when that statement has been walked).
        self.cuda_only_module = is_cuda_only_path(filename)
        # a file of a data pipeline (`naflex_transforms.py`): its plain functions are CPU work
        self.data_pipeline_module = is_data_pipeline_path(filename)
        self.filename = filename
        self._module_defined = False  # a function or class seen at the top of the module
        self.scopes: List[Scope] = []
        self.guards = GuardModel(self.resolve, self.local_flag, guard_names, self.local_absence, self.pinned_flag)
        # The nodes from the module down to the one being visited (for "what is my parent").
        self.stack: List[cst.CSTNode] = []
        self.classes: List[ClassInfo] = []
        self.functions: List[cst.FunctionDef] = []
        self.module_classes: Set[str] = set()
        self.guard_depth = 0
        self.cpu_only_depth = 0
        # Early-exit guards in force, and those set aside while inside a function body.
        self._exit_guards = 0
        self._outer_exit_guards: List[int] = []
        self._attribute_effects: List[tuple] = []
        self._blocks: List[_Block] = []
        self._elif_ids: Set[int] = set()
        # Placement per path: one frame per `if` being walked (see `_Branches`).
        self._branches: List[_Branches] = []
        self._if_falls_through = True  # did the `if` just left fall through on some arm?
        self._kept_names: List[Set[str]] = []  # the scope's `kept` names outside each except handler
        # helpers only guarded code calls (set when the module is visited)
        self.helpers = GuardedHelpers(frozenset())
        self._test_file = is_test_file(filename or "")
        # Shared facts that follow the walk like rules: value kinds and class facts.
        self.kinds = ValueKinds(self)
        self.class_facts = ClassFacts(self)
        self._device_finder: Optional[DeviceFinder] = None
        self._can_add_device: Optional[bool] = None
        self.origins = TensorOrigins(self)
        self.rules = list(rules_factory(self))
        self._visitors: Dict[str, List[Callable]] = {}
        self._leavers: Dict[str, List[Callable]] = {}
        self._scope_leavers = [rule.leave_scope for rule in self.rules if hasattr(rule, "leave_scope")]
        # The facts are brought up to date before the rules visit a node and after they leave it;
        # origins only when a rule reads them.
        facts = [self.kinds, self.class_facts]
        if any(getattr(rule, "uses_origins", False) for rule in self.rules):
            facts.append(self.origins)
        for rule in (*facts, *self.rules):
            for attr in _hooks(type(rule), "visit_"):
                self._visitors.setdefault(attr[6:], []).append(getattr(rule, attr))
        for rule in (*self.rules, *reversed(facts)):
            for attr in _hooks(type(rule), "leave_"):
                self._leavers.setdefault(attr[6:], []).append(getattr(rule, attr))

    def walk(self, node: cst.CSTNode) -> None:
        """The traversal: what `node.visit(self)` does (the same calls, in libcst's order),
        without rebuilding every node on the way back up, and without descending into
        whitespace, brackets and operators: half the cost of a libcst visit. Nor into
        type annotations: naming a type is no use of it."""
        self.on_visit(node)
        actions = _ACTION_BY_TYPE
        for name, guarding in _child_fields(node):
            value = getattr(node, name)
            action = actions.get(type(value))
            if action is None:
                action = _action(type(value))
            if action == _WALK:
                children: Sequence[cst.CSTNode] = (value,)
            elif action == _ITEMS and value:
                children = value
            else:
                continue
            if guarding:
                self.on_visit_attribute(node, name)
            for child in children:
                action = actions.get(type(child))
                if action is None:
                    action = _action(type(child))
                if action == _WALK:
                    self.walk(child)
            if guarding:
                self.on_leave_attribute(node, name)
        self.on_leave(node)

    def release(self) -> None:
        """Forget everything once the walk is over. The rules and facts refer back to the
        analyzer and the analyzer to them and to the tree's nodes: a cycle that would keep
        the whole tree alive until Python's cyclic garbage collector runs (libcst's trees
        are large: several held at once were most of the plugin's peak memory). Without
        those references the tree is freed as soon as its last finding is reported."""
        for fact in (self.kinds, self.class_facts, self.origins, *self.rules):
            fact.__dict__.clear()
        self.__dict__.clear()

    # ---------------------------------------------------------------- state queries

    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    @property
    def in_test_file(self) -> bool:
        """A test module (`test_*.py`, `*_test.py`): its functions' parameters are fixtures."""
        return self._test_file

    @property
    def guarded(self) -> bool:
        """True inside code that only runs when CUDA is present; everywhere in a module
        that is CUDA-only on purpose (`cuda_only_module`)."""
        return self.guard_depth > 0 or self.cuda_only_module

    @property
    def cpu_only(self) -> bool:
        """True inside code that only runs when CUDA is absent (`else:` of a CUDA test)."""
        return self.cpu_only_depth > 0

    @property
    def current_class(self) -> Optional[ClassInfo]:
        return self.classes[-1] if self.classes else None

    @property
    def current_function(self) -> Optional[cst.FunctionDef]:
        return self.functions[-1] if self.functions else None

    def arms(self) -> Tuple[Tuple[int, bool], ...]:
        """Where the node being visited is: the `if` arms around it, as (id of the `If`,
        in its body); `syntax.exclusive_arms` compares two such places."""
        return tuple((id(node), in_body) for node, _, in_body in self.enclosing_tests())

    def tests(self) -> List[Tuple[str, object]]:
        """What the `if` statements around the node being visited test of one name (for
        `syntax.tests_exclude`, which tells apart two `if`s of one flag, where `arms` tells apart
        the arms of one `if`): `if optim == OptimType.oss:` is ("optim", {"OptimType.oss"}) in its
        body; `if self.parallel:` is ("self.parallel", True) in its body, False in its `else`."""
        found: List[Tuple[str, object]] = []
        for node, test, in_body in self.enclosing_tests():
            if not isinstance(node, cst.If):
                continue
            equality = equality_test(test) if in_body else None
            flag = flag_test(test)
            if equality is not None:
                found.append(equality)
            elif flag is not None:
                found.append((flag[0], flag[1] == in_body))
        return found

    def enclosing_tests(self, stack: Optional[Sequence[cst.CSTNode]] = None) \
            -> Iterable[Tuple[cst.CSTNode, cst.BaseExpression, bool]]:
        """The `if` statements and expressions around the node being visited (or the last of
        `stack`, a copy of an earlier `self.stack`), innermost first, up to the enclosing
        function: (the `If`/`IfExp`, its test, True in its body or False in its `else`)."""
        stack = self.stack if stack is None else stack
        for index in range(len(stack) - 2, -1, -1):
            node = stack[index]
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return
            if isinstance(node, (cst.If, cst.IfExp)):
                child = stack[index + 1]
                if child is node.body:
                    yield node, node.test, True
                elif child is node.orelse:
                    yield node, node.test, False

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

    def _visible_scopes(self) -> Iterable[Scope]:
        """Innermost first; class bodies do not enclose their methods."""
        for scope in reversed(self.scopes):
            if scope.kind == "class" and scope is not self.scopes[-1]:
                continue
            yield scope

    def resolve(self, node: cst.CSTNode) -> Optional[str]:
        """The qualified name an expression refers to, when it comes from an import.

        `th.nn.DataParallel` -> `torch.nn.DataParallel` after `import torch as th`.
        """
        kind = type(node)  # (exact class: see syntax.py)
        if kind is cst.Name:
            for scope in self._visible_scopes():
                if node.value in scope.bindings:
                    return scope.bindings[node.value]
            if self.scopes[0].star_imports and self.project is not None and node.value not in _BUILTIN_NAMES:
                return self._star_torch_name(node.value)
            return None
        if kind is cst.Attribute:
            base = self.resolve(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def _star_torch_name(self, name: str) -> Optional[str]:
        """`zeros` bound nowhere in the file, brought by `from utils import *` as `torch.zeros`."""
        if name not in self._star_torch_names:
            self._star_torch_names[name] = self.project.star_torch_name(name)  # type: ignore[union-attr]
        return self._star_torch_names[name]

    def import_reference(self, node: cst.CSTNode) -> Optional[str]:
        """What an imported name refers to, relative imports included (`Net` after
        `from .models import Net` is ".models.Net"): the key the project index takes."""
        qualified = self.resolve(node)
        if qualified is not None or not isinstance(node, (cst.Name, cst.Attribute)):
            return qualified
        if isinstance(node, cst.Attribute):
            base = self.import_reference(node.value)
            return f"{base}.{node.attr.value}" if base else None
        for scope in self._visible_scopes():
            if node.value in scope.bindings:
                return scope.relative_imports.get(node.value)
        # bound nowhere in the file: maybe brought by `from utils import *`
        if self.project is not None and self.scopes[0].star_imports and node.value not in _BUILTIN_NAMES:
            return self.project.star_reference(node.value)
        return None

    def project_says(self, node: cst.CSTNode, question: str) -> object:
        """Ask the project index (project.py) about the function or class `node` names:
        `question` is one of its queries ("is_module_class", "returns", "tuple_kinds", "returns_moved",
        "moves_argument", "follows_argument", "shares_devices", "moves_itself", "copies_when_moved", "saves",
        "never_moves"). A name
        imported from the project's other files is looked up there; a function of this file (`make_mask`) or a method of the
        current class (`self._make_mask`) in the file's own summary. Falsy when unknown."""
        ask = self.project_question(node, question)
        return None if ask is None else ask()

    def project_question(self, node: cst.CSTNode, question: str) -> Optional[Callable[[], object]]:
        """`project_says(node, question)` to ask later: what `node` names is resolved now
        (it depends on the scopes here), the index is read only when the answer is called
        for, and gives the same answer whenever it is (it depends only on the files). For a
        fact that matters only if something later needs it: reading another file's summary
        means parsing that file. None when the answer is known to be unknown."""
        project = self.project
        if project is None:
            return None
        reference = self.import_reference(node)
        if reference is not None:
            if reference.split(".", 1)[0] in ("torch", "torchvision"):
                return None
            query = getattr(project, question)
            return lambda: query(reference)
        own = self._own_definition(node)
        if own is None or question not in ("returns", "tuple_kinds", "fresh_parts", "moves_argument", "follows_argument",
                                           "shares_devices", "saves",
                                           "returns_moved", "moves_itself", "never_moves", "copies_when_moved"):
            return None
        query = getattr(project, question + "_here")
        return lambda: query(own)

    def _own_definition(self, node: cst.CSTNode) -> Optional[str]:
        """"make_mask" for a module-level function of this file not shadowed by a local,
        "Net._make_mask" for `self._make_mask` in a method of `Net`."""
        if isinstance(node, cst.Name):
            shadowed = any(scope.kind != "module" and node.value in scope.bindings for scope in self._visible_scopes())
            return None if shadowed else node.value
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self" \
                and self.classes and self.functions:
            return f"{self.classes[-1].name}.{node.attr.value}"
        return None

    def name_for(self, qualified: str) -> Optional[str]:
        """A name visible here that refers to `qualified` (`th` for `torch` after
        `import torch as th`), else None: what a fix may write to reach it."""
        for scope in self._visible_scopes():
            for name, bound in scope.bindings.items():
                if bound == qualified and self.resolve(cst.Name(name)) == qualified:
                    return name
        return None

    def local_absence(self, name: str) -> frozenset:
        """The values of the visible local `name` under which CUDA is certainly absent."""
        for scope in self._visible_scopes():
            if name in scope.bindings:
                return scope.absence.get(name, frozenset())
        return frozenset()

    def local_flag(self, name: str) -> int:
        """Polarity of the CUDA test that the visible binding of `name` came from."""
        for scope in self._visible_scopes():
            if name in scope.bindings:
                return scope.flags.get(name, 0)
        return 0

    def pinned_flag(self, name: str) -> bool:
        """`def _make_input(t, need_cuda=True): if need_cuda: ...`, where the function never
        rebinds the flag and every call of it in the file leaves it out: always true, no guard."""
        function = self.current_function
        if function is None or self.project is None or function.name.value == "__init__":
            return False
        parameters = [*function.params.posonly_params, *function.params.params]
        position = next((i for i, p in enumerate(parameters) if p.name.value == name), None)
        if position is None:
            keyword_only = [p for p in function.params.kwonly_params if p.name.value == name]
            if not keyword_only:
                return False
            parameter, position = keyword_only[0], 1 << 30
        else:
            parameter = parameters[position]
        default = parameter.default
        if not (isinstance(default, cst.Name) and default.value == "True") or _rebinds(function, name):
            return False
        if parameters and parameters[0].name.value in ("self", "cls") and position < 1 << 30:
            position -= 1
        return self.project.always_default(function.name.value, name, position)

    def cuda_polarity(self, test: cst.BaseExpression) -> int:
        return self.guards.cuda_polarity(test)

    def can_add_device(self) -> bool:
        """Can `fix --add-device` add a device selection to this file (torch is
        imported in its leading imports)?"""
        if self._can_add_device is None:
            self._can_add_device = bool(self.stack) and selection_site(self.stack[0]) is not None
        return self._can_add_device

    def device_in_scope(self, node: Optional[cst.CSTNode] = None, stack: Optional[Sequence[cst.CSTNode]] = None,
                        avoid: AbstractSet[str] = frozenset(), tensors: bool = True) -> Optional[str]:
        """The text of a device-aware value visible where the traversal is (at `node`,
        the node being visited; or at the end of `stack`, the nodes from the module down
        to one visited earlier): `device`, `x.device`, `self.device`; None when there is
        none. `tensors=False` leaves out tensor parameters' `.device`, `avoid` the
        tensor parameters named so. See `devices.DeviceFinder`."""
        if self._device_finder is None:  # kept for the traversal: it caches per block
            self._device_finder = DeviceFinder(self.resolve, self.cuda_polarity)
        return self._device_finder.find(self.stack if stack is None else stack, avoid, tensors)

    # ---------------------------------------------------------------- bindings and moves

    def _bind_assignment(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.scope.bind_targets(target.target)
        if self.scope.kind == "module" and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(node.value, cst.Attribute):
            # `zeros = torch.zeros` at the module's level (old RL code): an import under another name
            qualified = self.resolve(node.value)
            if qualified is not None and TORCH_FUNCTION_RE.match(qualified):
                self.scope.bindings[node.targets[0].target.value] = qualified
        if isinstance(node.value, cst.Call) and last_identifier(node.value.func) == "try_import_torch" \
                and len(node.targets) == 1:
            # RLlib's `torch, nn = try_import_torch()`: an import of torch and torch.nn
            target = node.targets[0].target
            names = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
            for name, module in zip(names, ("torch", "torch.nn")):
                if isinstance(name, cst.Name):
                    self.scope.bindings[name.value] = module
        if len(node.targets) == 1:
            self._bind_flag(node.targets[0].target, node.value)

    def _bind_flag(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression]) -> None:
        """`have_gpu = torch.cuda.is_available()` (or `_NO_CUDA: bool = not ...`): a CUDA flag,
        whatever its name."""
        if isinstance(target, cst.Name) and value is not None:
            polarity = self.guards.bound_flag_polarity(value)
            if polarity:
                self.scope.flags[target.value] = polarity
                absence = self.guards.absence_of_binding(value)
                if absence:
                    self.scope.absence[target.value] = absence

    def _record_move(self, value: cst.CSTNode, assigned_to: Sequence[str] = ()) -> None:
        scope = self.function_scope()
        if isinstance(value, cst.IfExp):
            # `net = Net().cuda(rank) if torch.cuda.is_available() else Net().to(device)`: placed
            # when each arm places it, or runs only where there is no CUDA
            polarity = self.cuda_polarity(value.test)
            if assigned_to and all(cpu_only or is_device_move(arm) or self.builds_moved(arm)
                                   for arm, cpu_only in ((value.body, polarity < 0), (value.orelse, polarity > 0))):
                scope.moved.update(assigned_to)
                scope.ever_moved.update(assigned_to)
            return
        if not is_device_move(value):
            if assigned_to and self.builds_moved(value):
                scope.moved.update(assigned_to)  # `model = build_model(cfg)` returning `model.cuda()`
                scope.ever_moved.update(assigned_to)
            return
        target = move_target(value)
        for moved in (scope.moved, scope.ever_moved):
            if target:
                moved.add(target)
            moved.update(assigned_to)

    def builds_moved(self, value: cst.CSTNode) -> bool:
        """Is `value` a call that returns something already on its device: a function
        of the project (this file's or an imported one) that returns `net.cuda()` or
        `net.to(device)`, or a class that moves itself while it is built
        (`self.to(device)` in `__init__`, or a layer `nn.Linear(2, 2).cuda()`)?"""
        if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
            return False
        if (last_identifier(value.func) or "")[:1].isupper():
            info = self.class_facts.by_name.get(last_identifier(value.func) or "")
            if info is not None:
                return info.moves_itself_when_built()
            return bool(self.project_says(value.func, "moves_itself"))
        return bool(self.project_says(value.func, "returns_moved"))

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
            self._blocks.append(_Block())
            self.helpers = GuardedHelpers(candidate_names(node.body, self._test_file))  # type: ignore[attr-defined]
        elif kind in ("Import", "ImportFrom"):
            self.scope.bind_import(node)
        elif kind == "Assign":
            self._bind_assignment(node)  # type: ignore[arg-type]
        elif kind in ("AnnAssign", "AugAssign", "For", "NamedExpr"):
            self.scope.bind_targets(node.target)  # type: ignore[attr-defined]
            if kind == "AnnAssign":
                self._bind_flag(node.target, node.value)  # type: ignore[attr-defined]
        elif kind in ("ListComp", "SetComp", "DictComp", "GeneratorExp"):
            # bound before the element is visited
            for clause in comprehension_clauses(node.for_in):  # type: ignore[attr-defined]
                self.scope.bind_targets(clause.target)
        elif kind == "AsName" and not isinstance(self.parent(), cst.ImportAlias):
            self.scope.bind_targets(node.name)  # type: ignore[attr-defined]  # `with ... as x`, `except E as x`
        elif kind == "ClassDef":
            info = self.class_facts.new_class(node, self.module_classes)  # type: ignore[arg-type]
            if info.is_module:
                self.module_classes.add(node.name.value)  # type: ignore[attr-defined]
            self.scope.bind_targets(node.name)  # type: ignore[attr-defined]
            self.classes.append(info)
            self._module_defined = True
        elif kind == "FunctionDef":
            self.scope.bind_targets(node.name)  # type: ignore[attr-defined]
            self._module_defined = True
        elif kind == "If":
            scope = self.function_scope()
            self._branches.append(_Branches(scope, set(scope.moved)))
        elif kind == "ExceptHandler":
            self._enter_handler(node)  # type: ignore[arg-type]
        elif kind == "Name" and node.value in self.helpers.candidates:  # type: ignore[attr-defined]
            self._note_helper_reference(node)  # type: ignore[arg-type]
        self._dispatch(self._visitors, node)
        return True

    def _note_helper_reference(self, node: cst.Name) -> None:
        """A use of a name that may be a helper only guarded code calls (`GuardedHelpers`)."""
        parent = self.stack[-2]
        if isinstance(parent, (cst.FunctionDef, cst.Param)) and parent.name is node \
                or isinstance(parent, cst.Arg) and parent.keyword is node:
            return  # its definition, a parameter or keyword of that name
        owner, above = (parent, self.stack[-3]) if isinstance(parent, cst.Attribute) and parent.attr is node \
            else (node, parent)
        called = isinstance(above, cst.Call) and above.func is owner
        self.helpers.note_reference(node.value, called, self.guarded, self.enclosing_functions())

    def enclosing_functions(self) -> Tuple[str, ...]:
        """The names of the functions the node being visited is in, outermost first."""
        return tuple(function.name.value for function in self.functions)

    def note_guardable_finding(self, sink: list, within: Optional[Tuple[str, ...]] = None) -> None:
        """The finding just added to `sink`, which a guard would have silenced: it goes
        when it turns out to be in a helper that only guarded code calls."""
        self.helpers.note_finding(sink, len(sink) - 1, self.enclosing_functions() if within is None else within)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._dispatch(self._leavers, original_node)
        self.stack.pop()
        kind = type(original_node).__name__
        # A move counts from the next statement on: `m = DP(m).to(d)` wraps m unmoved.
        if kind == "Assign":
            targets = [dotted_name(t.target) for t in original_node.targets]  # type: ignore[attr-defined]
            self._record_move(original_node.value, [t for t in targets if t])  # type: ignore[attr-defined]
            for target in original_node.targets:  # type: ignore[attr-defined]
                for name, value in unpacked_pairs(target.target, original_node.value) or ():  # type: ignore
                    # `student, teacher = student.cuda(), teacher.cuda()`
                    self._record_move(value, [dotted] if (dotted := dotted_name(name)) else [])
        elif kind == "Expr":
            self._record_move(original_node.value)  # type: ignore[attr-defined]
        if kind == "If":
            self._join_branches(original_node)  # type: ignore[arg-type]
        if kind == "Module":
            self._pop_scope()
            self._close_block()
            self.helpers.drop_silenced_findings()
        elif kind == "ClassDef":
            self.classes.pop()
        elif kind == "ExceptHandler":
            self.scope.kept = self._kept_names.pop()
        elif kind in ("If", "SimpleStatementLine") and self._blocks:
            # Guards that hold for the rest of the block: an early exit, an assert, pytestmark.
            if id(original_node) not in self._elif_ids and len(self._blocks) == 1 \
                    and self.guards.skips_the_module(original_node):
                # `if not torch.cuda.is_available(): pytest.skip(..., allow_module_level=True)`,
                # wherever it stands: the module's tests need CUDA, as under `pytestmark`
                self._blocks[-1].mark_guards += 1
                self.guard_depth += 1
            elif id(original_node) not in self._elif_ids and self.guards.is_early_exit_guard(original_node):
                self._blocks[-1].exit_guards += 1
                self._exit_guards += 1
                self.guard_depth += 1
                if len(self._blocks) == 1 and not self._module_defined \
                        and self.guards.makes_module_cuda_only(original_node):
                    self.cuda_only_module = True  # the import raises without CUDA
            elif kind == "If" and id(original_node) not in self._elif_ids \
                    and self.guards.is_early_cuda_exit(original_node):
                self._blocks[-1].cpu_exits += 1
                self.cpu_only_depth += 1
            elif kind == "SimpleStatementLine" and self.guards.is_module_mark_guard(original_node):
                self._blocks[-1].mark_guards += 1
                self.guard_depth += 1

    def _enter_handler(self, handler: cst.ExceptHandler) -> None:
        """`try: from apex import amp / except ImportError: from torch.cuda import amp`:
        names the `try` arm imported resolve to that arm's import (what runs first),
        also while the fallback rebinds them."""
        self._kept_names.append(self.scope.kept)
        try_node = self.parent()
        if isinstance(try_node, cst.Try):
            fallback = import_fallback_names(try_node, handler)
            if fallback:
                self.scope.kept = self.scope.kept | fallback

    def _close_block(self) -> None:
        block = self._blocks.pop()
        self._exit_guards -= block.exit_guards
        self.guard_depth -= block.exit_guards + block.mark_guards
        self.cpu_only_depth -= block.cpu_exits

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if attribute not in _GUARDING_ATTRIBUTES:  # most of them (whitespace, names, ...): called for every node
            self._attribute_effects.append(_NO_EFFECT)
            return
        guard = cpu_only = False
        kind = type(node).__name__
        guards = self.guards
        if attribute == "body":
            if kind in ("If", "While"):
                polarity = guards.cuda_polarity(node.test)  # type: ignore[attr-defined]
                guard, cpu_only = polarity > 0, polarity < 0
            elif kind == "IndentedBlock":
                self._blocks.append(_Block())
            elif kind in ("FunctionDef", "ClassDef"):
                # Decorated as CUDA-only, or a test of CUDA by its name (`class TestGPUKernels`).
                guard = any(guards.is_guard_decorator(d.decorator) for d in node.decorators) or (  # type: ignore[attr-defined]
                    guards.is_named_for_cuda(node.name))  # type: ignore[attr-defined]
                self._enter_body(node)
            elif kind == "Lambda":
                self._enter_body(node)
            elif kind == "IfExp":
                polarity = guards.cuda_polarity(node.test)  # type: ignore[attr-defined]
                guard, cpu_only = polarity > 0, polarity < 0
            elif kind == "For":
                guard = guards.loops_over_gpus(node.iter)  # type: ignore[attr-defined]
            elif kind == "MatchCase":
                match = self.parent()
                if isinstance(match, cst.Match):  # `match device.type: case "cuda":`
                    polarity = guards.case_polarity(match.subject, node.pattern)  # type: ignore[attr-defined]
                    guard, cpu_only = polarity > 0, polarity < 0
        elif attribute in ("elt", "key", "value") and kind in ("ListComp", "SetComp", "GeneratorExp", "DictComp"):
            guard = guards.loops_over_gpus(node.for_in.iter) or guards.filters_guard(node.for_in)  # type: ignore[attr-defined]
        elif attribute == "right" and kind == "BooleanOperation":
            # `torch.cuda.is_available() and x.cuda()`: the right runs only if the left allows it.
            polarity = guards.cuda_polarity(node.left)  # type: ignore[attr-defined]
            guard = polarity > 0 if isinstance(node.operator, cst.And) else polarity < 0  # type: ignore[attr-defined]
        elif attribute == "orelse":
            if kind == "If" and isinstance(node.orelse, cst.If):  # type: ignore[attr-defined]
                self._elif_ids.add(id(node.orelse))  # type: ignore[attr-defined]
            if kind in ("If", "While", "IfExp"):
                polarity = guards.cuda_polarity(node.test)  # type: ignore[attr-defined]
                guard, cpu_only = polarity < 0, polarity > 0
        self.guard_depth += guard
        self.cpu_only_depth += cpu_only
        self._attribute_effects.append((guard, cpu_only))

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        guard, cpu_only = self._attribute_effects.pop()
        self.guard_depth -= guard
        self.cpu_only_depth -= cpu_only
        if type(original_node) is cst.If:
            self._leave_arm(original_node, attribute)  # type: ignore[arg-type]
        if attribute == "body":
            kind = type(original_node).__name__
            if kind == "IndentedBlock":
                self._close_block()
            elif kind in ("FunctionDef", "ClassDef", "Lambda"):
                self._leave_body(original_node)

    # ---------------------------------------------------------------- placement per path

    def _leave_arm(self, node: cst.If, attribute: str) -> None:
        """An arm of an `if` ends: note what it placed, and start the next arm from what
        was placed before the `if`."""
        if attribute not in ("body", "orelse") or not self._branches:
            return
        frame = self._branches[-1]
        if attribute == "body":
            falls = not _ends_in_exit(node.body)
        elif isinstance(node.orelse, cst.If):
            falls = self._if_falls_through  # an `elif`: its own arms merged already
        else:
            falls = node.orelse is not None and not _ends_in_exit(node.orelse.body)
        frame.arms.append((set(frame.scope.moved), falls, attribute == "body"))
        if frame.scope.moved != frame.before:
            frame.scope.moved.clear()
            frame.scope.moved.update(frame.before)

    def _join_branches(self, node: cst.If) -> None:
        """After an `if`: moved on every arm that falls through (no `else` is an arm
        that moves nothing)."""
        if not self._branches:
            return
        frame = self._branches.pop()
        if node.orelse is None:
            frame.arms.append((frame.before, True, False))
        moved, self._if_falls_through = frame.merged(lambda outcome: self.guards.cuda_absent(node.test, outcome))
        if frame.scope.moved != moved:
            frame.scope.moved.clear()
            frame.scope.moved.update(moved)

    def _enter_body(self, node: cst.CSTNode) -> None:
        kind = type(node).__name__
        if kind == "ClassDef":
            self.scopes.append(Scope(node, "class"))
            return
        scope = Scope(node, "function" if kind == "FunctionDef" else "lambda")
        scope.bind_params(node.params)  # type: ignore[attr-defined]
        self.scopes.append(scope)
        if kind == "FunctionDef":
            self.functions.append(node)  # type: ignore[arg-type]
        # An early exit or assert guards the rest of its own function only: a function
        # body runs later, called from anywhere.
        self._outer_exit_guards.append(self._exit_guards)
        self.guard_depth -= self._exit_guards
        self._exit_guards = 0

    def _pop_scope(self) -> None:
        for leave_scope in self._scope_leavers:
            leave_scope(self.scope)
        self.scopes.pop()

    def _leave_body(self, node: cst.CSTNode) -> None:
        self._pop_scope()
        kind = type(node).__name__
        if kind == "ClassDef":
            return
        if kind == "FunctionDef":
            self.functions.pop()
        self._exit_guards = self._outer_exit_guards.pop()
        self.guard_depth += self._exit_guards


def _rebinds(function: cst.FunctionDef, name: str) -> bool:
    """Is `name` assigned anywhere in the function's body (`x = ...`, `x += ...`, `for x in`,
    `with ... as x`, `(x := ...)`)?"""
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        target = None
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            target = node.target
        elif isinstance(node, cst.AsName):
            target = node.name
        if target is not None:
            names = [target]
            while names:
                part = names.pop()
                if isinstance(part, cst.Name) and part.value == name:
                    return True
                if isinstance(part, (cst.Tuple, cst.List)):
                    names.extend(element.value for element in part.elements)
                elif isinstance(part, cst.StarredElement):
                    names.append(part.value)
        stack.extend(node.children)
    return False
