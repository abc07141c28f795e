"""The shape every rule shares: a small class with a code, a one-line message, its
docs (the class docstring) and examples that double as tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, FrozenSet, List, Optional, Tuple

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
