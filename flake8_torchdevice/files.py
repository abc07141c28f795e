"""One file's findings as the standalone front ends report them: the text decoded as
flake8 decodes it, E999 for a file Python cannot compile, `# noqa` applied.

The CLI's `check` and the runtime harness both lint a path with `lint_path`, so the
harness measures exactly what users see; it lives here, below the front ends, so
that neither has to import the other.
"""

from __future__ import annotations

import io
import sys
import tokenize
from typing import List, Optional, Tuple

from .engine import Finding, Options, SourceError, lint_source, parse_python, without_cyclic_gc
from .noqa import is_suppressed


def read_source(path: str) -> str:
    """Decode as flake8 does: PEP 263 coding line, BOM, UTF-8 by default, and latin-1
    when that fails (flake8 lints such a file rather than reporting it); line endings
    read as flake8 reads them (\r\n and \r become \n). Raises OSError."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as file:
            data = file.read()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        text = data.decode("latin-1")
    text = text[1:] if text.startswith("\ufeff") else text
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def lint_text(source: str, path: str, options: Options) -> List[Finding]:
    """Findings for one file's text, E999 included, `# noqa` applied."""
    try:
        # Parse here rather than in the engine so a broken file is reported (E999,
        # as flake8 does) even when nothing in it could hold a TDV finding. The collector
        # is off meanwhile: it would walk everything alive at each of the tree's few
        # hundred thousand allocations (a quarter of the parse's time on timm).
        with without_cyclic_gc():
            tree = parse_python(source, path)
        findings = lint_source(source, path, options, tree=tree)
    except SourceError as error:
        if error.reason.startswith(("SyntaxError", "IndentationError", "TabError")):
            return [Finding(error.line or 1, error.col, "E999", error.reason)]
        raise
    # Only \n ends a line now; str.splitlines() would also split at \f, \x1c, \u2028...
    lines = source.split("\n")
    return [f for f in findings if not is_suppressed(f, lines)]


def lint_path(path: str, options: Options) -> Tuple[List[Finding], Optional[str]]:
    """Findings for one file, or a one-line reason why it was skipped."""
    try:
        return lint_text(read_source(path), path, options), None
    except SourceError as error:
        return [], error.reason
    except OSError as error:
        return [], f"cannot read: {error.strerror or error}"
