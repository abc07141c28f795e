"""`# noqa` as flake8 reads it, for the front ends that apply it themselves: the CLI,
`fix`, notebooks and the language server (the flake8 plugin leaves it to flake8).

It sits just above the engine so that every front end imports it from here, and none
of them has to import another front end (the CLI) for it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .engine import Finding

# flake8's noqa syntax: `# noqa`, `# noqa: TDV101`, `# NOQA:TDV101,TDV102`.
NOQA_RE = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)
CODE_RE = re.compile(r"[A-Z]+[0-9]+", re.I)


def is_suppressed(finding: Finding, lines: Sequence[str]) -> bool:
    if not 1 <= finding.line <= len(lines):
        return False
    match = NOQA_RE.search(lines[finding.line - 1])
    if match is None:
        return False
    codes = match.group("codes")
    if not codes:
        return True
    return any(finding.code.upper().startswith(code.upper()) for code in CODE_RE.findall(codes))
