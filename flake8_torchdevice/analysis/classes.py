"""Class facts: is a class an `nn.Module`, and what its methods do with `self`.

`ClassFacts` follows the walk like `ValueKinds` and fills the `ClassInfo` of every
class: its methods, the `self.<name> = value` assignments of all of them (in `__init__`,
in the helpers it calls, in `forward`), the names registered as buffers or
parameters, where each attribute is read and whether it is moved there, and which
methods run at construction time (`__init__` and what it calls on `self`). Methods may
come in any order, so rules that need the whole class decide at `leave_ClassDef`,
when the `ClassInfo` is complete.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Protocol, Sequence, Set, Tuple

import libcst as cst

from .devices import is_device_move, moves_to_cpu
from .kinds import MODULE, TENSOR, TO_PYTHON, TORCH_MODULE, VARIABLE, is_tensor_type, tensor_operands
from .project import NN_NON_MODULES, is_library_module_class, torch_nn_class
from .syntax import (dotted_name, exclusive_arms, function_statements, has_star_kwargs, is_static_or_class_method, keyword,
                     last_identifier, method_call, self_attribute_key, string_value, unpacked_pairs)

if TYPE_CHECKING:
    from .kinds import ValueKinds
    from .scopes import Scope

# Methods named to put an object back in a clean state: called again after it was built.
_RESETTER_RE = re.compile(r"_*(?:reset|clear|restart)(?:_|$)", re.I)
# Third-party base classes that are `nn.Module` subclasses, recognised by name.
# (not a data module: Lightning's `LightningDataModule` loads data, it keeps no layers)
_MODULE_BASE_RE = re.compile(r"(^|\.)(?![A-Za-z0-9_]*DataModule$)[A-Za-z0-9_]*Module$")
# Constructors whose value `nn.Module.__setattr__` registers (a parameter or a buffer).
REGISTERING_CONSTRUCTORS = frozenset({"Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer"})
# Methods that move a tensor; a read `self.x.to(x.device)` follows the input.
_MOVERS = frozenset({"to", "cuda", "cpu", "type_as"})
# Method names that say they run while the module is built: `reset_parameters`,
# `_init_weights`, `_build_anchors`, `make_layers`, ...
# (`initialize_weights`, not `initial_inference` nor `initial_state`, which run per input)
# `init` where a word starts (`_init_weights`, `reinit`, `initWeights`, `weightInit`), not inside
# one (`compute_pairwise_affinities`, `definition`, `infinite`)
_INIT_WORD = r"(?:(?:^|(?<=_)|(?<=re))init|(?<=[a-z])(?-i:Init))"
INIT_TIME_NAME_RE = re.compile(_INIT_WORD + r"(?!ial(?!i))|reset_param|build|make_|create_|_make|_build|_create"
                               r"|extra_repr|__repr__"
                               # Lightning's `setup(stage)` hook runs before the trainer moves the module
                               r"|^_*setup(?:_|$)", re.I)


# Methods that make a recurrent network's state for a batch (`init_hidden(self, bsz)`,
# `initial_state`, `zero_state`, `get_states(self, batch_size)`), or a decoder's cache for a
# generation (`get_empty_cache(self, batch_size)`, `init_kv_cache`): named like setup, but
# called per batch, beside the inputs.
STATE_MAKER_RE = re.compile(
    r"^_*(?:get_?(?:(?:init|initial|zero|zeros|begin|start|reset|new|empty|default)_?)?"
    r"|(?:init|initial|zero|zeros|begin|start|reset|new|empty|default)_?)"
    r"(?:rnn_?|lstm_?|gru_?|kv_?)?(?:hidden|state|memory|mem|carry|cell|cache)(?:_?(?:state|cell))?s?"
    r"(?:_(?:with|for|like|from)(?:_[a-z0-9]+)*)?$", re.I)  # `init_state_with_shape(self, shape)`


def _tests_a_device(test: cst.CSTNode) -> bool:
    """`if self.mean.device != x.device:` around `self.mean = self.mean.to(x.device)`: the
    path that skips it holds the attribute where it is needed already."""
    return isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
        and isinstance(test.comparisons[0].operator, cst.NotEqual) \
        and all(isinstance(side, cst.Attribute) and side.attr.value == "device"
                for side in (test.left, test.comparisons[0].comparator))


def remakes_state(name: str) -> bool:
    """A method named like one that makes the object's state anew while it is used
    (`reset`, `clear_memory`, `init_hidden`, `init_state_with_shape`)."""
    return STATE_MAKER_RE.match(name) is not None or _RESETTER_RE.match(name) is not None


def is_init_time_name(name: str, info: Optional["ClassInfo"] = None) -> bool:
    """A method named like one that runs while its object is built (`_init_weights`,
    `build_layers`). A lazy module's `initialize_parameters(self, x)` is not: PyTorch
    calls it at the first forward, with the input, on the input's device; nor is a
    recurrent state's maker (`init_hidden(self, batch_size)`), called per batch (what
    `__init__` calls is init-time all the same: `ClassInfo.is_init_time`)."""
    if name == "initialize_parameters" and info is not None and info.is_lazy:
        return False
    if STATE_MAKER_RE.match(name):
        return False
    return INIT_TIME_NAME_RE.search(name) is not None
# A method of the class's own that registers a buffer or parameter under the name it is given
_REGISTERING_HELPER_RE = re.compile(r"_*register_\w*(?:buffer|param)\w*")
# Init-time names that never run per input (`init_weights(self, pretrained)` runs once, from outside).
_SETUP_NAME_RE = re.compile(_INIT_WORD + r"|reset|repr", re.I)
# Methods that read attributes to save, load or show them, not to compute with the input.
# A whole word of the name (`save_weights`, `load_state_dict`, `__repr__`, `saveModel`), so
# that `preprocess` (p-repr-ocess) and `compute_logits` are not taken for one.
_IO_WORDS = "save|load|export|dump|write|state_dict|repr|print|log"
_IO_METHOD_RE = re.compile(rf"(?:^|_)(?:{_IO_WORDS})(?:_|$|[A-Z0-9])|(?:^|[a-z])(?:{_IO_WORDS.title()})(?:[A-Z_0-9]|$)")
# Overriding one of these means the class moves its own plain tensors. (Not `cuda`/`cpu` alone:
# `module.to(device)` goes through `_apply` and never calls them: torecsys' embeddings.)
_MOVING_OVERRIDES = frozenset({"_apply", "to", "_to"})


def class_is_module(node: cst.ClassDef, resolve: Callable[[cst.CSTNode], Optional[str]],
                    module_classes: Set[str],
                    project_module: Callable[[cst.CSTNode], object] = lambda base: False) -> bool:
    """`class Net(nn.Module)`, `(pl.LightningModule)`, `(nn.Sequential)`, `(MyBlock)` when
    `MyBlock` is a module defined earlier in the file or (`project_module`) in a file of
    the project it imports, `(BaseModule)` by its name."""
    for argument in node.bases:
        if argument.keyword is not None:
            continue
        base = argument.value
        if isinstance(base, cst.Subscript):
            base = base.value  # `Operator[Tensor, Tensor]`: a generic base is its class
        if project_module(base):
            return True
        qualified = resolve(base)
        if qualified and is_library_module_class(qualified):
            return True
        name = dotted_name(base)
        if name is None:
            continue
        if name in module_classes:
            return True
        if qualified is None and _MODULE_BASE_RE.search(name) and name != "Module":
            return True
    return bool(node.bases) and _acts_as_a_module(node, resolve)


def _acts_as_a_module(node: cst.ClassDef, resolve: Callable[[cst.CSTNode], Optional[str]]) -> bool:
    """A class of a base the linter cannot see that defines `forward` and builds a torch.nn
    layer on `self` in `__init__` (`project.acts_as_a_module`, the same test on the `ast`)."""
    methods = {item.name.value: item for item in node.body.body if isinstance(item, cst.FunctionDef)}
    if "forward" not in methods or "__init__" not in methods:
        return False
    for statement in function_statements(methods["__init__"]):
        if isinstance(statement, cst.Assign) and isinstance(statement.value, cst.Call) \
                and any(self_attribute_key(target.target) is not None for target in statement.targets):
            built = torch_nn_class(resolve(statement.value.func) or "")
            if built is not None and built not in NN_NON_MODULES:
                return True
    return False


@dataclass
class AttributeAssignment:
    """`self.<name> = value` in one of the class's methods."""

    name: str
    method: str
    target: cst.Attribute
    value: cst.BaseExpression
    fixed_tensor: bool  # a tensor whose device was fixed where it was made (`ValueKinds.is_fixed_tensor`)
    kind: Optional[str]  # `ValueKinds.kind_of(value)`
    # set under `if self.<name> is None:` (or `not hasattr(self, "<name>")`) without a
    # device check: a cache built once, on whatever device the first call had
    built_once: bool = False
    element: bool = False  # `self.<name>[k] = value`: one element of a container attribute
    statement: Optional[cst.CSTNode] = None  # the `Assign` (or `AnnAssign`) it is part of
    # a tensor made here on any device, `device=` given or not (`is_fixed_tensor(value, any_device=True)`):
    # made while the module is built, it stays there when the module moves
    made_tensor: bool = False
    helper: Optional[str] = None  # the value is `self.<helper>(...)`: what that method returns decides
    order: int = 0  # when the walk saw it, among the class's reads and assignments (after its value's reads)
    conditional: bool = False  # inside an `if` (without `else`) of its method: it may not run
    arms: Tuple[Tuple[int, bool], ...] = ()  # the `if` arms around it (`Analyzer.arms()`)


@dataclass
class MethodReturn:
    """`return value` in one of the class's methods (not in a function nested in it)."""

    value: cst.BaseExpression
    fixed_tensor: bool  # fixed as `forward` would see it (`ValueKinds.is_fixed_at_run_time`)
    made_tensor: bool  # made here, on any device
    helper: Optional[str] = None  # `return self.<helper>(...)`


@dataclass
class ClassInfo:
    node: cst.ClassDef
    is_module: bool
    bases: List["ClassInfo"] = field(default_factory=list)  # base classes defined earlier in the file
    bases_known: bool = False  # no base comes from elsewhere (other than `nn.Module`)
    methods: Dict[str, cst.FunctionDef] = field(default_factory=dict)
    assignments: List[AttributeAssignment] = field(default_factory=list)
    buffers: Set[str] = field(default_factory=set)  # register_buffer("x", ...), self._buffers["x"] = ...
    parameters: Set[str] = field(default_factory=set)  # register_parameter, self.x = nn.Parameter(...)
    registers_computed_names: bool = False  # register_buffer(name, ...) with a name we cannot read
    placeholders: Set[str] = field(default_factory=set)  # buffers registered empty, to be filled later
    called_attributes: Set[str] = field(default_factory=set)  # `self.<name>(...)`: methods, sub-modules
    # method -> the self.<name> it mentions (`self._build()`, `self.apply(self._init_weights)`)
    references: Dict[str, Set[str]] = field(default_factory=dict)
    # attribute -> (method, moved, order) for every read of self.<attribute>
    reads: Dict[str, List[Tuple[str, bool, int]]] = field(default_factory=dict)
    # methods that move the module or a part of it to a device: `self.to(device)`,
    # `self.fc = nn.Linear(2, 2).cuda(rank)`
    device_moves: Set[str] = field(default_factory=set)
    # attributes passed where torch takes only a tensor: `F.cross_entropy(y, t, weight=self.w)`,
    # `torch.einsum("hi,bij->bhj", self.gso, x)` (`kinds.tensor_operands`)
    tensor_uses: Set[str] = field(default_factory=set)
    # attributes read as `self.x.numpy()`, which raises for a GPU tensor: kept on the CPU on purpose
    host_only: Set[str] = field(default_factory=set)
    # method -> what its `return` statements return
    returns: Dict[str, List[MethodReturn]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.node.name.value

    @functools.cached_property
    def defined_methods(self) -> FrozenSet[str]:
        """Every method the class body defines (`methods` holds those the walk has reached)."""
        return frozenset(item.name.value for item in self.node.body.body if isinstance(item, cst.FunctionDef))

    @property
    def is_lazy(self) -> bool:
        """A lazy module (`class M(LazyModuleMixin, nn.Module)`): shaped at its first call."""
        return any((last_identifier(info_base.value) or "") == "LazyModuleMixin"
                   for info in self.lineage() for info_base in info.node.bases)

    def lineage(self) -> List["ClassInfo"]:
        """This class and its bases defined in the same file."""
        seen: List[ClassInfo] = []
        todo = [self]
        while todo:
            info = todo.pop()
            if all(info is not s for s in seen):
                seen.append(info)
                todo.extend(info.bases)
        return seen

    def init_time_methods(self) -> Set[str]:
        """`__init__` and the methods it uses on `self`, transitively: they run before the
        module can be moved."""
        return self._reachable(["__init__", *(name for name in self.methods if is_init_time_name(name, self))])

    def _reachable(self, roots: List[str]) -> Set[str]:
        """`roots` and the methods of the class they use on `self`, transitively."""
        done: Set[str] = set()
        todo = list(roots)
        while todo:
            method = todo.pop()
            if method in done:
                continue
            done.add(method)
            todo.extend(name for name in self.references.get(method, ()) if name in self.methods)
        return done

    def run_with_input(self) -> Set[str]:
        """`forward` (or `__call__`) and the methods of the class it uses on `self`."""
        return self._reachable(["forward", "__call__"])

    def construction_only_methods(self, init_elsewhere: Set[str] = frozenset()) -> Set[str]:
        """`init_time_methods` less those a run-time method also calls: deep-text-recognition's
        `build_P_prime` reads like a builder, but `forward` calls it at every step.
        `init_elsewhere`: methods that a base or derived class's `__init__` calls."""
        init_time = self.init_time_methods() | init_elsewhere
        from_init = self.called_from_init() | init_elsewhere
        # run time: the methods that are not init-time, and a builder-named method that
        # `__init__` does not call and that takes data (`build_P_prime(self, batch_C_prime)`)
        run_time = self._reachable([name for name, method in self.methods.items() if name not in init_time or (
            name not in from_init and not _SETUP_NAME_RE.search(name) and len(method.params.params) > 1)])
        return self.init_time_methods() - run_time

    def builds_per_input(self, name: str, function: cst.FunctionDef) -> bool:
        """A method named like a builder that takes data (`create_bases(self, disp)`,
        `build_H_dyn(self, motion)`) and that `__init__`, walked before it, does not call: it
        runs per input, as `construction_only_methods` concludes once the class is walked
        (not `init_*`/`reset_*`, which run once, from outside)."""
        # (a class with no `__init__` whose bases are all read here: nothing builds with it)
        initialised = "__init__" in self.methods or (
            self.bases_known and not any("__init__" in info.methods for info in self.lineage()))
        return initialised and not _SETUP_NAME_RE.search(name) \
            and len(function.params.params) > 1 and name not in self.called_from_init()

    def called_from_init(self) -> Set[str]:
        """This class's `__init__` and the methods of the class it uses on `self`,
        transitively; unlike `init_time_methods`, not the methods that are only named like
        builders (`_make_grid` may well run in `forward`). (Only this class's own methods:
        the fast path keeps a class whole from its own text alone.)"""
        done: Set[str] = set()
        todo = ["__init__"]
        while todo:
            method = todo.pop()
            if method in done or method not in self.methods:
                continue
            done.add(method)
            todo.extend(self.references.get(method, ()))
        return done

    def method_returns(self, method: str) -> List[MethodReturn]:
        """What `self.<method>(...)` returns, when this class defines it. (Not a base class's
        method: the fast path keeps a class whole from its own text alone.)"""
        return self.returns.get(method, []) if method in self.methods else []

    def returns_tensor(self, method: str, any_device: bool = False) -> bool:
        """Does `self.<method>(...)` return a fixed-device tensor (or, with `any_device`, a
        tensor made in it on any device), directly or through another such method?
        Every `return` of a value must say so; a bare `return None` does not count."""
        seen: Set[str] = set()

        def returns(name: str) -> bool:
            if name in seen:
                return False
            seen.add(name)
            values = [r for r in self.method_returns(name)
                      if not (isinstance(r.value, cst.Name) and r.value.value == "None")]
            return bool(values) and all(
                (r.made_tensor if any_device else r.fixed_tensor) or (r.helper is not None and returns(r.helper))
                for r in values)

        return returns(method)

    def is_placeholder(self, name: str) -> bool:
        """A buffer registered empty (`None`, `UninitializedBuffer`), for a later method to fill."""
        return any(name in info.placeholders for info in self.lineage())

    def is_registered(self, name: str) -> bool:
        """`nn.Module.__setattr__` treats `self.<name> = t` as a buffer update. Not so for
        a parameter: assigning it a plain tensor raises, so a plain tensor assigned to a
        name that another branch makes an `nn.Parameter` (`if learn: self.t =
        nn.Parameter(t) else: self.t = t`) is a plain attribute."""
        return any(name in info.buffers for info in self.lineage())

    def moves_with_module(self, name: str) -> bool:
        """`self.<name>` is a buffer, or an `nn.Parameter` wherever it is assigned:
        `module.to(device)` takes it along (as far as the walk has seen)."""
        if self.is_registered(name):
            return True
        lineage = self.lineage()
        assigned = [a.value for info in lineage for a in info.assignments if a.name == name and not a.element]
        return any(name in info.parameters for info in lineage) and all(
            isinstance(value, cst.Call) and last_identifier(value.func) in REGISTERING_CONSTRUCTORS
            for value in assigned)

    def holds_a_module(self, name: str) -> bool:
        """`self.<name>` is a sub-module wherever it is assigned (`self.emb = nn.Embedding(n, d)`),
        or, set by a base class we cannot read, the class calls it (`self.emb(heads)`)."""
        assigned = self.assigns_a_module(name)
        if assigned is not None:
            return assigned
        lineage = self.lineage()
        return any(name in info.called_attributes for info in lineage) and all(name not in info.methods
                                                                              for info in lineage)

    def assigns_a_module(self, name: str) -> Optional[bool]:
        """Is every assignment of `self.<name>` in the class (and its bases in the file) a
        module? None when nothing assigns it. (`self.emb = None` in `__init__`, then
        `self.emb = nn.Embedding(n, d)` in a helper: a placeholder until the module comes.)"""
        assigned = [a for info in self.lineage() for a in info.assignments if a.name == name and not a.element]
        if not assigned:
            return None
        real = [a.kind for a in assigned if not (isinstance(a.value, cst.Name) and a.value.value == "None")]
        return bool(real) and all(kind == MODULE for kind in real)

    def is_registered_at(self, assignment: AttributeAssignment) -> bool:
        """`self.<name> = t` updates a buffer, or `t` becomes a parameter by a later
        assignment (`self.t = nn.Parameter(self.t)`) on every path that made it."""
        if self.is_registered(assignment.name):
            return True
        index = next(i for i, a in enumerate(self.assignments) if a is assignment)
        # (`if trainable: self.t = nn.Parameter(self.t)` leaves a plain tensor on the other path)
        # (and `if fixed: self.w = torch.eye(n)` / `else: self.w = nn.Parameter(...)` leaves one
        # on the first path: the arms exclude each other)
        return any(a.name == assignment.name and isinstance(a.value, cst.Call)
                   and last_identifier(a.value.func) in REGISTERING_CONSTRUCTORS
                   and (not a.conditional or assignment.conditional) and not exclusive_arms(a.arms, assignment.arms)
                   for a in self.assignments[index + 1:])

    def is_init_time(self, method: str) -> bool:
        """Does `method` run while the module is built (as far as the walk has seen)?"""
        return method == "__init__" or is_init_time_name(method, self) \
            or method in self.init_time_methods()

    def runs_once_built(self, method: str) -> bool:
        """Does `method` (also) run after the module was built, maybe moved? What is not
        init-time does, and so does a reset that `__init__` calls to start from a clean state
        (`clear_z`, `reset_state`): its name says it is called again. (`reset_parameters` is
        init-time by name.)"""
        return not self.is_init_time(method) or (
            _RESETTER_RE.match(method) is not None and not is_init_time_name(method, self))

    def moves_itself_when_built(self) -> bool:
        """Does construction put (part of) the module on a device? Then an instance is
        not known to be on the CPU."""
        return any(info.device_moves & info.init_time_methods() for info in self.lineage())

    def moves_its_tensors(self, name: Optional[str] = None) -> bool:
        """It overrides `_apply`/`to`: plain tensor attributes move with it. An override that
        only moves attributes it names (`self.scale = self.scale.to(device)`, then `return
        super().to(device)`) moves those alone: with `name`, is `self.<name>` one of them?
        Without, does some override move whatever the class holds?"""
        for info in self.lineage():
            for method in _MOVING_OVERRIDES.intersection(info.methods):
                named = _attributes_moved_by_name(info.methods[method])
                if named is None or (name is not None and name in named):
                    return True
        return False


def _attributes_moved_by_name(override: cst.FunctionDef) -> Optional[Set[str]]:
    """The `X`s of `self.X = self.X.to(device)` statements that make up the whole override
    (beside a docstring and `return super().to(device)`); None when it does anything else,
    which may move every attribute (a loop over `vars(self)`, `self._apply(fn)`), or when
    the fast path left only its name (`def to(self): pass`)."""
    named: Set[str] = set()
    body = override.body.body if isinstance(override.body, cst.IndentedBlock) else [override.body]
    for line in body:
        if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return None
        for statement in line.body:
            if isinstance(statement, cst.Expr) and isinstance(statement.value, (cst.SimpleString,
                                                                                cst.ConcatenatedString)):
                continue
            if isinstance(statement, cst.Return) and isinstance(statement.value, cst.Call) \
                    and isinstance(statement.value.func, cst.Attribute) \
                    and isinstance(statement.value.func.value, cst.Call) \
                    and dotted_name(statement.value.func.value.func) == "super":
                continue
            if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1):
                return None
            target, value = statement.targets[0].target, statement.value
            key = self_attribute_key(target)
            if key is None or not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                                   and value.func.attr.value in _MOVERS
                                   and self_attribute_key(value.func.value) == key):
                return None
            named.add(key[5:])
    return named or None


class ClassFactsContext(Protocol):
    """What `ClassFacts` reads from the walk. The `Analyzer` (walker.py) is one; it is
    declared here so that this module need not import the walker, which imports it."""

    kinds: ValueKinds
    stack: List[cst.CSTNode]

    def project_says(self, node: cst.CSTNode, question: str) -> object: ...

    @property
    def scope(self) -> Scope: ...

    @property
    def current_class(self) -> Optional[ClassInfo]: ...

    def parent(self, depth: int = 1) -> Optional[cst.CSTNode]: ...

    def resolve(self, node: cst.CSTNode) -> Optional[str]: ...

    def arms(self) -> Tuple[Tuple[int, bool], ...]: ...


class ClassFacts:
    """Fills each class's `ClassInfo` during the walk (dispatched like a rule)."""

    def __init__(self, analyzer: ClassFactsContext) -> None:
        self.ctx = analyzer
        self.by_name: Dict[str, ClassInfo] = {}
        # per function being walked: (class, method, name of self) or None outside methods
        self._methods: List[Optional[Tuple[ClassInfo, str, str]]] = []
        self._order = 0  # counts reads and assignments of `self.<name>`, in walk order
        self._lambdas: List[bool] = []  # lambdas being walked: kept to be called later?

    def new_class(self, node: cst.ClassDef, module_classes: Set[str]) -> ClassInfo:
        is_module = class_is_module(node, self.ctx.resolve, module_classes,
                                    lambda base: self.ctx.project_says(base, "is_module_class"))
        info = ClassInfo(node, is_module)
        info.bases = [self.by_name[name] for name in (dotted_name(b.value) for b in node.bases if b.keyword is None)
                      if name in self.by_name]
        # every base is read here: defined earlier in the file, or torch's own `nn.Module`
        info.bases_known = all(
            (dotted_name(b.value) in self.by_name and self.by_name[dotted_name(b.value)].bases_known)  # type: ignore[index]
            or self.ctx.resolve(b.value) in TORCH_MODULE for b in node.bases if b.keyword is None)
        self.by_name[info.name] = info
        return info

    def _next_order(self) -> int:
        self._order += 1
        return self._order

    @property
    def _method(self) -> Optional[Tuple[ClassInfo, str, str]]:
        return self._methods[-1] if self._methods else None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        info = self.ctx.current_class
        if info is not None and self.ctx.scope.kind == "class":
            info.methods[node.name.value] = node
            params = [*node.params.posonly_params, *node.params.params]
            if params and not is_static_or_class_method(node):
                self._methods.append((info, node.name.value, params[0].name.value))
                return
            self._methods.append(None)
            return
        # a nested function still sees the method's self
        self._methods.append(self._method)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._methods.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._methods.append(None)  # a class body inside a method has no `self`

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._methods.pop()

    def _self_attribute(self, node: cst.CSTNode) -> Optional[str]:
        method = self._method
        if (method is not None and isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)
                and node.value.value == method[2]):
            return node.attr.value
        return None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = self._self_attribute(node)
        if name is None:
            return
        info, method, _ = self._method  # type: ignore[misc]
        info.references.setdefault(method, set()).add(name)
        parent = self.ctx.parent()
        if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.AnnAssign) and parent.target is node):
            return
        indexed = isinstance(parent, cst.Subscript) and parent.value is node
        if indexed and isinstance(self.ctx.parent(2), cst.AssignTarget):
            assign = self.ctx.parent(3)
            if isinstance(assign, cst.Assign) and method_call(assign.value, "cpu") is not None:
                info.host_only.add(name)  # `self.bank[ind] = feats.cpu()`: written as host data
            if method == "__init__":
                return  # `self.table[i, j] = v` while the module is built fills the tensor, reads nothing
        read = self.ctx.parent(2) if indexed else parent
        if isinstance(read, cst.Attribute) and read.value is (parent if indexed else node) \
                and read.attr.value == "numpy":
            # (svox2's `self.radius.numpy()`, openmixup's `self.label_bank[ind].numpy()`: moving
            # it would break this read)
            info.host_only.add(name)
        if _IO_METHOD_RE.search(method) and not self._refreshes_itself(node, name):
            # save_weights, export: the value goes to a file, not into a computation (but
            # `self.ratios = torch.vstack([self.ratios, r])` in `log_ratios` computes with it)
            return
        if self._read_as_python_data(node):
            return  # `if self.x[i]:`, `self.x.item()`, `self.x.shape`: its device never matters
        # (a lambda kept by `__init__`, `self.clamp = lambda x: self.lo + x`, reads at run time)
        reader = f"{method}.<lambda>" if any(self._lambdas) else method
        info.reads.setdefault(name, []).append((reader, self._moved_where_read(node), self._next_order()))

    def _refreshes_itself(self, node: cst.Attribute, name: str) -> bool:
        """Is `node` read in the value of an assignment to the same `self.<name>`?"""
        for depth in range(1, 16):
            parent = self.ctx.parent(depth)
            if parent is None or isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
                return False
            if isinstance(parent, cst.Assign):
                return any(self._self_attribute(target.target) == name for target in parent.targets)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> None:
        # kept (`self.clamp = lambda x: ...`, returned), not run on the spot (`self.apply(lambda m: ...)`)
        parent = self.ctx.parent()
        self._lambdas.append(isinstance(parent, (cst.Assign, cst.AnnAssign, cst.Return)))

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self._lambdas.pop()

    def _read_as_python_data(self, node: cst.CSTNode) -> bool:
        """`if self.x[i]:`, `while self.x.sum() > 0:`, `assert self.x is not None`, `self.x.item()`,
        `self.x.shape[0]`;
        and `x[self.idx]`, `x[:, self.idx[:n]]`: a CPU index tensor indexes a tensor on any
        device (PyTorch moves it), so its device never matters either."""
        child, depth = node, 1
        only_indexed = True  # no comparison, test or operation between the read and here
        while True:
            parent = self.ctx.parent(depth)
            if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and parent.test is child:
                return True
            if isinstance(parent, cst.Comparison) and all(
                    isinstance(c.operator, (cst.Is, cst.IsNot)) for c in parent.comparisons):
                return True  # `self.x is None`: an identity, wherever the tensor is
            if isinstance(parent, (cst.Subscript, cst.SubscriptElement, cst.Index, cst.Comparison,
                                   cst.ComparisonTarget, cst.UnaryOperation, cst.BooleanOperation)):
                if isinstance(parent, cst.Subscript) and parent.value is not child:
                    return only_indexed  # an index of another value
                if not isinstance(parent, (cst.Subscript, cst.SubscriptElement, cst.Index)):
                    only_indexed = False
                child, depth = parent, depth + 1
                continue
            if isinstance(parent, cst.Attribute) and parent.value is child:
                name = parent.attr.value
                if name in TO_PYTHON and name not in ("device", "is_cuda"):
                    return True  # (its device, though, is where new tensors would go)
                if name == "device" and isinstance(self.ctx.parent(depth + 1), (cst.Comparison, cst.ComparisonTarget)):
                    return True  # `if self.mean.device != x.device:`: compared, nothing goes there
                call = self.ctx.parent(depth + 1)
                if isinstance(call, cst.Call) and call.func is parent:
                    child, depth = call, depth + 2  # self.x.sum().item()
                    continue
            return False

    def _moved_where_read(self, node: cst.CSTNode) -> bool:
        """`self.x.to(x.device)`, `self.x[:n].type_as(x)`, `torch.as_tensor(self.x, device=d)`,
        `torch.clone(self.x).to(d)`, `x.new_tensor(self.x)`, `[a.to(d) for a in self.xs]`:
        the read follows the input."""
        child, depth = node, 1
        while True:
            parent = self.ctx.parent(depth)
            if isinstance(parent, (cst.Subscript, cst.SubscriptElement, cst.Index)) and parent is not None:
                if isinstance(parent, cst.Subscript) and parent.value is not child:
                    return False
                child, depth = parent, depth + 1
                continue
            if isinstance(parent, cst.Attribute) and parent.value is child:
                call = self.ctx.parent(depth + 1)
                if isinstance(call, cst.Call) and call.func is parent:
                    if parent.attr.value in _MOVERS:
                        return True
                    child, depth = call, depth + 2  # self.x.float().to(d)
                    continue
                child, depth = parent, depth + 1
                continue
            if isinstance(parent, cst.Arg):
                call = self.ctx.parent(depth + 1)
                if not isinstance(call, cst.Call):
                    return False
                if keyword(call, "device") is not None or last_identifier(call.func) in ("new_tensor", "type_as", "to"):
                    return True
                # `torch.as_tensor(self.x, **kw)` may be told a device; `F.embedding(i, self.x, **kw)` is not
                if has_star_kwargs(call) and not (self.ctx.resolve(call.func) or "").startswith("torch.nn.functional."):
                    return True
                if call.args[0] is parent and (self.ctx.resolve(call.func) or "").count(".") == 1 \
                        and (self.ctx.resolve(call.func) or "").startswith("torch."):
                    child, depth = call, depth + 2  # torch.clone(torch.as_tensor(self.m)).to(d)
                    continue
                return False
            if isinstance(parent, cst.CompFor) and parent.iter is child:
                comprehension = self.ctx.parent(depth + 1)
                element = getattr(comprehension, "elt", None) or getattr(comprehension, "value", None)
                return element is not None and _moves_anything(element)
            return False

    def visit_Call(self, node: cst.Call) -> None:
        method = self._method
        func = node.func
        if method is None:
            return
        # `F.nll_loss(..., weight=self.weight)`, `torch.einsum("hi,bij->bhj", self.gso, x)`: a
        # tensor, whatever the class was given (asked only of calls handed an attribute of self)
        if any(isinstance(arg.value, (cst.Attribute, cst.List, cst.Tuple)) for arg in node.args):
            qualified = self.ctx.resolve(func) or ""
            if qualified.startswith("torch."):
                for operand in tensor_operands(qualified, node):
                    name = self._self_attribute(operand)
                    if name is not None:
                        method[0].tensor_uses.add(name)
        if not isinstance(func, cst.Attribute):
            return
        if (isinstance(func.value, cst.Name) and func.value.value == method[2] and is_device_move(node)
                and not moves_to_cpu(node)):
            method[0].device_moves.add(method[1])  # self.to(device), self.cuda(rank)
            return
        called = self._self_attribute(func)
        if called is None:
            return
        method[0].called_attributes.add(called)
        attribute = func.attr.value
        # (torchmetrics' `self.add_state("tp", default)`: a state `Metric._apply` moves, as a buffer)
        registry = {"register_buffer": method[0].buffers, "register_parameter": method[0].parameters,
                    "add_state": method[0].buffers}.get(attribute)
        if registry is None and _REGISTERING_HELPER_RE.fullmatch(attribute):
            # the class's own helper (`self.register_buffer_or_parameter("particles", t)`): it
            # registers what it is given, a buffer or a parameter, moved with the module either way
            registry = method[0].buffers
        if registry is None or not node.args:
            return
        name = string_value(node.args[0].value)
        if name is None:
            if not (self._named_by_loaded_data(node.args[0].value) or self._named_by_caller(node.args[0].value)):
                method[0].registers_computed_names = True
        else:
            registry.add(name)
            value = node.args[1].value if len(node.args) > 1 else None
            if "uninit" in attribute.lower() or (value is not None and (
                    (isinstance(value, cst.Name) and value.value == "None")
                    or (isinstance(value, cst.Call) and "Uninitialized" in (last_identifier(value.func) or "")))):
                # a placeholder (`register_buffer("pos", None)`, `UninitializedBuffer()`, schnetpack's
                # `register_uninitialized_buffer("positions")`), filled later, before the module moves
                method[0].placeholders.add(name)

    def _named_by_caller(self, value: cst.BaseExpression) -> bool:
        """`self.register_buffer(name, t)` in a registering helper (`def register_buffer_or_parameter(self,
        name, value)`) with its own parameter: the names are its callers', which the class spells out."""
        function = self.ctx.current_function
        return isinstance(value, cst.Name) and function is not None \
            and _REGISTERING_HELPER_RE.fullmatch(function.name.value) is not None \
            and value.value in {param.name.value for param in (*function.params.posonly_params, *function.params.params)}

    def _named_by_loaded_data(self, value: cst.BaseExpression) -> bool:
        """The key of a loop over a dict the method was handed or loaded (`for name, t in
        graph.items(): self.register_buffer(name, t)`): names from data, not the ones the
        class's code spells out."""
        if not isinstance(value, cst.Name):
            return False
        for node in reversed(self.ctx.stack):
            if isinstance(node, cst.FunctionDef):
                return False
            if isinstance(node, cst.For):
                target = node.target
                first = target.elements[0].value if isinstance(target, cst.Tuple) and target.elements else target
                iterated = node.iter
                return isinstance(first, cst.Name) and first.value == value.value \
                    and isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Attribute) \
                    and iterated.func.attr.value in ("items", "keys") \
                    and self._self_attribute(iterated.func.value) is None
        return False

    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for name, value in unpacked_pairs(target.target, node.value) or [(target.target, node.value)]:
                self._assigned(name, value, node)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is None:
            return
        method = self._method
        count = len(method[0].assignments) if method is not None else 0
        self._assigned(node.target, node.value, node)
        if method is not None and len(method[0].assignments) > count \
                and is_tensor_type(node.annotation.annotation, self.ctx.resolve):
            # `self.alphas_hat: torch.FloatTensor = self.scheduler.get_alpha_hat()`: what it says
            method[0].assignments[-1].kind = TENSOR

    def _assigned(self, target: cst.CSTNode, value: cst.BaseExpression, statement: cst.CSTNode) -> None:
        method = self._method
        if method is None:
            return
        info = method[0]
        if isinstance(target, cst.Subscript) and self._self_attribute(target.value) not in (None, "_buffers"):
            name = self._self_attribute(target.value)
            kinds = self.ctx.kinds
            info.assignments.append(AttributeAssignment(  # type: ignore[arg-type]
                name, method[1], target.value, value, kinds.is_fixed_tensor(value), kinds.kind_of(value),
                element=True, order=self._next_order()))
            return
        if isinstance(target, cst.Subscript) and dotted_name(target.value) == f"{method[2]}._buffers":
            element = target.slice[0].slice if len(target.slice) == 1 else None
            name = string_value(element.value) if isinstance(element, cst.Index) else None
            if name is None:
                info.registers_computed_names = True
            else:
                info.buffers.add(name)
            return
        name = self._self_attribute(target)
        if name is None:
            return
        if isinstance(value, cst.Call) and last_identifier(value.func) in REGISTERING_CONSTRUCTORS:
            if "Parameter" in (last_identifier(value.func) or ""):
                info.parameters.add(name)
            elif (self.ctx.resolve(value.func) or "").startswith("torch."):
                info.buffers.add(name)  # `nn.Buffer(t)`, not a replay `Buffer(size, "cpu")` of the project
        if _moved_to_a_device(value):
            info.device_moves.add(method[1])
        kinds = self.ctx.kinds
        fixed = kinds.is_fixed_tensor(value)
        info.assignments.append(AttributeAssignment(name, method[1], target, value,  # type: ignore[arg-type]
                                                    fixed, kinds.kind_of(value),
                                                    built_once=self.under_once_test(name, method[2]),
                                                    statement=statement,
                                                    made_tensor=fixed or kinds.is_fixed_tensor(value, True),
                                                    helper=self._self_method_call(value),
                                                    order=self._next_order(),
                                                    conditional=self._under_an_if(f"{method[2]}.{name}"),
                                                    arms=self.ctx.arms()))

    def _under_an_if(self, attribute: str) -> bool:
        """Is the node being visited inside an `if` of its method that a path skips (one
        without an `else`)? Not `if self.w is not None:` around a new `self.w`: the path that
        skips it holds None, which is on no device (mmaction2's `class_weight`)."""
        return any(isinstance(node, cst.If) and node.orelse is None and not _tests_not_none(test, attribute)
                   and not _tests_a_device(test)
                   for node, test, _ in self.ctx.enclosing_tests())

    def _self_method_call(self, value: cst.CSTNode) -> Optional[str]:
        """`m` of `self.m(...)` (also wrapped: `Variable(self.m(...))`)."""
        if isinstance(value, cst.Call) and value.args and self.ctx.resolve(value.func) in VARIABLE:
            value = value.args[0].value
        if isinstance(value, cst.Call):
            return self._self_attribute(value.func)
        return None

    def leave_Return(self, node: cst.Return) -> None:
        method = self._method
        if method is None or node.value is None:
            return
        info = method[0]
        if info.methods.get(method[1]) is not self.ctx.current_function:
            return  # a function nested in the method returns to someone else
        kinds = self.ctx.kinds
        fixed = kinds.is_fixed_at_run_time(node.value)
        info.returns.setdefault(method[1], []).append(MethodReturn(
            node.value, fixed, fixed or kinds.is_fixed_tensor(node.value, True), self._self_method_call(node.value)))

    def under_once_test(self, name: str, self_name: str = "self") -> bool:
        """Is the assignment a cache that a test reuses without looking at a device: under
        `if self.<name> is None:` / `if not hasattr(self, "<name>"):`, under a test keyed on
        what the last call saw (`if batch_size != self.batch_size_last:`, `if n > self.max_len:`),
        or after `if self.<name> is not None and self.<name>.shape == x.shape: return self.<name>`?"""
        attribute = f"{self_name}.{name}"
        stack = self.ctx.stack
        for depth in range(len(stack) - 1, -1, -1):
            node = stack[depth]
            if isinstance(node, cst.ClassDef):
                return False
            if isinstance(node, cst.FunctionDef):
                if node.name.value not in ("forward", "__call__"):
                    return False  # (a cache reused this way matters where it is read at run time)
                statement = stack[depth + 2] if depth + 2 < len(stack) else None
                return isinstance(node.body, cst.IndentedBlock) and any(
                    _returns_cache_first(earlier, attribute) for earlier in node.body.body[:_index(node.body.body,
                                                                                                   statement)])
            if isinstance(node, cst.If):
                test = cst.Module([]).code_for_node(node.test)
                if "device" in test or "is_cuda" in test:
                    return False
                return (re.search(rf"{re.escape(attribute)}\s+is\s+None\b", test) is not None
                        or re.search(rf"(hasattr|getattr)\(\s*{re.escape(self_name)}\s*,\s*['\"]{name}['\"]",
                                     test) is not None
                        or _keyed_on_last_call(node.test, self_name))
        return False


def follows_own_device(value: cst.CSTNode, attribute: str) -> bool:
    """Does `value` take its device from `attribute` (`device=self.mem.device`,
    `torch.zeros_like(self.mem)`, `.to(self.mem.device)`, `.type_as(self.mem)`)?"""
    text = cst.Module([]).code_for_node(value)
    if attribute not in text:
        return False
    escaped = re.escape(attribute)
    return re.search(rf"{escaped}\.device\b|_like\(\s*{escaped}\b|\b(?:type_as|to)\(\s*{escaped}\s*\)",
                     text) is not None


def _index(statements: Sequence[cst.CSTNode], statement: Optional[cst.CSTNode]) -> int:
    return next((i for i, s in enumerate(statements) if s is statement), 0)


def _returns_cache_first(statement: cst.CSTNode, attribute: str) -> bool:
    """`if self.cache is not None and self.cache.shape == x.shape: return self.cache`."""
    if not isinstance(statement, cst.If):
        return False
    test = cst.Module([]).code_for_node(statement.test)
    if "device" in test or "is_cuda" in test or not re.search(rf"{re.escape(attribute)}\s+is\s+not\s+None\b", test):
        return False
    body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else [statement.body]
    return any(isinstance(line, cst.SimpleStatementLine) and any(isinstance(small, cst.Return) for small in line.body)
               for line in body)


def _keyed_on_last_call(test: cst.BaseExpression, self_name: str) -> bool:
    """A comparison with what an earlier call left on `self` (`batch_size != self.batch_size_last`,
    `x.shape[1] > self.max_len`), none of its operands a literal (`self.mode == "train"` is a
    switch, not a key)."""
    todo: List[cst.CSTNode] = [test]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Comparison) and all(isinstance(target.operator, _KEY_COMPARISONS)
                                                    for target in node.comparisons):
            operands = [node.left] + [target.comparator for target in node.comparisons]
            if not any(isinstance(o, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float))
                       or (isinstance(o, cst.Name) and o.value in ("None", "True", "False")) for o in operands) \
                    and any(_reads_self(o, self_name) for o in operands):
                return True
        elif isinstance(node, (cst.BooleanOperation, cst.UnaryOperation)):
            todo.extend([node.left, node.right] if isinstance(node, cst.BooleanOperation) else [node.expression])
    return False


_KEY_COMPARISONS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)


def _reads_self(node: cst.CSTNode, self_name: str) -> bool:
    """`self.x`, `self.x.shape[0]`, `self.x.size(1)`: a read rooted at `self` (not a call of its method)."""
    while True:
        if isinstance(node, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value == self_name:
                return True
            node = node.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and not (isinstance(node.func.value, cst.Name) and node.func.value.value == self_name):
            node = node.func.value
        else:
            return False


def _moved_to_a_device(value: cst.BaseExpression) -> bool:
    """`nn.Linear(2, 2).cuda(rank)`, `Net().to(device).eval()`: a chain with a move to a
    device other than the CPU."""
    node: Optional[cst.BaseExpression] = value
    while node is not None:
        if is_device_move(node):
            return not moves_to_cpu(node)
        node = method_call(node, "float", "half", "double", "bfloat16", "train", "eval", "requires_grad_")
    return False


def _moves_anything(node: cst.CSTNode) -> bool:
    """Does `node` contain a `.to(...)`/`.cuda()`/`.type_as(...)` call or a `device=` keyword?"""
    found = False

    class _Finder(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> Optional[bool]:
            nonlocal found
            if (isinstance(call.func, cst.Attribute) and call.func.attr.value in _MOVERS) \
                    or keyword(call, "device") is not None:
                found = True
            return not found

    node.visit(_Finder())
    return found


def _tests_not_none(test: cst.BaseExpression, dotted: str) -> bool:
    """`self.w is not None` (alone or in an `and`) for `dotted` "self.w"."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _tests_not_none(test.left, dotted) or _tests_not_none(test.right, dotted)
    return isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
        and isinstance(test.comparisons[0].operator, cst.IsNot) and dotted_name(test.left) == dotted \
        and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"
