"""`flake8-torchdevice fix`: apply the fixes rules offer with their findings.

How it works: the fast lint runs first, and only a file with a fixable finding is
parsed in full. The rules' single traversal of that parse yields the findings with
their fixes (node replacements, `rules.base.Fix`); the fixes that do not overlap are
applied in one transformation (a fix overlapping one already taken waits for the next
round), the output must parse, and the rounds repeat until nothing fixable is left,
so a second `fix` changes nothing. What lies outside the replaced nodes is kept byte
for byte: comments, layout, quotes, the encoding, the BOM and the line endings.

How a rule adds a fix
---------------------
A rule passes `fix=` to `self.report`. A `Fix` is built from the nodes the rule
is visiting (they are the nodes of the tree being fixed) with helpers that each
return a new `Fix`:

    call = node                                      # torch.load(path)
    found = self.device_for_fix(node)                # None: no device, none can be added
    if found is not None:
        device, added = found                        # "device", or the added selection
        fix = Fix().add_keyword(call, "map_location", device).needs_added_device(added)
    self.report(node, fix=fix)

- `Fix().replace(node, new)`: `new` is a libcst node or the text of an expression
  (`Fix().replace(call.func, "x.to")`); for statements also `cst.FlattenSentinel`
  or `cst.RemoveFromParent()`.
- `Fix().add_keyword(call, name, value)`: appends `name=value` in the call's layout.
- `Fix().move_statement_before(statement, anchor)`: moves a statement line up.
- `self.device_for_fix(node, avoid)`: the device a fix writes, chosen in one place
  (`rules.base.device_for_fix`): a tensor on the model's device (`x.device` of
  forward's input, `p.device` of an optimizer's parameter; not the names in `avoid`,
  what the fix moves), the module's parameters' device, a device variable in scope
  (`ctx.device_in_scope(node)`), else the selection `fix --add-device` adds (None
  when the file does not import torch in its leading imports: nowhere to add it); a fix
  using that must say `.needs_added_device(added)`, and without the flag it is not
  offered (the finding is then not fixable).
Offer a fix only when the rewrite keeps the program's meaning on a CUDA machine and
makes it run without one; when unsure, offer none. Say what it does under `## Fix`
in the rule's docstring, and test it in tests/test_fix.py (exact input -> output).
"""

from __future__ import annotations

import ast
import difflib
import io
import os
import re
import stat
import sys
import tempfile
import tokenize
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .engine import (DEFAULT_OPTIONS, Finding, Options, SourceError, analyse_module, is_applicable, lint_source,
                     parse_cst, parse_python)
from .rules import ALL_RULES
from .analysis.devices import selection_site
from .analysis.project import index_for
from .noqa import is_suppressed
from .rules.base import ADDED_DEVICE

if TYPE_CHECKING:
    from .notebook import Program

MAX_ROUNDS = 10
EXIT_CLEAN, EXIT_CHANGED, EXIT_ERROR = 0, 1, 2


class FixError(SourceError):
    """The fixes would produce code that does not parse: nothing is applied."""


@dataclass
class FixResult:
    text: str
    fixed_findings: List[Finding] = field(default_factory=list)
    remaining_findings: List[Finding] = field(default_factory=list)
    # notebooks: the cell of each remaining finding (whose line is counted in that cell)
    cells: Optional[List[int]] = None

    @property
    def changed(self) -> bool:
        return bool(self.fixed_findings)


def fix_source(source: str, filename: str = "<unknown>", options: Options = DEFAULT_OPTIONS,
               add_device: bool = False, only: Optional[Finding] = None) -> FixResult:
    """The source with every applicable fix applied, repeated to a fixed point; with
    `only`, that finding's fix alone (an editor's quick fix).

    Raises SourceError when the source cannot be analysed, FixError when the fixes
    would not parse (then nothing is applied)."""
    if add_device:
        options = replace(options, add_device=True)
    bom = "\ufeff" if source.startswith("\ufeff") else ""
    original = source[len(bom):]
    text = original.replace("\r\n", "\n").replace("\r", "\n") if "\r" in original else original
    findings = _lint(text, filename, options)
    fixed: List[Finding] = []
    for _ in range(1 if only is not None else MAX_ROUNDS):
        if not any(f.fixable for f in findings):
            break
        text, applied = _fix_round(text, filename, options, only)
        if not applied:
            break
        fixed += applied
        findings = _lint(text, filename, options)
    if not fixed:
        return FixResult(source, [], findings)
    return FixResult(bom + restore_line_endings(original, text), fixed, findings)


def _lint(text: str, filename: str, options: Options) -> List[Finding]:
    lines = text.split("\n")
    return [f for f in lint_source(text, filename, options) if not is_suppressed(f, lines)]


Span = Tuple[Tuple[int, int], Tuple[int, int]]


def _fix_round(text: str, filename: str, options: Options,
               only: Optional[Finding] = None) -> Tuple[str, List[Finding]]:
    """One pass: the fixes that do not overlap, applied together."""
    module = parse_cst(text)
    rules = [rule for rule in ALL_RULES if rule.code in options.enabled]
    raw = [entry for entry in analyse_module(module, rules, options, index_for(filename, source=text), filename)
           if is_applicable(entry[3], options)]
    if not raw:
        return text, []
    site = selection_site(module)
    if site is None or ADDED_DEVICE in text:
        raw = [entry for entry in raw if not entry[3].adds_device]
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)

    def span(node: cst.CSTNode) -> Span:
        where = positions[node]
        return (where.start.line, where.start.column), (where.end.line, where.end.column)

    lines = text.split("\n")
    if only is None and any(not entry[3].adds_device and not is_suppressed(_finding(entry, positions), lines)
                            for entry in raw):
        # Fixes that use a device in scope first: they may create one (`torch.device("cuda")`
        # made a selection), which the next round then uses instead of adding another.
        raw = [entry for entry in raw if not entry[3].adds_device]
    taken: List[Span] = []
    mapping: Dict[int, object] = {}
    applied: Dict[Finding, None] = {}
    adds_device = False
    for entry in sorted(raw, key=lambda entry: span(entry[0])):
        fix = entry[3]
        finding = _finding(entry, positions)
        if finding in applied or (only is not None and finding != only) or is_suppressed(finding, lines) \
                or not fix.replacements:
            continue
        spans = [span(old) for old, _ in fix.replacements]
        if any(a[0] < b[1] and b[0] < a[1] for a in spans for b in taken):
            continue  # overlaps a fix taken this round: the next round sees it again
        taken += spans
        mapping.update((id(old), new) for old, new in fix.replacements)
        applied[finding] = None
        adds_device = adds_device or fix.adds_device
    if not applied:
        return text, []
    fixed_module = module.visit(_Replacer(mapping))
    code = fixed_module.code
    if adds_device:
        name = _free_name(text, filename)
        code = _add_selection(fixed_module, name).code.replace(ADDED_DEVICE, name)
    try:
        ast.parse(code, filename)
    except (SyntaxError, ValueError) as error:
        codes = ", ".join(sorted({f.code for f in applied}))
        raise FixError(f"fixing {codes} would produce code that does not parse ({error}); nothing was changed")
    return code, list(applied)


def _finding(entry: tuple, positions) -> Finding:
    start = positions[entry[0]].start
    return Finding(start.line, start.column, entry[1], entry[2], fixable=True)


class _Replacer(cst.CSTTransformer):
    """Replaces nodes by identity; everything else is left as it was."""

    def __init__(self, mapping: Dict[int, object]) -> None:
        super().__init__()
        self.mapping = mapping

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        new = self.mapping.get(id(original_node))
        return updated_node if new is None else new


# ---------------------------------------------------------------- the added device selection


def _add_selection(module, name: str):
    count, alias = selection_site(module)  # type: ignore[misc]
    statement = cst.parse_statement(
        f'{name} = {alias}.device("cuda" if {alias}.cuda.is_available() else "cpu")\n',
        config=module.config_for_parsing)
    statement = statement.with_changes(leading_lines=[cst.EmptyLine()])
    return module.with_changes(body=[*module.body[:count], statement, *module.body[count:]])


def _free_name(text: str, filename: str) -> str:
    """`device`, or `_device`, `_device2`, ... when the module uses that name anywhere."""
    taken: Set[str] = set()
    for node in ast.walk(parse_python(text, filename)):
        if isinstance(node, ast.Name):
            taken.add(node.id)
        elif isinstance(node, ast.arg):
            taken.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            taken.add(node.name)
        elif isinstance(node, ast.alias):
            taken.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            taken.update(node.names)
    for candidate in ("device", "_device", *(f"_device{n}" for n in range(2, 100))):
        if candidate not in taken:
            return candidate
    return "_torchdevice_device"


# ---------------------------------------------------------------- keeping the file's bytes

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def restore_line_endings(original: str, fixed: str) -> str:
    """`fixed` (with \\n line endings) with the line endings of `original`: unchanged
    lines keep theirs, new lines get the file's most common one."""
    if "\r" not in original:
        return fixed
    old_lines = _LINE_RE.findall(original)
    old_text = [line.rstrip("\r\n") for line in old_lines]
    old_ends = [line[len(content):] for line, content in zip(old_lines, old_text)]
    usual = Counter(end for end in old_ends if end).most_common(1)[0][0]
    new_text = fixed.split("\n")
    ends = ["\n"] * (len(new_text) - 1) + [""]
    matcher = difflib.SequenceMatcher(None, old_text, new_text, autojunk=False)
    for tag, i1, _, j1, j2 in matcher.get_opcodes():
        for offset in range(j2 - j1):
            if j1 + offset == len(new_text) - 1:
                continue  # the text after the last line ending
            ends[j1 + offset] = old_ends[i1 + offset] if tag == "equal" and old_ends[i1 + offset] else usual
    return "".join(text + end for text, end in zip(new_text, ends))


# ---------------------------------------------------------------- files


@dataclass
class FileFix:
    path: str
    result: Optional[FixResult] = None
    before: str = ""
    skipped: Optional[str] = None  # why the file was left untouched
    error: Optional[str] = None  # a bug of ours


def fix_file(path: str, options: Options, write: bool) -> FileFix:
    """Fix one file; with `write`, replace it atomically when something changed."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        return FileFix(path, skipped=f"cannot read: {error.strerror or error}")
    if path.endswith(".ipynb"):
        return _fix_notebook(path, data, options, write)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
        if text.encode(encoding) != data:
            return FileFix(path, skipped=f"its bytes do not survive decoding as {encoding}")
    except (SyntaxError, UnicodeError, LookupError) as error:
        return FileFix(path, skipped=f"cannot decode: {error}")
    try:
        try:
            parse_python(text.replace("\r\n", "\n").replace("\r", "\n"), path)
            result = fix_source(text, path, options)
        except SourceError as error:
            return FileFix(path, skipped=error.reason)
        if write and result.changed:
            write_atomically(path, result.text.encode(encoding))
    except OSError as error:
        return FileFix(path, skipped=f"cannot write: {error.strerror or error}")
    except Exception as error:  # a bug of ours: report it, go on with the other files
        return FileFix(path, error=f"{type(error).__name__}: {' '.join(str(error).split())[:200]}")
    return FileFix(path, result, before=text)


def fix_notebook_text(text: str, path: str = "<notebook>", options: Options = DEFAULT_OPTIONS,
                      **fix_options: Any) -> Tuple[str, List[Tuple[int, Finding]], List[Tuple[int, Finding]]]:
    """(new file text, fixed findings, findings left) with every fix applied to the
    notebook's program; the text is unchanged when nothing was fixed. Cells Python
    cannot parse are neither fixed nor changed.

    Raises SourceError (not a notebook, cannot be analysed; FixError when the fixes
    would not parse)."""
    from .notebook import cells_from_program, moved_to_line, parse_notebook, program, syntax_error, write_cells

    notebook = parse_notebook(text)
    if not notebook.is_python:
        return text, [], []
    valid = [cell for cell in notebook.cells if not cell.python.strip() or syntax_error(cell) is None]
    joined = program(valid)
    result = fix_source(joined.source, path, options, **fix_options)

    def in_cells(findings: Sequence[Finding], source: Program) -> List[Tuple[int, Finding]]:
        located = []
        for finding in findings:
            cell, line = source.locate(finding.line)
            located.append((cell.number, moved_to_line(finding, line)))
        return located

    new_texts = cells_from_program(joined, result.text) if result.changed else {}
    new_text = write_cells(notebook, new_texts)
    # Findings left are counted in the fixed notebook's cells.
    indices = {cell.index for cell in valid}
    fixed = program([cell for cell in parse_notebook(new_text).cells if cell.index in indices])
    return new_text, in_cells(result.fixed_findings, joined), in_cells(result.remaining_findings, fixed)


def _fix_notebook(path: str, data: bytes, options: Options, write: bool) -> FileFix:
    """A Jupyter notebook: its code cells fixed as one program, only the changed
    cells' source rewritten (see notebook.py)."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    try:
        text = data[len(bom):].decode("utf-8")
    except UnicodeDecodeError as error:
        return FileFix(path, skipped=f"not a Jupyter notebook: not UTF-8: {error}")
    try:
        try:
            new_text, fixed, remaining = fix_notebook_text(text, path, options)
        except SourceError as error:
            return FileFix(path, skipped=error.reason)
        result = FixResult(new_text, [f for _, f in fixed], [f for _, f in remaining], [c for c, _ in remaining])
        if write and result.changed:
            write_atomically(path, bom + new_text.encode("utf-8"))
    except OSError as error:
        return FileFix(path, skipped=f"cannot write: {error.strerror or error}")
    except Exception as error:  # a bug of ours: report it, go on with the other files
        return FileFix(path, error=f"{type(error).__name__}: {' '.join(str(error).split())[:200]}")
    return FileFix(path, result, before=text)


def write_atomically(path: str, data: bytes) -> None:
    """Write through a symlink to its target, via a temporary file in the target's
    folder renamed over it; the target's permissions are kept."""
    target = os.path.realpath(path)
    mode = stat.S_IMODE(os.stat(target).st_mode)
    folder, name = os.path.split(target)
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tdvfix", dir=folder)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def fix_title(finding: Finding) -> str:
    """What applying `finding`'s fix does, as editors and SARIF viewers show it."""
    return f"Fix {finding.code}: {finding.message.split(';')[0]}"


def changed_lines(old: str, new: str) -> List[Tuple[int, int, int, int, str]]:
    """Edits that turn `old` into `new`, whole lines at a time: (line, col, end_line,
    end_col, text), 0-based, end exclusive, columns in code points. An edit that reaches
    a last line without a newline ends at that line's end, not past the file."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    edits = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            edits.append((i1, 0, i2, 0, "".join(new_lines[j1:j2])))
    if edits and old_lines and not old.endswith(("\n", "\r")) and edits[-1][2] == len(old_lines):
        line, col, _, _, text = edits[-1]
        edits[-1] = (line, col, len(old_lines) - 1, len(old_lines[-1]), text)
    return edits


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=path, tofile=path))


def run_fix(paths: Iterable[str], options: Options, diff: bool = False) -> int:
    """The `fix` command over files: rewrite them (or print the diff), list what is
    left, and end with a summary on stderr. Exit status: 1 when something was (or
    with `diff` would be) changed or a file was skipped, 0 when nothing, 2 after an
    internal error."""
    status = EXIT_CLEAN
    fixed = files = 0
    for path in paths:
        report = fix_file(path, options, write=not diff)
        if report.error is not None:
            print(f"{path}: internal error: {report.error}; please report this bug at the "
                  "flake8-torchdevice issue tracker with the file attached", file=sys.stderr)
            status = EXIT_ERROR
            continue
        if report.skipped is not None:
            print(f"{path}: skipped: {report.skipped}", file=sys.stderr)
            status = max(status, EXIT_CHANGED)
            continue
        result = report.result
        assert result is not None
        if result.changed:
            fixed += len(result.fixed_findings)
            files += 1
            status = max(status, EXIT_CHANGED)
            if diff:
                sys.stdout.write(unified_diff(path, report.before, result.text))
        if not diff:
            for index, finding in enumerate(result.remaining_findings):
                cell = f"cell {result.cells[index]}:" if result.cells is not None else ""
                print(f"{path}:{cell}{finding.line}:{finding.col + 1}: {finding.text}")
    verb = "Would fix" if diff else "Fixed"
    print(f"{verb} {fixed} finding{'s' if fixed != 1 else ''} in {files} file{'s' if files != 1 else ''}.",
          file=sys.stderr)
    return status
