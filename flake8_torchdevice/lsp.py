"""The language server: `flake8-torchdevice lsp` speaks LSP over stdio (pygls,
installed with the `lsp` extra).

- Diagnostics on open and save at once, on change after a pause in typing
  (DEBOUNCE_SECONDS). Linting and fixing run in a worker process (libcst's parser
  holds the GIL for seconds on a big file, a thread would stall the server), so the
  server keeps answering; a lint of a version already replaced is skipped, and a
  result for an older version of the document is dropped.
- Each diagnostic: the TDV code, a link to the rule's page, severity Warning, the
  range of the reported code. A document Python cannot parse (mid-edit) gets an
  empty list: no crash, no stale diagnostics.
- Code actions: the rule's fix for that finding (preferred quick fix), `# noqa:
  TDVnnn` for that line (a second quick fix), and every fix in the file as a
  `source.fixAll` action.
- Configuration: what `check` reads, found from the document's workspace folder
  (`[flake8]` in setup.cfg / tox.ini / .flake8, `[tool.flake8-torchdevice]` in
  pyproject.toml), read again before each lint so an edited file applies at once;
  the open documents are linted again when the client reports a config file changed.
- Notebooks (LSP 3.17 notebook documents): the code cells are linted as one program,
  as `check` lints an .ipynb file; each cell gets its own diagnostics.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import multiprocessing
import tokenize
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from . import __version__
from .docs import rule_url
from .engine import DEFAULT_OPTIONS, Finding, Options, SourceError, lint_source
from .fix import fix_title
from .noqa import NOQA_RE, is_suppressed
from .notebook import CodeCell, Program, moved_to_line, program, python_cell, syntax_error

NAME = "flake8-torchdevice"
DEBOUNCE_SECONDS = 0.3
CONFIG_FILE_NAMES = ("setup.cfg", "tox.ini", ".flake8", "pyproject.toml")
# Where rule pages are read when the package declares no repository URL: the
# docs/rules/ folder of the checkout it runs from, if it runs from one.

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Linted:
    """One lint of one version of a document. `findings` is empty when the text
    cannot be analysed (a syntax error mid-edit)."""

    version: Optional[int]
    source: str
    findings: Tuple[Finding, ...]
    options: Options
    path: str


# ---------------------------------------------------------------- linting (any thread)


def lint_document(source: str, path: str, options: Options) -> Tuple[Finding, ...]:
    """Findings with `# noqa` applied; none when the text cannot be analysed."""
    try:
        findings = lint_source(source, path, options)
    except SourceError:
        return ()
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return tuple(f for f in findings if not is_suppressed(f, lines))


def lint_cells(cells: Sequence[CodeCell], path: str, options: Options) -> Tuple[Program, Tuple[Finding, ...]]:
    """A notebook's cells as one program (cells Python cannot parse left out), and its findings."""
    joined = program([cell for cell in cells if cell.python.strip() and syntax_error(cell) is None])
    return joined, lint_document(joined.source, path, options)


def _warm_up() -> None:
    """Import what linting needs, in the worker, before the first document."""
    from . import analysis, fix  # noqa: F401


def options_for(folder: str) -> Tuple[Options, Optional[str]]:
    """The options `check` would use in `folder`, and the error when its config is broken."""
    try:
        from .config import ConfigError, load_config
    except ImportError:  # config.py without load_config: the [flake8] section alone
        from .config import read_flake8_section, split_list
        from .rules import select_codes

        section = read_flake8_section(folder)
        select = [code for code in split_list(section.get("select")) if code.startswith("TDV")]
        ignore = split_list(section.get("ignore")) + split_list(section.get("extend-ignore"))
        return Options(enabled=select_codes(select, ignore, split_list(section.get("extend-select")))), None
    try:
        return load_config(folder).options(), None
    except ConfigError as error:
        return DEFAULT_OPTIONS, str(error)


def fixed_source(source: str, path: str, options: Options, only: Optional[Finding] = None) -> Optional[str]:
    """The source with every fix (or only the fix of `only`) applied; None when
    nothing can be fixed."""
    from .fix import fix_source

    try:
        result = fix_source(source, path, options, only=only)
    except SourceError:  # FixError included: the fixes would not parse
        return None
    return result.text if result.changed else None


def line_edits(old: str, new: str) -> List[types.TextEdit]:
    """Whole-line edits that turn `old` into `new` (LSP counts columns in UTF-16 units)."""
    from .fix import changed_lines

    old_lines = old.splitlines(keepends=True)
    edits = []
    for line, col, end_line, end_col, text in changed_lines(old, new):
        if end_col:  # the end of a last line without a newline
            end_col += _utf16_extra(old_lines[end_line])
        edits.append(types.TextEdit(range=types.Range(start=types.Position(line=line, character=col),
                                                      end=types.Position(line=end_line, character=end_col)),
                                    new_text=text))
    return edits


def _utf16_extra(text: str) -> int:
    return sum(1 for char in text if ord(char) > 0xFFFF)


def noqa_edit(lines: Sequence[str], finding: Finding, source: str) -> Optional[types.TextEdit]:
    """The edit that adds `finding.code` to its line's `# noqa: ...` list, or appends
    `  # noqa: CODE`; None where a comment cannot go (the line ends inside a string
    or with a backslash)."""
    index = finding.line - 1
    if not 0 <= index < len(lines):
        return None
    line = lines[index].rstrip("\r\n")
    match = NOQA_RE.search(line)
    if match is not None and match.group("codes"):
        end = match.end("codes")
        return types.TextEdit(range=_range(line, index, end, index, end), new_text=f", {finding.code}")
    if _line_ends_in_code_continuation(source, finding.line) or line.rstrip().endswith("\\"):
        return None
    end = len(line)
    return types.TextEdit(range=_range(line, index, end, index, end), new_text=f"  # noqa: {finding.code}")


def _line_ends_in_code_continuation(source: str, line: int) -> bool:
    """Does a string token run on past the end of this line?"""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.start[0] > line:
                return False
            if token.type == tokenize.STRING and token.start[0] <= line < token.end[0]:
                return True
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    return False


def _range(line_text: str, start_line: int, start_col: int, end_line: int, end_col: int,
           end_text: Optional[str] = None) -> types.Range:
    """A range from code-point columns, in the UTF-16 units LSP counts by default."""
    end_text = line_text if end_text is None else end_text
    return types.Range(
        start=types.Position(line=start_line, character=start_col + _utf16_extra(line_text[:start_col])),
        end=types.Position(line=end_line, character=end_col + _utf16_extra(end_text[:end_col])))


def finding_range(lines: Sequence[str], finding: Finding) -> types.Range:
    """From the finding to the end of the reported code (its first line's end
    when the engine gives no end)."""
    index = finding.line - 1
    text = lines[index].rstrip("\r\n") if 0 <= index < len(lines) else ""
    end_line = getattr(finding, "end_line", None)
    end_col = getattr(finding, "end_col", None)
    if end_line is None or end_col is None or not 0 < end_line <= len(lines):
        return _range(text, index, finding.col, index, max(len(text), finding.col))
    return _range(text, index, finding.col, end_line - 1, end_col, lines[end_line - 1].rstrip("\r\n"))


def diagnostic(lines: Sequence[str], finding: Finding) -> types.Diagnostic:
    return types.Diagnostic(
        range=finding_range(lines, finding),
        message=finding.message,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=rule_url(finding.code)),
        source=NAME,
        data={"fixable": bool(getattr(finding, "fixable", False))},
    )


def _kind_wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    """LSP's kind filter: `source` asks for `source.fixAll` too."""
    return not only or any(kind == wanted or kind.startswith(wanted + ".") for wanted in only)


# ---------------------------------------------------------------- the server


class TorchDeviceServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=types.NotebookDocumentSyncOptions(
                             notebook_selector=[types.NotebookDocumentFilterWithCells(
                                 cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook")],
                             save=True))
        self.linter = self._start_worker()
        self.pending: Dict[str, asyncio.Task] = {}
        self.linted: Dict[str, Linted] = {}
        self.latest: Dict[str, int] = {}  # uri -> number of the newest lint request
        self.config_errors: Dict[str, str] = {}  # folder -> the error last shown

    # ------------------------------------------------------------ the worker process

    @staticmethod
    def _start_worker() -> ProcessPoolExecutor:
        # One worker: lints run one after another. "spawn": the server's threads are not forked.
        worker = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        worker.submit(_warm_up)
        return worker

    async def in_worker(self, function: Any, *args: Any) -> Any:
        """function(*args) in the worker process; None when the worker died (a new one starts)."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self.linter, function, *args)
        except BrokenProcessPool:
            log.error("the lint worker process died; starting a new one")
            self.linter = self._start_worker()
            return None

    # ------------------------------------------------------------ where a document lives

    def folder_of(self, path: str) -> str:
        """The workspace folder holding `path` (the deepest), else the file's folder."""
        best = ""
        for folder in self.workspace.folders.values():
            root = to_fs_path(folder.uri) or ""
            if root and (path == root or path.startswith(root.rstrip(os.sep) + os.sep)) and len(root) > len(best):
                best = root
        if not best and self.workspace.root_path and path.startswith(self.workspace.root_path.rstrip(os.sep) + os.sep):
            best = self.workspace.root_path
        return best or os.path.dirname(path) or "."

    def options_for_path(self, path: str) -> Options:
        folder = self.folder_of(path)
        options, error = options_for(folder)
        if error is not None and self.config_errors.get(folder) != error:
            self.config_errors[folder] = error
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error,
                                                             message=f"{NAME}: {error}"))
        elif error is None:
            self.config_errors.pop(folder, None)
        return options

    # ------------------------------------------------------------ scheduling

    def schedule(self, uri: str, delay: float) -> None:
        """Lint `uri` (a text document or a notebook) after `delay` seconds; a newer
        request replaces one still waiting."""
        self.latest[uri] = self.latest.get(uri, 0) + 1
        ticket = self.latest[uri]
        waiting = self.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._lint_later(uri, ticket, delay))

    def is_current(self, uri: str, ticket: int) -> bool:
        return self.latest.get(uri) == ticket

    async def _lint_later(self, uri: str, ticket: int, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            if self.workspace.get_notebook_document(notebook_uri=uri) is not None:
                await self._lint_notebook(uri, ticket)
            else:
                await self._lint_text(uri, ticket)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug of ours must not take the server down
            log.exception("linting %s failed", uri)
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]

    async def _lint_text(self, uri: str, ticket: int) -> None:
        document = self.workspace.get_text_document(uri)
        version, source, path = document.version, document.source, document.path or uri
        options = self.options_for_path(path)

        findings = await self.in_worker(lint_document, source, path, options)
        if findings is None or not self.is_current(uri, ticket):
            return
        self.linted[uri] = Linted(version, source, findings, options, path)
        lines = source.splitlines(keepends=True)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=[diagnostic(lines, f) for f in findings]))

    async def linted_now(self, uri: str) -> Linted:
        """The lint of the document as it is now (computing it if needed)."""
        document = self.workspace.get_text_document(uri)
        linted = self.linted.get(uri)
        if linted is not None and linted.version == document.version and linted.source == document.source:
            return linted
        source, path = document.source, document.path or uri
        options = self.options_for_path(path)
        findings = await self.in_worker(lint_document, source, path, options)
        return Linted(document.version, source, findings or (), options, path)

    def relint_all(self) -> None:
        for uri in list(self.workspace.text_documents):
            if self.workspace.get_notebook_document(cell_uri=uri) is None:
                self.schedule(uri, 0)
        for uri in list(self.workspace.notebook_documents):
            self.schedule(uri, 0)

    # ------------------------------------------------------------ notebooks

    def notebook_cells(self, notebook_uri: str) -> List[Tuple[str, CodeCell]]:
        notebook = self.workspace.get_notebook_document(notebook_uri=notebook_uri)
        cells = []
        for index, cell in enumerate(notebook.cells if notebook else []):
            if cell.kind != types.NotebookCellKind.Code:
                continue
            document = self.workspace.get_text_document(cell.document)
            if document.language_id not in (None, "python"):
                continue
            cells.append((cell.document, python_cell(index, document.source)))
        return cells

    async def _lint_notebook(self, uri: str, ticket: int) -> None:
        cells = self.notebook_cells(uri)
        options = self.options_for_path(to_fs_path(uri) or uri)

        result = await self.in_worker(lint_cells, [cell for _, cell in cells], uri, options)
        if result is None or not self.is_current(uri, ticket):
            return
        joined, findings = result
        by_cell: Dict[int, List[Finding]] = {cell.index: [] for _, cell in cells}
        for finding in findings:
            cell, line = joined.locate(finding.line)
            by_cell[cell.index].append(moved_to_line(finding, line))
        for cell_uri, cell in cells:
            lines = cell.text.splitlines(keepends=True)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=cell_uri, diagnostics=[diagnostic(lines, f) for f in by_cell[cell.index]]))

    # ------------------------------------------------------------ code actions

    async def code_actions(self, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        if self.workspace.get_notebook_document(cell_uri=uri) is not None:
            return []  # notebooks get diagnostics only
        linted = await self.linted_now(uri)
        only = params.context.only
        lines = linted.source.splitlines(keepends=True)
        actions: List[types.CodeAction] = []
        wanted = params.range
        for finding in linted.findings:
            where = finding_range(lines, finding)
            if where.end.line < wanted.start.line or where.start.line > wanted.end.line:
                continue  # editors ask for the cursor's line: offer what is on it
            diag = diagnostic(lines, finding)
            if _kind_wanted(types.CodeActionKind.QuickFix, only):
                if getattr(finding, "fixable", False):
                    new = await self.in_worker(fixed_source, linted.source, linted.path, linted.options, finding)
                    if new is not None:
                        actions.append(types.CodeAction(
                            title=fix_title(finding),
                            kind=types.CodeActionKind.QuickFix, diagnostics=[diag], is_preferred=True,
                            edit=self._edit(uri, linted, line_edits(linted.source, new))))
                edit = noqa_edit(lines, finding, linted.source)
                if edit is not None:
                    actions.append(types.CodeAction(
                        title=f"Add `# noqa: {finding.code}` to this line", kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag], edit=self._edit(uri, linted, [edit])))
        if _kind_wanted(types.CodeActionKind.SourceFixAll, only) and any(
                getattr(f, "fixable", False) for f in linted.findings):
            new = await self.in_worker(fixed_source, linted.source, linted.path, linted.options, None)
            if new is not None:
                actions.append(types.CodeAction(
                    title=f"Fix all {NAME} findings in this file", kind=types.CodeActionKind.SourceFixAll,
                    edit=self._edit(uri, linted, line_edits(linted.source, new))))
        return actions

    @staticmethod
    def _edit(uri: str, linted: Linted, edits: List[types.TextEdit]) -> types.WorkspaceEdit:
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=linted.version),
            edits=edits)])


def build_server() -> TorchDeviceServer:
    server = TorchDeviceServer()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TorchDeviceServer, params: types.InitializedParams) -> None:
        # Ask to hear about config files; clients without dynamic registration say no.
        watch = ls.client_capabilities.workspace
        if watch and watch.did_change_watched_files and watch.did_change_watched_files.dynamic_registration:
            watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILE_NAMES]
            try:
                await ls.client_register_capability_async(types.RegistrationParams(registrations=[
                    types.Registration(id=f"{NAME}-config", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                       register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                           watchers=watchers))]))
            except Exception:  # the client refused: config is still read before each lint
                log.info("the client does not watch config files")

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: TorchDeviceServer, params: None) -> None:
        ls.linter.shutdown(wait=False, cancel_futures=True)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: TorchDeviceServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: TorchDeviceServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: TorchDeviceServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: TorchDeviceServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.latest[uri] = ls.latest.get(uri, 0) + 1  # drops a lint under way
        waiting = ls.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        ls.linted.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    async def notebook_open(ls: TorchDeviceServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def notebook_change(ls: TorchDeviceServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    async def notebook_save(ls: TorchDeviceServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched_files(ls: TorchDeviceServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(os.path.basename(to_fs_path(change.uri) or "") in CONFIG_FILE_NAMES for change in params.changes):
            ls.relint_all()

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]))
    async def code_action(ls: TorchDeviceServer, params: types.CodeActionParams) -> List[types.CodeAction]:
        return await ls.code_actions(params)

    return server


def main() -> int:
    logging.basicConfig(level=logging.WARNING, format=f"{NAME} lsp: %(levelname)s: %(message)s")
    build_server().start_io()
    return 0
