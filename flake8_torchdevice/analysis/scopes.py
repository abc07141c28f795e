"""Scopes: the names each function, lambda, class or module binds, what they resolve
to (imports), and the per-scope facts that depend on statement order (moves, flags)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Set

import libcst as cst

from .syntax import dotted_name, last_identifier

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})


def _local_names(node: cst.CSTNode) -> Iterator[str]:
    """The names an `import` or `from ... import` statement binds."""
    if isinstance(node, cst.Import):
        for alias in node.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                yield alias.asname.name.value
            else:
                yield (dotted_name(alias.name) or "").split(".", 1)[0]
    elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
        for alias in node.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                yield alias.asname.name.value
            else:
                yield dotted_name(alias.name) or ""


def _statements_of(part: Optional[cst.CSTNode]) -> Sequence[cst.CSTNode]:
    """The statements of a compound statement's part: a suite, an `else:`/`finally:`/
    `except:` clause (their suite's), or an `elif` (itself)."""
    if part is None:
        return ()
    if isinstance(part, cst.If):
        return (part,)
    if isinstance(part, cst.BaseSuite):
        return part.body
    suite = getattr(part, "body", None)
    return suite.body if isinstance(suite, cst.BaseSuite) else ()


def _imported_in(statements: Sequence[cst.CSTNode]) -> Iterator[str]:
    """The names imported by `statements` and the blocks nested in them (not in
    functions or classes defined there)."""
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                yield from _local_names(small)
        elif isinstance(statement, (cst.If, cst.Try, cst.TryStar, cst.With, cst.For, cst.While)):
            for part in (statement.body, getattr(statement, "orelse", None), getattr(statement, "finalbody", None),
                         *getattr(statement, "handlers", ())):
                yield from _imported_in(_statements_of(part))


def catches_import_error(handler: cst.ExceptHandler) -> bool:
    """`except ImportError:`, `except (ModuleNotFoundError, AttributeError):`."""
    caught = handler.type
    if isinstance(caught, cst.Tuple):
        return any(last_identifier(element.value) in _IMPORT_ERRORS for element in caught.elements)
    return caught is not None and last_identifier(caught) in _IMPORT_ERRORS


def import_fallback_names(try_node: cst.Try, handler: cst.ExceptHandler) -> Set[str]:
    """`try: from apex import amp / except ImportError: from torch.cuda import amp`:
    the names the `try` arm imports, which keep that binding (what runs first) while
    the fallback `handler` rebinds them. Empty for a handler that is no import fallback."""
    if not catches_import_error(handler):
        return set()
    return {name for name in _imported_in(try_node.body.body) if name}


@dataclass
class Scope:
    """A function, lambda, class or module body, with its own names."""

    node: cst.CSTNode
    kind: str  # "module" | "class" | "function" | "lambda"
    # name -> qualified name it was imported as, or None when rebound to a non-import
    bindings: Dict[str, Optional[str]] = field(default_factory=dict)
    # name -> what `from .x import name` imported ("..x.name"): relative imports bind None in
    # `bindings` (they never resolve to torch) but the project index can follow them
    relative_imports: Dict[str, str] = field(default_factory=dict)
    star_imports: bool = False  # `from utils import *`: names bound nowhere may come from there
    # *Placement*, per path: the dotted names on their device at the statement being
    # visited. A name is in it after a move (`m.to(device)`, `m = m.cuda()`, `m = Net().to(d)`),
    # after being built by something that moves it (a project function that returns
    # `net.cuda()`, a class whose `__init__` calls `self.to(device)`), and, after an
    # `if`/`else`, only when every arm that falls through placed it. An arm that only
    # runs without CUDA (the `else` of `if torch.cuda.is_available():`) does not count
    # against it: there the CPU is the device. See `Placement` in walker.py.
    moved: Set[str] = field(default_factory=set)
    # the dotted names moved on some path so far (statement order, branches ignored)
    ever_moved: Set[str] = field(default_factory=set)
    params: Set[str] = field(default_factory=set)
    # name -> polarity of the CUDA test it was last bound from (`have_gpu = torch.cuda.is_available()`)
    flags: Dict[str, int] = field(default_factory=dict)
    # name -> the values it takes when CUDA is certainly absent (`have_gpu = torch.cuda.is_available()`: {False})
    absence: Dict[str, frozenset] = field(default_factory=dict)
    # Per-scope state that rules keep (what was saved, wraps waiting for a move, ...):
    # it lives exactly as long as the scope.
    notes: Dict[str, Any] = field(default_factory=dict)
    # names the `try:` arm imported, while its `except ImportError:` fallback is walked:
    # they keep the `try` arm's binding (`import_fallback_names`)
    kept: Set[str] = field(default_factory=set)

    def note(self, key: str, make: Callable[[], Any]) -> Any:
        """This scope's entry `key`, created with `make()` on first use."""
        if key not in self.notes:
            self.notes[key] = make()
        return self.notes[key]

    def bind_import(self, node: cst.CSTNode) -> None:
        """`import torch as th` binds th -> torch; `from .utils import load` shadows torch's."""
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name) or ""
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    if alias.asname.name.value not in self.kept:
                        self.bindings[alias.asname.name.value] = full
                else:
                    top = full.split(".", 1)[0]
                    if top not in self.kept:
                        self.bindings[top] = top
        elif isinstance(node, cst.ImportFrom):
            if isinstance(node.names, cst.ImportStar):
                # `from models.common import *` in a file that uses `torch` without importing
                # it: the star re-exports torch (yolov5's scripts)
                self.bindings.setdefault("torch", "torch")
                self.star_imports = True
                return
            module = "" if node.relative or node.module is None else dotted_name(node.module) or ""
            dots = "." * len(node.relative)
            within = dotted_name(node.module) if node.relative and node.module is not None else None
            for alias in node.names:
                imported = dotted_name(alias.name) or ""
                local = imported
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local = alias.asname.name.value
                if local in self.kept:
                    continue
                self.bindings[local] = f"{module}.{imported}" if module else None
                if dots:
                    self.relative_imports[local] = f"{dots}{within}.{imported}" if within else dots + imported

    def bind_targets(self, target: cst.CSTNode) -> None:
        """Names bound by an assignment, loop, `with ... as`, ...: no longer imports."""
        if isinstance(target, cst.Name):
            if target.value in self.kept:
                return  # `except ImportError: autocast = None`: the `try` arm's import runs first
            self.bindings[target.value] = None
            self.flags.pop(target.value, None)
            self.absence.pop(target.value, None)
            self.relative_imports.pop(target.value, None)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind_targets(element.value)
        elif isinstance(target, cst.StarredElement):
            self.bind_targets(target.value)

    def bind_params(self, params: cst.Parameters) -> None:
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.bindings[param.name.value] = None
            self.params.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self.bindings[star.name.value] = None
                self.params.add(star.name.value)
