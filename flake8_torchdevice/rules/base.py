"""The shape every rule shares: a small class with a code, a one-line message, its
docs (the class docstring) and examples that double as tests; and the fix API, the
edits a rule offers with a finding (`self.report(node, fix=Fix().add_keyword(...))`).

A fix replaces nodes of the libcst tree being walked, matched by identity: code
outside the replaced nodes is kept byte for byte. `flake8_torchdevice.fix` applies
the fixes; its docstring says how a rule adds one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import (TYPE_CHECKING, AbstractSet, Callable, ClassVar, Dict, FrozenSet, Iterable, List, Optional, Protocol,
                    Sequence, Set, Tuple, Union)

import libcst as cst

from ..analysis.devices import move_target
from ..analysis.kinds import TENSOR, TENSOR_ONLY_METHODS
from ..analysis.syntax import (defaults_to_none, dotted_name, is_static_or_class_method, keyword, last_identifier,
                               string_value)

if TYPE_CHECKING:
    from ..analysis import Analyzer

# What a node is replaced by: a node, several statements (`cst.FlattenSentinel`),
# or nothing (`cst.RemoveFromParent()`, for a statement or an argument).
Replacement = Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel]
# A value for a fix: a node, or the text of an expression.
Expression = Union[cst.BaseExpression, str]

# Stands for the module-level device selection that `fix --add-device` adds when no
# device-aware value is in scope; the fixer renames it to a free name (`device`, ...).
ADDED_DEVICE = "__torchdevice_added_device__"


def expression(value: Expression) -> cst.BaseExpression:
    return cst.parse_expression(value) if isinstance(value, str) else value


@dataclass(frozen=True)
class Fix:
    """Node replacements, built with the helpers below, each returning a new Fix:

        Fix().add_keyword(call, "map_location", "device")
        Fix().replace(call.func.attr, cst.Name("to"))

    `adds_device`: the fix uses `ADDED_DEVICE`, so it applies only with `--add-device`.
    """

    replacements: Tuple[Tuple[cst.CSTNode, Replacement], ...] = ()
    adds_device: bool = False

    def replace(self, node: cst.CSTNode, new: Union[Replacement, str]) -> "Fix":
        """`node` becomes `new` (a node, or the text of an expression)."""
        new_node = expression(new) if isinstance(new, str) else new
        return replace(self, replacements=self.replacements + ((node, new_node),))

    def needs_added_device(self, needed: bool = True) -> "Fix":
        return replace(self, adds_device=self.adds_device or needed)

    def add_keyword(self, call: cst.Call, name: str, value: Expression) -> "Fix":
        """`call(a, b)` -> `call(a, b, name=value)`, in the call's own layout: one
        argument per line stays so, a trailing comma stays, comments stay where they are."""
        return self.replace(call, with_keyword(call, name, value))

    def move_statement_before(self, statement: cst.SimpleStatementLine, anchor: cst.BaseStatement,
                              moved: Optional[cst.SimpleStatementLine] = None) -> "Fix":
        """Take `statement` (with its trailing comment) out of its place and put it, or
        `moved` (a rewrite of it), right before `anchor` in the same block; the blank
        lines and comments above `anchor` stay above the pair. Check first that no
        comment sits above `statement`: it would be left behind."""
        moved = (moved or statement).with_changes(leading_lines=anchor.leading_lines)
        anchored = anchor.with_changes(leading_lines=())
        return (self.replace(anchor, cst.FlattenSentinel([moved, anchored]))
                .replace(statement, cst.RemoveFromParent()))


def with_keyword(call: cst.Call, name: str, value: Expression) -> cst.Call:
    """`call(a, b)` -> `call(a, b, name=value)`, in the call's own layout (see Fix.add_keyword)."""
    return call.with_changes(args=_with_argument(call, cst.Arg(
        value=expression(value), keyword=cst.Name(name),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))))


def with_first_argument(call: cst.Call, value: Expression) -> List[cst.Arg]:
    """`call`'s arguments with `value` in front: `f(a)` -> `f(value, a)`; in a call that
    opens its arguments on a new line, `value` gets a line of its own."""
    separator: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace(" ")
    if isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        separator = _clean_break(call.whitespace_before_args)
    first = cst.Arg(expression(value), comma=cst.Comma(whitespace_after=separator) if call.args
                    else cst.MaybeSentinel.DEFAULT)
    return [first, *call.args]


def _line_break(previous: cst.ParenthesizedWhitespace, template: cst.ParenthesizedWhitespace
                ) -> cst.ParenthesizedWhitespace:
    """`previous`'s end of line (comment included) followed by `template`'s indentation."""
    return previous.with_changes(indent=template.indent, last_line=template.last_line)


def _clean_break(template: cst.ParenthesizedWhitespace) -> cst.ParenthesizedWhitespace:
    """A line break with `template`'s indentation and no comment."""
    return cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=(),
                                       indent=template.indent, last_line=template.last_line)


def _with_argument(call: cst.Call, new: cst.Arg) -> List[cst.Arg]:
    args = list(call.args)
    if not args:
        return [new]
    last = args[-1]
    # How arguments are separated: one per line when the call opens its arguments on a
    # new line or separates them with line breaks; else `, `.
    breaks = [a.comma.whitespace_after for a in args[:-1] if isinstance(a.comma, cst.Comma)]
    breaks.insert(0, call.whitespace_before_args)
    line_breaks = [b for b in breaks if isinstance(b, cst.ParenthesizedWhitespace)]
    separator: cst.BaseParenthesizableWhitespace = (_clean_break(line_breaks[-1]) if line_breaks
                                                   else cst.SimpleWhitespace(" "))
    comma = last.comma if isinstance(last.comma, cst.Comma) else None
    closing = comma.whitespace_after if comma is not None else last.whitespace_after_arg
    if isinstance(closing, cst.ParenthesizedWhitespace):
        # `)` on its own line: the new argument goes on a line of its own before it,
        # the old last line keeps its comment.
        if not isinstance(separator, cst.ParenthesizedWhitespace):
            separator = closing.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=(),
                                             last_line=cst.SimpleWhitespace(closing.last_line.value + "    "))
        after_last = _line_break(closing, separator)
        if comma is not None:
            args[-1] = last.with_changes(comma=comma.with_changes(whitespace_after=after_last))
            return args + [new.with_changes(comma=cst.Comma(whitespace_after=_clean_break(closing)))]
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=after_last),
                                     whitespace_after_arg=cst.SimpleWhitespace(""))
        return args + [new.with_changes(whitespace_after_arg=_clean_break(closing))]
    if comma is not None:  # `f(a, )`: keep the trailing comma after the new argument
        args[-1] = last.with_changes(comma=comma.with_changes(whitespace_after=separator))
        return args + [new.with_changes(comma=cst.Comma(whitespace_after=comma.whitespace_after),
                                        whitespace_after_arg=last.whitespace_after_arg)]
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=separator),
                                 whitespace_after_arg=cst.SimpleWhitespace(""))
    return args + [new.with_changes(whitespace_after_arg=last.whitespace_after_arg)]


# (node, code, message, fix): positions are computed only for nodes that get reported.
RawFinding = Tuple[cst.CSTNode, str, str, Optional[Fix]]


def any_word(words: Iterable[str]) -> str:
    """A regular expression matching one of `words` as a whole word. It opens with a
    lookahead for the words' first letters: `re` then skips every other position at
    once, where `\\b` alone is tried at each (a third faster on real code, the same matches)."""
    words = list(words)
    return rf"(?=[{''.join(sorted({word[0] for word in words}))}])\b(?:{'|'.join(words)})\b"


def trigger_union(parts: Sequence[Tuple[Tuple[str, ...], str]]) -> Tuple[str, Tuple[str, ...]]:
    """`triggers` and `trigger_words` of a rule given as `trigger_parts`."""
    return "|".join(f"(?:{pattern})" for _, pattern in parts), tuple(word for words, _ in parts for word in words)


@dataclass(frozen=True)
class CallTrigger:
    """A rule whose findings are always calls: inside a function, only such a call (found
    in the `ast` tree flake8 already built) makes the function worth parsing, not the
    trigger word, which fills docstrings and comments ("a tensor of ones")."""

    callees: FrozenSet[str]  # last identifiers of the callee: `zeros` for torch.zeros
    # keywords that rule the call out; None stands for `**kwargs`
    exempt_keywords: FrozenSet[Optional[str]] = frozenset()


class RuleOptions(Protocol):
    """What a rule reads from the run's options. The engine's `Options` is one; it is
    declared here so that the rules need not import the engine, which imports them."""

    @property
    def check_param_defaults(self) -> bool: ...


class Rule:
    """Base class. Subclasses define `visit_<Node>` / `leave_<Node>` methods, which the
    analyzer calls during its single traversal, and call `self.report(node)`."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    # Family 9 is opinionated and must be switched on explicitly.
    default_enabled: ClassVar[bool] = True
    # Regular expression over source text: a function whose text does not match the
    # union of these for every enabled rule cannot hold a finding and is not parsed.
    triggers: ClassVar[str]
    # Substrings one of which every match of `triggers` contains: the regular expression
    # runs only on text holding one (a cheap test first). Empty: always run it.
    # tests/test_fast_path.py checks every match on real code against them.
    trigger_words: ClassVar[Tuple[str, ...]] = ()
    # Optional: `triggers` split into (words, regular expression) parts, each run only on
    # text holding one of its own words, for a pattern whose costly alternatives have rare
    # words (`synchronize`) and whose common word (`cuda`) needs only a cheap one. Such a
    # rule sets `triggers, trigger_words = trigger_union(trigger_parts)`.
    trigger_parts: ClassVar[Tuple[Tuple[Tuple[str, ...], str], ...]] = ()
    # Regular expression for module-level data (a long `NAME = ...` assignment) that the
    # rule reads although it matches no trigger (TDV301: `model_urls = {...}`): the fast
    # path keeps such data instead of stubbing it.
    module_data_words: ClassVar[str] = ""
    # Set for rules whose findings are always calls to these callees (see CallTrigger).
    call_trigger: ClassVar[Optional[CallTrigger]] = None
    # A function `ast node of a function -> bool`: in functions, the rule's `triggers`
    # only select candidates and this test on the tree decides (cheaper than parsing).
    matches_function: ClassVar[Optional[Callable[[ast.AST], bool]]] = None
    # For rules that judge a whole class (what one method assigns, another reads): a
    # function `(ast.ClassDef, import aliases of trigger names, source text of a node) -> bool`
    # saying the class
    # may hold a finding. The fast path keeps such a class whole (with its base classes
    # in the file); the rule's `triggers` only decide whether the file is parsed at all.
    keeps_class: ClassVar[Optional[Callable[[ast.ClassDef, FrozenSet[str], Callable[[ast.AST], str],
                                             Optional[Callable[[str], bool]]], bool]]] = None
    # Rules whose findings a CUDA guard silences (`ctx.guarded`): family 1, TDV301, TDV501.
    silenced_by_guards: ClassVar[bool] = False
    # Rules whose bugs need a second device: not run on a test file that never names one
    # (`analysis.helpers.is_host_only_test`): TDV201, TDV202.
    needs_a_device_in_tests: ClassVar[bool] = False
    # Rules that query `ctx.origins` (analysis/origins.py): the analyzer keeps those facts
    # only when an enabled rule reads them.
    uses_origins: ClassVar[bool] = False
    # Examples, also run as tests: code without findings, and code whose lines marked
    # `# expect: CODE` carry exactly those findings.
    VALID: ClassVar[List[str]] = []
    INVALID: ClassVar[List[str]] = []

    def __init__(self, analyzer: "Analyzer", sink: List[RawFinding], options: RuleOptions) -> None:
        self.ctx = analyzer
        self.options = options
        self._sink = sink

    def report(self, node: cst.CSTNode, message: Optional[str] = None, fix: Optional[Fix] = None,
               guardable: bool = True, within: Optional[Tuple[str, ...]] = None) -> None:
        """Add a finding. In a rule a guard silences, `guardable` findings also go when they
        turn out to be in a helper that only guarded code calls (`analysis/helpers.py`);
        `within`: the functions a finding reported later was found in (`ctx.enclosing_functions()`)."""
        self._sink.append((node, self.code, message or self.message, fix))
        if self.silenced_by_guards and guardable:
            self.ctx.note_guardable_finding(self._sink, within)

    def device_for_fix(self, node: cst.CSTNode, avoid: AbstractSet[str] = frozenset(),
                       add: bool = True) -> Optional[Tuple[str, bool]]:
        """The device a fix at `node` (the node being visited) writes, and whether it is
        the selection `fix --add-device` adds (pass that to `Fix.needs_added_device`):
        see `device_for_fix` below. `avoid`: names whose tensor's device must not be
        used (the receiver of the `.cuda()` being fixed). None when there is no device
        and none can be added (`add=False`, or no leading `import torch` to add it after)."""
        return device_for_fix(self.ctx, node, avoid=avoid, add=add)


# ---------------------------------------------------------------- the device a fix writes

# torch.nn layers that hold parameters when built with their defaults.
_LAYERS_WITH_PARAMETERS = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "SyncBatchNorm", "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell", "MultiheadAttention", "PReLU",
    "Transformer", "TransformerEncoderLayer", "TransformerDecoderLayer"})
# torch.nn containers: they have parameters when a layer they hold has.
_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})
# A parameter read like this holds a tensor (`x.unsqueeze(1)`, `x.shape[0]`, `x.device`).
_TENSOR_READS = TENSOR_ONLY_METHODS | {"device", "dtype", "shape", "ndim"}
_PYTHON_TYPES = frozenset({"int", "float", "bool", "str", "bytes", "dict", "list", "tuple"})


def device_for_fix(ctx: "Analyzer", node: cst.CSTNode, *, stack: Optional[Sequence[cst.CSTNode]] = None,
                   met: Optional[str] = None, inputs: Sequence[str] = (), avoid: AbstractSet[str] = frozenset(),
                   add: bool = True, tensor_parameters: bool = True) -> Optional[Tuple[str, bool]]:
    """The device a fix at `node` writes, chosen the way people fixing these bugs by hand
    choose it, and whether it is the added selection. `stack`: the nodes from the module
    down to `node` when it is not the node being visited (a factory judged where its
    tensor is used later). In this order:

    1. the `.device` of a tensor known to be on the model's device: `met`, the tensor
       parameter the new value meets (the rule knows); `p` of `for p in group["params"]`
       (an optimizer's parameters); the first of the rule's `inputs` (parameters of
       device-sensitive code, which the rule knows) known to be a tensor (its kind,
       `x: Tensor`, `x.unsqueeze(1)`, `x.shape`, passed to a layer: not `n` of
       `sample(self, n)`); in a method of an `nn.Module` that runs after it is
       built (not `__init__` and what it calls), the first parameter known to be a tensor
       so, when the method moves none of its parameters (then the inputs may arrive
       elsewhere);
    2. in such a method, when the class builds layers with parameters in `__init__`
       (`nn.Linear`, `nn.Parameter`, a container of them, a class of the file that has
       some): `next(self.parameters()).device`;
    3. a device variable in scope (`Analyzer.device_in_scope`: `device`, `self.device`,
       `args.device`, a parameter named so, a name bound to `x.device` or a selection);
       with `tensor_parameters` also a parameter annotated `Tensor`;
    4. with `add`, the selection `fix --add-device` adds after the imports
       (`ADDED_DEVICE`), when the file imports torch there.

    Names in `avoid` (what a `.cuda()` being fixed moves), and the names the function
    moves anywhere (`x = x.cuda()`: `x` may arrive elsewhere), are never the tensor whose
    device is taken: `x.cuda()` must not become `x.to(x.device)`."""
    stack = ctx.stack if stack is None else stack
    index = _function_index(stack)
    if index is not None:  # a tensor the function moves may arrive elsewhere: `x = x.cuda()`
        avoid = avoid | _parameter_uses(ctx, stack[index])[1]  # type: ignore[arg-type]
    if met is not None and met.split(".")[0] not in avoid:
        return f"{met}.device", False
    parameter = _optimizer_parameter(stack)
    if parameter is not None and parameter not in avoid:
        return f"{parameter}.device", False
    function = stack[index] if index is not None else None
    for name in inputs:
        if name not in avoid and isinstance(function, cst.FunctionDef) and is_tensor_parameter(ctx, function, name):
            return f"{name}.device", False
    method = _run_time_method(ctx, stack)
    if method is not None:
        tensor = _tensor_input(ctx, method, avoid)
        if tensor is not None:
            return f"{tensor}.device", False
        if "self" not in avoid and _has_parameters(ctx, stack[0], stack[_class_index(stack, method)]):
            return "next(self.parameters()).device", False
    found = ctx.device_in_scope(node, stack=stack, avoid=avoid, tensors=tensor_parameters)
    if found is not None:
        return found, False
    return (ADDED_DEVICE, True) if add and ctx.can_add_device() else None


def names_read(node: cst.CSTNode) -> Set[str]:
    """The names an expression reads (`{"x", "self"}` for `self.pad(x)[0]`): for `avoid`."""
    found: Set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False  # `x.attr`: `attr` is no name

    node.visit(Names())
    return found


def _optimizer_parameter(stack: Sequence[cst.CSTNode]) -> Optional[str]:
    """`p` inside `for p in group["params"]:` in the function being walked."""
    for index in range(len(stack) - 2, 0, -1):
        loop = stack[index]
        if isinstance(loop, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(loop, cst.For) and stack[index + 1] is loop.body and isinstance(loop.target, cst.Name) \
                and isinstance(loop.iter, cst.Subscript) and len(loop.iter.slice) == 1 \
                and isinstance(loop.iter.slice[0].slice, cst.Index) \
                and string_value(loop.iter.slice[0].slice.value) == "params":
            return loop.target.value
    return None


def _function_index(stack: Sequence[cst.CSTNode]) -> Optional[int]:
    """Where the innermost function whose body holds the node stands in `stack`."""
    for index in range(len(stack) - 2, 0, -1):
        if isinstance(stack[index], cst.ClassDef):
            return None
        if isinstance(stack[index], cst.FunctionDef):
            return index if stack[index + 1] is stack[index].body else None  # type: ignore[attr-defined]
    return None


def _class_index(stack: Sequence[cst.CSTNode], method: cst.FunctionDef) -> int:
    return next(i for i, node in enumerate(stack) if node is method) - 2


def _run_time_method(ctx: "Analyzer", stack: Sequence[cst.CSTNode]) -> Optional[cst.FunctionDef]:
    """The method of an `nn.Module` subclass the node is in (directly, not in a nested
    function), when it runs on a built module: not `__init__` or what it calls, not a
    static or class method; its first parameter is `self`."""
    index = _function_index(stack)
    if index is None or index < 2 or not isinstance(stack[index - 2], cst.ClassDef):
        return None
    function, owner = stack[index], stack[index - 2]
    assert isinstance(function, cst.FunctionDef)
    info = next((info for info in ctx.classes if info.node is owner), None)
    params = function.params.params
    if info is None or not info.is_module or (info.is_init_time(function.name.value)
                                              and id(function) not in ctx.origins.per_input_methods) \
            or is_static_or_class_method(function) or not params or params[0].name.value != "self":
        return None
    return function


def _tensor_input(ctx: "Analyzer", function: cst.FunctionDef, avoid: AbstractSet[str]) -> Optional[str]:
    """The method's first parameter known to be a tensor (and not rebound to something
    else); None when the method moves one of its parameters to a device."""
    scope = ctx.function_scope()
    if scope.node is not function:
        return None
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params][1:]
    if any(param.name.value in _parameter_uses(ctx, function)[1] for param in every):
        return None
    for param in every:
        name = param.name.value
        annotation = param.annotation.annotation if param.annotation is not None else None
        if name in avoid or (annotation is not None and last_identifier(annotation) in _PYTHON_TYPES):
            continue
        if is_tensor_parameter(ctx, function, name):
            return name
    return None


def is_tensor_parameter(ctx: "Analyzer", function: cst.FunctionDef, name: str) -> bool:
    """Is parameter `name` of `function` (the function being walked) a tensor: its kind
    says so, or, not rebound, the function reads it as one anywhere or passes it to a layer?
    Not one defaulting to None (`mask: Optional[Tensor] = None`): it may be None."""
    scope = ctx.function_scope()
    if scope.node is not function:
        return False
    if defaults_to_none(function, name):
        return False
    if ctx.kinds.kind_of(cst.Name(name)) == TENSOR:
        return True
    kinds = ctx.kinds.facts(scope)
    return name not in kinds.names and (name in _parameter_uses(ctx, function)[0] or name in kinds.module_inputs)


def _parameter_uses(ctx: "Analyzer", function: cst.FunctionDef) -> Tuple[Set[str], Set[str]]:
    """The names a function reads as tensors (`x.unsqueeze(1)`, `x.shape`) and those it
    moves to a device (`x.cuda()`, `x = x.to(device)`), anywhere in its body."""
    cache: Dict[int, Tuple[Set[str], Set[str]]] = ctx.scopes[0].note("fix: parameter uses", dict)
    if id(function) in cache:
        return cache[id(function)]
    reads: Set[str] = set()
    moved: Set[str] = set()

    class Uses(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name) and node.attr.value in _TENSOR_READS:
                reads.add(node.value.value)

        def visit_Call(self, node: cst.Call) -> None:
            target = move_target(node)
            if target is not None:
                moved.add(target)

    function.body.visit(Uses())
    cache[id(function)] = reads, moved
    return reads, moved


def _has_parameters(ctx: "Analyzer", module: cst.CSTNode, owner: cst.CSTNode) -> bool:
    """Does the class (or a base class of the file) build a layer with parameters, or a
    parameter, in `__init__`? Then `next(self.parameters())` exists in its other methods."""
    if not isinstance(module, cst.Module) or not isinstance(owner, cst.ClassDef):
        return False
    cache: Dict[int, bool] = ctx.scopes[0].note("fix: classes with parameters", dict)
    classes = {statement.name.value: statement for statement in module.body if isinstance(statement, cst.ClassDef)}

    def has(cls: cst.ClassDef, depth: int) -> bool:
        if id(cls) not in cache:
            cache[id(cls)] = False  # a cycle of bases says nothing
            cache[id(cls)] = depth < 4 and (_init_builds_parameters(ctx, cls, classes, lambda c: has(c, depth + 1))
                                            or any(has(classes[base], depth + 1) for base in _base_names(cls)
                                                   if base in classes))
        return cache[id(cls)]

    return has(owner, 0)


def _base_names(cls: cst.ClassDef) -> Iterable[str]:
    return [name for name in (dotted_name(base.value) for base in cls.bases if base.keyword is None) if name]


def _init_builds_parameters(ctx: "Analyzer", cls: cst.ClassDef, classes: Dict[str, cst.ClassDef],
                            has: Callable[[cst.ClassDef], bool]) -> bool:
    init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None:
        return False

    def builds(value: cst.CSTNode) -> bool:
        if isinstance(value, (cst.List, cst.Tuple)):
            return any(builds(element.value) for element in value.elements)
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            return builds(value.elt)
        if not isinstance(value, cst.Call):
            return False
        qualified = ctx.resolve(value.func) or ""
        last = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("torch.nn.") and last in ("Parameter", "UninitializedParameter"):
            return True
        if qualified.startswith("torch.nn.") and last in _LAYERS_WITH_PARAMETERS:
            return not any(keyword(value, flag) is not None for flag in ("affine", "elementwise_affine"))
        if qualified.startswith("torch.nn.") and last in _CONTAINERS:
            return any(builds(arg.value) for arg in value.args)
        own = classes.get(dotted_name(value.func) or "") if not qualified else None
        return own is not None and has(own)

    found = False

    class Assignments(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is init  # not into nested functions

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found
            if any(isinstance(t.target, cst.Attribute) and dotted_name(t.target.value) == "self"
                   for t in node.targets) and builds(node.value):
                found = True

        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found  # self.register_parameter("w", nn.Parameter(...)), self.add_module("fc", nn.Linear(...))
            if isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) == "self" \
                    and node.func.attr.value in ("register_parameter", "add_module") and len(node.args) == 2 \
                    and builds(node.args[1].value):
                found = True

    init.visit(Assignments())
    return found
