"""Jupyter notebooks (.ipynb): the code cells linted as one program, findings mapped
back to cells, and fixed cells written back into the notebook.

- The code cells, in order, are one program, as the kernel runs them: a device chosen
  in cell 1 is known in cell 5.
- IPython syntax is not Python: line magics (`%time f()`), shell escapes (`!pip ...`,
  `files = !ls`), help (`?obj`, `obj?`) become `pass` at their indentation, so every
  other line keeps its line and column. A cell magic whose body is Python run in the
  kernel (`%%time`, `%%timeit`, `%%capture`, ...) keeps its body; any other
  (`%%bash`, `%%writefile`) is not Python and the cell is left out.
- A cell Python cannot parse is reported (E999 at its position in the cell) and left
  out; the other cells are still linted.
- Positions are as ruff gives them: `cell N` counts every cell of the notebook from 1
  (markdown cells included), the line is counted in that cell.
- Writing back replaces only the `source` of changed cells; outputs, metadata, key
  order and the JSON layout (indent, separators, escaping, final newline) stay.
  Fixing a notebook (`fix.fix_notebook_text`) uses these pieces; this module does not
  import `fix`.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .engine import DEFAULT_OPTIONS, Finding, Options, SourceError, lint_source, parse_python
from .noqa import is_suppressed  # noqa comments work as in .py files

# Cell magics whose body is Python run in the kernel's namespace.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
PLACEHOLDER = "pass"

_CELL_MAGIC_RE = re.compile(r"%%(\w+)")
# `obj?`, `obj.attr??`, `*int*?`: never valid Python.
_HELP_RE = re.compile(r"[\w.*\[\]]+\?\??\s*\Z")
# `files = !ls`, `x = %pwd`, `a, b = %sx cmd`: an assignment whose value is IPython syntax.
_ASSIGNED_ESCAPE_RE = re.compile(r"[A-Za-z_][\w.,\s\[\]()*]*=\s*[%!](?!=)")


@dataclass
class CodeCell:
    index: int  # 0-based position among all the notebook's cells
    text: str  # the cell's source as one string
    python: str  # the text with IPython syntax replaced; "" when the cell is not Python
    escaped: List[int] = field(default_factory=list)  # 0-based lines replaced by `pass`

    @property
    def number(self) -> int:
        """As ruff prints it: 1-based among all cells."""
        return self.index + 1


@dataclass
class Notebook:
    data: Dict[str, Any]  # the parsed JSON, key order as in the file
    text: str  # the file as read
    cells: List[CodeCell]

    @property
    def is_python(self) -> bool:
        """False for notebooks of another kernel language (R, Julia...)."""
        metadata = self.data.get("metadata")
        if not isinstance(metadata, dict):
            return True
        for key, name in (("language_info", "name"), ("kernelspec", "language")):
            entry = metadata.get(key)
            if isinstance(entry, dict) and isinstance(entry.get(name), str):
                return entry[name].lower() == "python"
        return True


@dataclass
class Program:
    """The Python cells joined into one source; which program line belongs to which cell."""

    source: str
    cells: List[CodeCell]  # the cells in the program, in order
    starts: List[int]  # 1-based program line of each cell's first line

    def locate(self, line: int) -> Tuple[CodeCell, int]:
        """The cell holding a 1-based program line, and the 1-based line in that cell."""
        position = max(bisect.bisect_right(self.starts, line) - 1, 0)
        return self.cells[position], line - self.starts[position] + 1


# ---------------------------------------------------------------- reading


def parse_notebook(text: str) -> Notebook:
    """Raises SourceError when the text is not an nbformat 4 notebook."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise SourceError(f"not a Jupyter notebook: invalid JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise SourceError("not a Jupyter notebook in nbformat 4: no list of cells")
    cells = []
    for index, cell in enumerate(data["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise SourceError(f"not a Jupyter notebook: cell {index + 1} has a source that is not text")
        cells.append(python_cell(index, source))
    return Notebook(data, text, cells)


def _read_notebook_text(path: str) -> str:
    """A notebook file's JSON text (UTF-8, BOM dropped). Raises OSError or SourceError."""
    with open(path, "rb") as file:
        data = file.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceError(f"not a Jupyter notebook: not UTF-8: {error}") from None


def read_notebook(path: str) -> Notebook:
    """Raises OSError, or SourceError for a file that is not a notebook."""
    return parse_notebook(_read_notebook_text(path))


def python_cell(index: int, text: str) -> CodeCell:
    """The cell with its IPython syntax replaced by `pass` lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = next((n for n, line in enumerate(lines) if line.strip()), None)
    escaped: List[int] = []
    if first is not None and lines[first].startswith("%%"):
        magic = _CELL_MAGIC_RE.match(lines[first])
        if magic is None or magic.group(1) not in PYTHON_CELL_MAGICS:
            return CodeCell(index, text, "")
        lines[first] = PLACEHOLDER
        escaped.append(first)
        start = first + 1
    else:
        start = 0
    in_string: Optional[str] = None
    depth = 0
    continued = False
    escape_indent: Optional[str] = None  # a backslash continues an IPython line at this indent
    for number in range(start, len(lines)):
        line = lines[number]
        if escape_indent is not None or (in_string is None and depth == 0 and not continued
                                         and is_ipython_line(line)):
            indent = line[: len(line) - len(line.lstrip())] if escape_indent is None else escape_indent
            escape_indent = indent if line.endswith("\\") else None
            lines[number] = indent + PLACEHOLDER
            escaped.append(number)
            continue
        in_string, depth, continued = _scan(line, in_string, depth)
    return CodeCell(index, text, "\n".join(lines), escaped)


def is_ipython_line(line: str) -> bool:
    """Is this line, at the start of a statement, IPython syntax rather than Python?"""
    stripped = line.strip()
    if not stripped:
        return False
    return (stripped[0] in "%!?" or _HELP_RE.match(stripped) is not None
            or _ASSIGNED_ESCAPE_RE.match(stripped) is not None)


def _scan(line: str, in_string: Optional[str], depth: int) -> Tuple[Optional[str], int, bool]:
    """The state after a line: the open string's quote (a triple-quoted one, or a
    one-quote string continued with a backslash), the open bracket depth, and whether
    a backslash continues the line. Enough to tell where statements start."""
    index = 0
    size = len(line)
    while index < size:
        char = line[index]
        if in_string is not None:
            if char == "\\":
                index += 2
                continue
            if line.startswith(in_string, index):
                index += len(in_string)
                in_string = None
                continue
            index += 1
            continue
        if char == "#":
            return None, depth, False
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char in "'\"":
            in_string = line[index:index + 3] if line[index:index + 3] in ('"""', "'''") else char
            index += len(in_string)
            continue
        index += 1
    ends_with_backslash = line.endswith("\\")
    if in_string in ("'", '"') and not ends_with_backslash:
        in_string = None  # an unclosed one-quote string: a syntax error the parse reports
    return in_string, depth, ends_with_backslash and in_string is None


def program(cells: Sequence[CodeCell]) -> Program:
    """The given cells' Python as one source, each cell ending with a newline."""
    parts: List[str] = []
    starts: List[int] = []
    kept: List[CodeCell] = []
    line = 1
    for cell in cells:
        if not cell.python.strip():
            continue
        text = cell.python if cell.python.endswith("\n") else cell.python + "\n"
        kept.append(cell)
        starts.append(line)
        parts.append(text)
        line += text.count("\n")
    return Program("".join(parts), kept, starts)


# ---------------------------------------------------------------- linting


def syntax_error(cell: CodeCell) -> Optional[Finding]:
    """E999 where Python cannot parse the cell, positioned as the CLI and flake8 give it."""
    try:
        parse_python(cell.python)
    except SourceError as error:
        return Finding(error.line or 1, error.col, "E999", error.reason)
    return None


def lint_notebook_text(text: str, path: str = "<notebook>",
                       options: Options = DEFAULT_OPTIONS) -> List[Tuple[int, Finding]]:
    """(cell number, finding with its line in that cell) for every finding, E999 for
    cells Python cannot parse, `# noqa` applied; in cell order.

    Raises SourceError when the text is not a notebook or cannot be analysed."""
    notebook = parse_notebook(text)
    if not notebook.is_python:
        return []
    results: List[Tuple[int, Finding]] = []
    valid = []
    for cell in notebook.cells:
        error = syntax_error(cell) if cell.python.strip() else None
        if error is None:
            valid.append(cell)
        else:
            results.append((cell.number, error))
    joined = program(valid)
    lines = joined.source.split("\n")
    for finding in lint_source(joined.source, path, options):
        if is_suppressed(finding, lines):
            continue
        cell, line = joined.locate(finding.line)
        results.append((cell.number, moved_to_line(finding, line)))
    return sorted(results)


def lint_notebook(path: str, options: Options = DEFAULT_OPTIONS) -> List[Tuple[int, Finding]]:
    """As lint_notebook_text, for a file. Raises OSError or SourceError."""
    return lint_notebook_text(_read_notebook_text(path), path, options)


def lint_notebook_path(path: str, options: Options = DEFAULT_OPTIONS
                       ) -> Tuple[List[Tuple[int, Finding]], Optional[str]]:
    """For `check`: the findings with their cells, or a one-line reason the file was skipped."""
    try:
        return lint_notebook(path, options), None
    except SourceError as error:
        return [], error.reason
    except OSError as error:
        return [], f"cannot read: {error.strerror or error}"


def moved_to_line(finding: Finding, line: int) -> Finding:
    """The finding moved to another line (its end moved with it), every other field kept."""
    end_line = getattr(finding, "end_line", None)
    if end_line is None:
        return replace(finding, line=line)
    return replace(finding, line=line, end_line=end_line - finding.line + line)


# ---------------------------------------------------------------- writing back


def cells_from_program(old: Program, new_source: str) -> Dict[int, str]:
    """The new text of each cell that `new_source` (an edit of `old.source`, such as a
    fix) changes: 0-based cell index -> text. Unchanged lines keep their original
    text (IPython lines come back); lines added between two cells go to the end of
    the one before, as an import-time statement added after the imports would."""
    old_lines = old.source.split("\n")[:-1]  # the program ends with a newline
    new_lines = new_source.split("\n")
    if new_lines and new_lines[-1] == "":
        new_lines.pop()
    owner = [old.locate(number + 1) for number in range(len(old_lines))]  # (cell, 1-based line)
    collected: Dict[int, List[str]] = {cell.index: [] for cell in old.cells}
    changed = set()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(i2 - i1):
                cell, line = owner[i1 + offset]
                collected[cell.index].append(_original_line(cell, line))
            continue
        for offset in range(j2 - j1):
            if i2 > i1:
                cell = owner[min(i1 + offset, i2 - 1)][0]
            else:  # an insertion: to the cell of the line before it
                cell = owner[i1 - 1][0] if i1 > 0 else old.cells[0]
            collected[cell.index].append(new_lines[j1 + offset])
            changed.add(cell.index)
        for offset in range(i2 - i1):
            changed.add(owner[i1 + offset][0].index)
    result = {}
    for cell in old.cells:
        if cell.index not in changed:
            continue
        text = "\n".join(collected[cell.index])
        if cell.text.endswith("\n"):
            text += "\n"
        if text != cell.text:
            result[cell.index] = text
    return result


def _original_line(cell: CodeCell, line: int) -> str:
    lines = cell.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return lines[line - 1]


def write_cells(notebook: Notebook, new_texts: Dict[int, str]) -> str:
    """The notebook's file text with these cells' `source` replaced, in the form each
    had (a list of lines or one string), everything else and the JSON layout kept."""
    if not new_texts:
        return notebook.text
    layout = json_layout(notebook.text, notebook.data)
    data = json.loads(notebook.text)  # a copy, key order kept
    for index, text in new_texts.items():
        cell = data["cells"][index]
        if isinstance(cell.get("source"), list):
            cell["source"] = text.splitlines(keepends=True)
        else:
            cell["source"] = text
    return dump(data, layout)


@dataclass(frozen=True)
class JsonLayout:
    indent: Optional[Any]
    separators: Tuple[str, str]
    ensure_ascii: bool
    final_newline: bool


def dump(data: Any, layout: JsonLayout) -> str:
    text = json.dumps(data, indent=layout.indent, separators=layout.separators, ensure_ascii=layout.ensure_ascii)
    return text + "\n" if layout.final_newline else text


def json_layout(text: str, data: Any) -> JsonLayout:
    """The layout that writes `data` back as `text`: the first candidate that
    reproduces the file exactly, else the one matching its indent (Jupyter's own is
    one space, `", "`-free separators, non-ASCII kept, a final newline)."""
    final_newline = text.endswith("\n")
    match = re.search(r"\n([ \t]+)\S", text)
    indent: Optional[Any] = None
    if match:
        whitespace = match.group(1)
        indent = len(whitespace) if set(whitespace) == {" "} else whitespace
    ascii_first = not re.search(r"[^\x00-\x7f]", text) and bool(re.search(r"\\u[0-9a-fA-F]{4}", text))
    candidates = []
    for ensure_ascii in (ascii_first, not ascii_first):
        separators = [(",", ": "), (", ", ": "), (",", ":")] if indent is None else [(",", ": "), (", ", ": ")]
        candidates += [JsonLayout(indent, pair, ensure_ascii, final_newline) for pair in separators]
    for layout in candidates:
        if dump(data, layout) == text:
            return layout
    return candidates[0]
