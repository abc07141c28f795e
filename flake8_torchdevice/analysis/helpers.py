"""Helpers that only guarded code calls: `def _check(self, n): torch.zeros(n, device="cuda")`
called only from tests skipped without a GPU runs only where CUDA exists, as if it were
under the guard itself.

The walk reaches a helper before or after its callers, so the guard cannot be known
while its body is walked. Instead the walker notes every reference to a candidate
helper (called or not, under a guard or not, from which functions) and the findings
that a guard would have silenced, with the functions they are in; when the module has
been walked, `silenced` names the helpers whose every reference is a call from guarded
code (or from such a helper), and the walker drops those findings.

Candidates are the module's functions and the methods of its classes that nothing
outside the file should call: private names (`_check`), and every function of a test
file (`test_*.py`, `*_test.py`), which no other module imports. A name is matched
wherever it appears (`self._check(...)`, `obj._check`, `_check`), so another object's
method of the same name counts against the helper: when unsure, the finding stays.
"""

from __future__ import annotations

import os
import re
from typing import Dict, FrozenSet, Iterable, List, Set, Tuple

import libcst as cst

# A module's functions or a class's methods: the definitions it holds directly.
_TEST_FILE_RE = re.compile(r"^(test_.*|.*_test)\.py$")


def is_test_file(filename: str) -> bool:
    return bool(_TEST_FILE_RE.match(os.path.basename(filename)))


# A test's code (by its file's name or folder) and a word that chooses or names a device.
_TEST_PATH_RE = re.compile(r"(?:^|[/\\])(?:tests?|testing)[/\\]|(?:^|[/\\])(?:test_[^/\\]*|[^/\\]*_test|conftest)\.py$")
_DEVICE_WORD_RE = re.compile(r"cuda|device|\bmps\b|xpu|accelerat|gpu"
                             # `.to(x)`, not a cast: `.to(torch.int32)`, `.to(dtype=...)`, `.to(x.dtype)`,
                             # `.to(bool)` (anomalib's tests)
                             r"|\.to\((?!\s*(?:torch\.\w+|dtype\s*=[^,)]*|[\w.]*dtype|bool|int|float|complex)\s*\))",
                             re.I)


def is_host_only_test(filename: str, source: str) -> bool:
    """A test file that never names a device: everything it makes and runs stays on the CPU,
    so tensors made without `device=` there never meet another device."""
    return bool(_TEST_PATH_RE.search(filename)) and not _DEVICE_WORD_RE.search(source)


def is_candidate(name: str, test_file: bool) -> bool:
    """Could `name` be a helper that only this file calls?"""
    private = name.startswith("_") and not name.endswith("__")
    return private or (test_file and not name.startswith("__"))


def candidate_names(body: Iterable[cst.CSTNode], test_file: bool) -> FrozenSet[str]:
    """The candidate helpers among a module body's functions and its classes' methods."""
    names: Set[str] = set()
    for statement in body:
        inner = statement.body.body if isinstance(statement, cst.ClassDef) \
            and isinstance(statement.body, cst.IndentedBlock) else ()
        for node in (statement, *inner):
            if isinstance(node, cst.FunctionDef) and is_candidate(node.name.value, test_file):
                names.add(node.name.value)
    return frozenset(names)


class GuardedHelpers:
    """References to a module's candidate helpers, and the findings a guard would have silenced."""

    def __init__(self, candidates: FrozenSet[str]) -> None:
        self.candidates = candidates
        # name -> one (is a call, guarded there, names of the functions it is in) per reference
        self._references: Dict[str, List[Tuple[bool, bool, Tuple[str, ...]]]] = {}
        # (findings list, index in it, names of the functions the finding is in)
        self._findings: List[Tuple[list, int, Tuple[str, ...]]] = []

    def note_reference(self, name: str, called: bool, guarded: bool, within: Tuple[str, ...]) -> None:
        self._references.setdefault(name, []).append((called, guarded, within))

    def note_finding(self, sink: list, index: int, within: Tuple[str, ...]) -> None:
        if within and not self.candidates.isdisjoint(within):
            self._findings.append((sink, index, within))

    def silenced(self) -> Set[str]:
        """The helpers only ever called from guarded code or from such helpers."""
        found: Set[str] = set()
        grown = True
        while grown:
            grown = False
            for name, references in self._references.items():
                if name not in found and all(called and (guarded or not found.isdisjoint(within))
                                             for called, guarded, within in references):
                    found.add(name)
                    grown = True
        return found

    def drop_silenced_findings(self) -> None:
        """Remove the noted findings that are inside a helper only guarded code calls."""
        if not self._findings:
            return
        silenced = self.silenced()
        dropped = [(sink, index) for sink, index, within in self._findings if not silenced.isdisjoint(within)]
        for sink, index in sorted(dropped, key=lambda item: -item[1]):
            del sink[index]
        self._findings.clear()
