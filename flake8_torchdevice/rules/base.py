"""The shape every rule shares: a small class with a code, a one-line message, its
docs (the class docstring) and examples that double as tests."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar, FrozenSet, List, Optional, Tuple

import libcst as cst

if TYPE_CHECKING:
    from ..analysis import Analyzer
    from ..engine import Options

# (node, code, message): positions are computed only for nodes that get reported.
RawFinding = Tuple[cst.CSTNode, str, str]


@dataclass(frozen=True)
class CallTrigger:
    """A rule whose findings are always calls: inside a function, only such a call (found
    in the `ast` tree flake8 already built) makes the function worth parsing, not the
    trigger word, which fills docstrings and comments ("a tensor of ones")."""

    callees: FrozenSet[str]  # last identifiers of the callee: `zeros` for torch.zeros
    # keywords that rule the call out; None stands for `**kwargs`
    exempt_keywords: FrozenSet[Optional[str]] = frozenset()


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
    # Set for rules whose findings are always calls to these callees (see CallTrigger).
    call_trigger: ClassVar[Optional[CallTrigger]] = None
    # A function `ast node of a function -> bool`: in functions, the rule's `triggers`
    # only select candidates and this test on the tree decides (cheaper than parsing).
    matches_function: ClassVar[Optional[Callable[[ast.AST], bool]]] = None
    # For rules that judge a whole class (what one method assigns, another reads): a
    # function `(ast.ClassDef, import aliases of trigger names) -> bool` saying the class
    # may hold a finding. The fast path keeps such a class whole (with its base classes
    # in the file); the rule's `triggers` only decide whether the file is parsed at all.
    keeps_class: ClassVar[Optional[Callable[[ast.ClassDef, FrozenSet[str]], bool]]] = None
    # Examples, also run as tests: code without findings, and code whose lines marked
    # `# expect: CODE` carry exactly those findings.
    VALID: ClassVar[List[str]] = []
    INVALID: ClassVar[List[str]] = []

    def __init__(self, analyzer: "Analyzer", sink: List[RawFinding], options: "Options") -> None:
        self.ctx = analyzer
        self.options = options
        self._sink = sink

    def report(self, node: cst.CSTNode, message: Optional[str] = None) -> None:
        self._sink.append((node, self.code, message or self.message))
