"""Small, context-free questions about libcst expressions: names, literals, arguments."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections import deque
from typing import AbstractSet, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple, Union

import libcst as cst

AstDefinition = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef]


def ast_definitions(node: ast.AST) -> Iterator[AstDefinition]:
    """Every function and class defined inside `node` (an `ast` node), at any depth.

    Definitions are statements, so only statement bodies are visited, never
    expressions: several times cheaper than `ast.walk` (this runs on every file).
    The order is `ast.walk`'s (breadth first, fields in order). (The loop of
    `ast_statements`, written out: filtering its output costs a generator step per
    statement, measured at 1.5% of `check` on timm.)"""
    todo = deque([node])
    while todo:
        current = todo.popleft()
        for name in ("body", "handlers", "orelse", "finalbody", "cases"):
            children = getattr(current, name, None)
            if not isinstance(children, list):
                continue  # a lambda's or an expression's `body` is one expression
            for child in children:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    yield child
                todo.append(child)


def ast_statements(node: ast.AST) -> Iterator[ast.AST]:
    """Every statement inside `node` (an `ast` node), at any depth, those of nested
    functions and classes too (and their `except` handlers and `case`s): what
    `ast.walk` finds of them, without visiting a single expression."""
    todo = deque([node])
    while todo:
        current = todo.popleft()
        for name in ("body", "handlers", "orelse", "finalbody", "cases"):
            children = getattr(current, name, None)
            if not isinstance(children, list):
                continue  # a lambda's or an expression's `body` is one expression
            for child in children:
                yield child
                todo.append(child)


def ast_dotted_name(node: ast.AST) -> Optional[str]:
    """"torch.linalg.inv" of the `ast` expression `torch.linalg.inv`; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = ast_dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def walk_ast(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk`: the same nodes in the same order (breadth first, fields in order),
    twice as fast: no generator per node for its fields and children."""
    todo = deque([node])
    take, add = todo.popleft, todo.append
    while todo:
        node = take()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                add(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        add(item)
        yield node


class _FieldOrder(cst.CSTVisitor):
    """Records the order in which libcst visits a node's fields (not their children)."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: List[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if attribute not in self.fields:
            self.fields.append(attribute)


_FIELD_ORDER: Dict[type, Tuple[str, ...]] = {}


def child_fields(node: cst.CSTNode) -> Tuple[str, ...]:
    """The fields of a node that may hold children, in the order libcst visits them
    (asked of libcst once per node class)."""
    fields = _FIELD_ORDER.get(type(node))
    if fields is None:
        order = _FieldOrder()
        node._visit_and_replace_children(order)  # asks libcst for the order; rebuilds this node once
        names = order.fields + [f.name for f in dataclasses.fields(node) if f.name not in order.fields]
        fields = _FIELD_ORDER[type(node)] = tuple(names)
    return fields


_IS_NODE: Dict[type, bool] = {}


def is_node(value: object) -> bool:
    """`isinstance(value, cst.CSTNode)`, from the class's bases: libcst's node classes are
    ABCs, and `isinstance` on them goes through `abc` for every call."""
    node = _IS_NODE.get(type(value))
    if node is None:
        node = _IS_NODE[type(value)] = cst.CSTNode in type(value).__mro__
    return node


def function_statements(function: cst.FunctionDef, in_order: bool = False) -> Iterator[cst.CSTNode]:
    """The small statements of `function` (`Assign`, `Return`, ...) and their blocks, not
    those of functions or classes nested in it; in source order when `in_order` (which
    costs a list per block)."""
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        yield node
        nested = [child for child in children(node)
                  if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression))]
        stack.extend(reversed(nested) if in_order else nested)


def assigned_values(function: cst.FunctionDef, names: AbstractSet[str]) -> List[cst.BaseExpression]:
    """The values `function`'s own assignments bind to any of `names` (dotted: `x`, `self.gen`),
    in no particular order: `x = a` and `x = y = b` give `a` and `b`."""
    return [statement.value for statement in function_statements(function) if isinstance(statement, cst.Assign)
            and any(dotted_name(target.target) in names for target in statement.targets)]


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every node under it (depth first, nested functions included)."""
    stack: List[cst.CSTNode] = [node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """`node.children`: the same nodes in the same order, read from the node's fields.
    libcst's property finds them by rebuilding the node (a new node, validated), which
    made it most of the cost of the questions that walk expressions with it."""
    found: List[cst.CSTNode] = []
    for name in child_fields(node):
        value = getattr(node, name)
        if is_node(value):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(item for item in value if is_node(item))
    return found


# The questions below, asked of most nodes, test a node's exact class (`type(node) is
# cst.Name`): libcst's node classes are ABCs, and `isinstance` against a class the node
# is not goes through `abc`'s Python-level check. The same answers: nothing subclasses
# libcst's concrete node classes.


def dotted_name(node: cst.CSTNode) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    parts: List[str] = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def last_identifier(node: cst.CSTNode) -> Optional[str]:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return node.attr.value
    if type(node) is cst.Call:
        return last_identifier(node.func)
    return None


def string_value(node: cst.CSTNode) -> Optional[str]:
    """The text of a plain (non-f, non-bytes) string literal, else None."""
    if type(node) is cst.SimpleString:
        prefix = node.prefix.lower()
        if "b" in prefix:
            return None
        try:
            value = node.evaluated_value
        except Exception:  # malformed escapes: not a literal we understand
            return None
        return value if isinstance(value, str) else None
    if type(node) is cst.ConcatenatedString:
        left, right = string_value(node.left), string_value(node.right)
        if left is None or right is None:
            return None
        return left + right
    return None


def string_prefix(node: cst.CSTNode) -> Optional[str]:
    """The literal text a string built at run time starts with: `f"cuda:{r}"`,
    `"cuda:" + str(r)`, `"cuda:{}".format(r)` and `"cuda:%d" % r` -> `cuda:`."""
    plain = string_value(node)
    if plain is not None:
        return plain
    if isinstance(node, cst.FormattedString) and node.parts:
        first = node.parts[0]
        if isinstance(first, cst.FormattedStringText):
            return first.value
        return ""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left = string_prefix(node.left)
        if left is not None and string_value(node.left) is not None:
            return left + (string_prefix(node.right) or "")
        return left
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        template = string_value(node.left)
        return template.split("%", 1)[0] if template is not None else None
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        template = string_value(node.func.value)
        return template.split("{", 1)[0] if template is not None else None
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
    if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in names:
        return node.func.value
    return None


def unpacked_pairs(target: cst.BaseExpression,
                   value: cst.BaseExpression) -> Optional[List[Tuple[cst.BaseExpression, cst.BaseExpression]]]:
    """`a, b = x, y`: [(a, x), (b, y)]; None unless both sides are tuples or lists of one length."""
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)) \
            and len(target.elements) == len(value.elements):
        return [(name.value, part.value) for name, part in zip(target.elements, value.elements)]
    return None


_PARAMETER_ITERATORS = ("parameters", "buffers", "named_parameters", "named_buffers")


def comprehension_clauses(clause: Optional[cst.CompFor]) -> Iterator[cst.CompFor]:
    """A comprehension's `for ... in ...` clauses from `clause` (its `for_in`) inwards."""
    while clause is not None:
        yield clause
        clause = clause.inner_for_in


def parameter_loop_targets(target: cst.BaseExpression, iterable: cst.BaseExpression
                           ) -> List[Tuple[cst.Name, cst.BaseExpression]]:
    """(loop target, module) for the targets of a `for` that hold a module's parameters
    or buffers: `p` of `for p in m.parameters()`, of `for name, p in m.named_parameters()`,
    of `for g, p in zip(grads, self.parameters())`."""
    pairs = [(target, iterable)]
    if type(iterable) is cst.Call and isinstance(iterable.func, cst.Name) and iterable.func.value == "zip" \
            and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(iterable.args):
        pairs = [(element.value, arg.value) for element, arg in zip(target.elements, iterable.args)]
    found = []
    for item, source in pairs:
        module = method_call(source, *_PARAMETER_ITERATORS)
        if module is None:
            continue
        if source.func.attr.value.startswith("named_"):  # type: ignore[attr-defined]
            if not (isinstance(item, (cst.Tuple, cst.List)) and len(item.elements) == 2):
                continue
            item = item.elements[1].value
        if isinstance(item, cst.Name):
            found.append((item, module))
    return found


def block_statements(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    return body.body  # IndentedBlock.body and SimpleStatementSuite.body


def root_name(node: cst.CSTNode) -> Optional[str]:
    """`buf` of `buf`, `buf.narrow(1, 0, n)`, `buf[0]`, `buf.T`: the name a chain starts from."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Call):
            node = node.func
        elif isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        else:
            return None


def parameter_names(function: cst.FunctionDef) -> List[str]:
    params = function.params
    return [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]


def decorator_names(function: cst.FunctionDef) -> List[Optional[str]]:
    """The last identifier of each decorator: `staticmethod`, `cache` of `functools.cache`."""
    return [last_identifier(d.decorator) for d in function.decorators]


def is_static_or_class_method(function: cst.FunctionDef) -> bool:
    return any(name in ("staticmethod", "classmethod") for name in decorator_names(function))


def equality_test(test: cst.BaseExpression) -> Optional[Tuple[str, FrozenSet[str]]]:
    """A test true for some constant values of one name only: `kind == "sdp"` is ("kind",
    {'"sdp"'}); `opt == Optim.A or opt == Optim.B` and `opt in (Optim.A, Optim.B)` give both
    values. Constants are literals and dotted names (enum members), not plain names."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        left, right = equality_test(test.left), equality_test(test.right)
        if left is None or right is None or left[0] != right[0]:
            return None
        return left[0], left[1] | right[1]
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    subject = dotted_name(test.left)
    comparison = test.comparisons[0]
    if subject is None:
        return None
    if isinstance(comparison.operator, cst.Equal):
        values = [comparison.comparator]
    elif isinstance(comparison.operator, cst.In) and isinstance(comparison.comparator, (cst.Tuple, cst.List, cst.Set)):
        values = [element.value for element in comparison.comparator.elements]
    else:
        return None
    constants = [_constant_text(value) for value in values]
    if not constants or None in constants:
        return None
    return subject, frozenset(constants)  # type: ignore[arg-type]


def flag_test(test: cst.BaseExpression) -> Optional[Tuple[str, bool]]:
    """A test of one name's truth: `if self.parallel:` is ("self.parallel", True), `if not
    args.dp:` is ("args.dp", False)."""
    value = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, value = test.expression, not value
    subject = _flag_subject(test)
    return (subject, value) if subject is not None else None


def _flag_subject(node: cst.BaseExpression) -> Optional[str]:
    """`self.parallel`; `cfg["model"]["no_dis"]` and `cfg["model"].get("no_dis", False)`, one
    key read two ways, as `cfg[model][no_dis]`."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        return dotted_name(node)
    key: Optional[str] = None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key, inner = string_value(node.slice[0].slice.value), node.value
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get" \
            and 1 <= len(node.args) <= 2 and node.args[0].keyword is None:
        key, inner = string_value(node.args[0].value), node.func.value
    if key is None:
        return None
    outer = _flag_subject(inner)
    return f"{outer}[{key}]" if outer is not None else None


def tests_exclude(one: Sequence[Tuple[str, object]], other: Sequence[Tuple[str, object]]) -> bool:
    """Do two places' tests (`equality_test`s of the `if` bodies around them, and
    `flag_test`s of every `if` arm, an `else` flipping the flag) exclude each other: one name
    compared with disjoint constants (`if kind == "ddp":` / `if kind == "sdp":`), or a flag
    true around one and false around the other (`if self.parallel:` / `if not self.parallel:`)?"""
    here = {}
    for name, value in one:
        here.setdefault(name, []).append(value)
    for name, value in other:
        for mine in here.get(name, ()):
            if isinstance(value, bool) or isinstance(mine, bool):
                if isinstance(value, bool) and isinstance(mine, bool) and value != mine:
                    return True
            elif not (value & mine):  # type: ignore[operator]
                return True
    return False


def _constant_text(value: cst.BaseExpression) -> Optional[str]:
    if isinstance(value, (cst.SimpleString, cst.Integer, cst.Float)):
        return value.value
    return dotted_name(value) if isinstance(value, cst.Attribute) else None


def exclusive_arms(one: Tuple[Tuple[int, bool], ...], other: Tuple[Tuple[int, bool], ...]) -> bool:
    """Are two places (`Analyzer.arms()`) in arms of one `if` that exclude each other
    (its body and its `else`)?"""
    arms = dict(one)
    return any(arms.get(node, in_body) != in_body for node, in_body in other)


def self_attribute_key(node: cst.CSTNode) -> Optional[str]:
    """"self.h" for `self.h`: how a method's own attribute is followed like a local name."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def defaults_to_none(function: cst.CSTNode, name: str) -> bool:
    """Does parameter `name` of `function` default to `None` (`mask: Optional[Tensor] = None`)?"""
    if not isinstance(function, cst.FunctionDef):
        return False
    params = function.params
    return any(param.name.value == name and isinstance(param.default, cst.Name) and param.default.value == "None"
               for param in (*params.posonly_params, *params.params, *params.kwonly_params))
