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
from typing import TYPE_CHECKING, Callable, ClassVar, FrozenSet, List, Optional, Protocol, Tuple, Union

import libcst as cst

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
    keeps_class: ClassVar[Optional[Callable[[ast.ClassDef, FrozenSet[str], Callable[[ast.AST], str]], bool]]] = None
    # Examples, also run as tests: code without findings, and code whose lines marked
    # `# expect: CODE` carry exactly those findings.
    VALID: ClassVar[List[str]] = []
    INVALID: ClassVar[List[str]] = []

    def __init__(self, analyzer: "Analyzer", sink: List[RawFinding], options: RuleOptions) -> None:
        self.ctx = analyzer
        self.options = options
        self._sink = sink

    def report(self, node: cst.CSTNode, message: Optional[str] = None, fix: Optional[Fix] = None) -> None:
        self._sink.append((node, self.code, message or self.message, fix))

    def device_for_fix(self, node: cst.CSTNode) -> Optional[Tuple[str, bool]]:
        """The text of the device-aware value in scope at `node`, and False; or, when
        there is none, the name of the selection `fix --add-device` adds, and True
        (pass it to `Fix.needs_added_device`); None when there is none and the file
        has no leading `import torch` to add it after."""
        found = self.ctx.device_in_scope(node)
        if found is not None:
            return found, False
        return (ADDED_DEVICE, True) if self.ctx.can_add_device() else None
