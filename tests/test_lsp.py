"""The language server end to end: `python -m flake8_torchdevice lsp` in a subprocess,
driven over stdio by pygls's LanguageClient, as an editor drives it.

Set TDV_LSP_TRANSCRIPT=PATH to keep a readable transcript of the first test."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

from conftest import ROOT  # noqa: E402

TIMEOUT = 30

CUDA = "import torch\n\nmodel = torch.nn.Linear(2, 2)\nmodel = model.cuda()\n"
TRAIN = 'import torch\n\nmodel = torch.nn.Linear(2, 2)\nstate = torch.load("model.pt")\nmodel = model.cuda()\n'


class Session:
    """A client talking to the server in a subprocess; every message is kept for the transcript."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.client = LanguageClient("tdv-test", "1")
        self.diagnostics: Dict[str, asyncio.Queue] = {}
        self.messages: List[str] = []
        self.log: List[str] = []
        self.versions: Dict[str, int] = {}
        self.texts: Dict[str, str] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.note("server -> client", "textDocument/publishDiagnostics", params)
            self.queue(params.uri).put_nowait(params)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params: types.ShowMessageParams) -> None:
            self.messages.append(params.message)

        @self.client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: types.RegistrationParams) -> None:
            self.note("server -> client", "client/registerCapability", params)
            return None

    def note(self, direction: str, method: str, params: Any) -> None:
        body = self.client.protocol._converter.unstructure(params) if params is not None else None
        self.log.append(f"{direction}: {method}\n{json.dumps(body, indent=2)}\n")

    def queue(self, uri: str) -> asyncio.Queue:
        return self.diagnostics.setdefault(uri, asyncio.Queue())

    async def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        await self.client.start_io(sys.executable, "-m", "flake8_torchdevice", "lsp", cwd=self.root, env=env)
        params = types.InitializeParams(
            process_id=os.getpid(), root_uri=from_fs_path(self.root),
            workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(self.root), name="project")],
            capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True))))
        self.note("client -> server", "initialize", params)
        result = await asyncio.wait_for(self.client.initialize_async(params), TIMEOUT)
        self.note("server -> client", "initialize (result, abridged)", result.server_info)
        self.client.initialized(types.InitializedParams())

    async def stop(self) -> None:
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        await asyncio.wait_for(self.client.stop(), TIMEOUT)

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def open(self, name: str, text: str) -> str:
        uri = from_fs_path(self.path(name))
        self.versions[uri] = 1
        self.texts[uri] = text
        params = types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=text))
        self.note("client -> server", "textDocument/didOpen", params)
        self.client.text_document_did_open(params)
        return uri

    def change(self, uri: str, text: str) -> None:
        """The whole text as one change (incremental edits come from apply())."""
        self.versions[uri] += 1
        self.texts[uri] = text
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)])
        self.note("client -> server", "textDocument/didChange", params)
        self.client.text_document_did_change(params)

    def apply(self, uri: str, edit: types.WorkspaceEdit) -> str:
        """Apply a code action's edit as an editor does: incremental changes, new version."""
        text = self.texts[uri]
        (document_edit,) = edit.document_changes
        assert document_edit.text_document.uri == uri
        assert document_edit.text_document.version == self.versions[uri]
        changes = []
        for text_edit in sorted(document_edit.edits, key=lambda e: (e.range.start.line, e.range.start.character),
                                reverse=True):
            text = apply_edit(text, text_edit)
            changes.append(types.TextDocumentContentChangePartial(range=text_edit.range, text=text_edit.new_text))
        self.versions[uri] += 1
        self.texts[uri] = text
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=changes)
        self.note("client -> server", "textDocument/didChange", params)
        self.client.text_document_did_change(params)
        return text

    async def next_diagnostics(self, uri: str) -> List[types.Diagnostic]:
        params = await asyncio.wait_for(self.queue(uri).get(), TIMEOUT)
        return list(params.diagnostics)

    async def code_actions(self, uri: str, line: int, only: Optional[List[str]] = None) -> List[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=types.Position(line=line, character=0),
                              end=types.Position(line=line, character=0)),
            context=types.CodeActionContext(diagnostics=[], only=only))
        self.note("client -> server", "textDocument/codeAction", params)
        actions = await asyncio.wait_for(self.client.text_document_code_action_async(params), TIMEOUT)
        self.note("server -> client", "textDocument/codeAction (result)", actions)
        return actions or []


def apply_edit(text: str, edit: types.TextEdit) -> str:
    """Apply one edit (positions in UTF-16 units, as LSP counts by default)."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        before = sum(len(line) for line in lines[:position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units = 0
        for index, char in enumerate(line):
            if units >= position.character:
                return before + index
            units += 2 if ord(char) > 0xFFFF else 1
        return before + len(line)

    return text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]


def span(diagnostic: types.Diagnostic):
    r = diagnostic.range
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def run(root, scenario):
    async def main():
        session = Session(str(root))
        await session.start()
        try:
            await scenario(session)
        finally:
            await session.stop()
        return session
    return asyncio.run(main())


# ------------------------------------------------------------------ tests


def test_diagnostics_quick_fix_noqa_and_syntax_errors(tmp_path):
    async def scenario(s: Session):
        uri = s.open("train.py", TRAIN)
        load, cuda = await s.next_diagnostics(uri)
        assert (load.code, span(load)) == ("TDV301", (3, 8, 3, 30))  # torch.load("model.pt")
        assert (cuda.code, span(cuda)) == ("TDV101", (4, 14, 4, 18))  # the cuda of model.cuda()
        for diagnostic in (load, cuda):
            assert diagnostic.severity == types.DiagnosticSeverity.Warning
            assert diagnostic.source == "flake8-torchdevice"
            assert diagnostic.code_description.href == (
                f"https://github.com/flake8-torchdevice/flake8-torchdevice/blob/main/docs/rules/{diagnostic.code}.md")
        assert cuda.message.startswith(".cuda() hard-codes CUDA")

        # the rule's fix, as the preferred quick fix
        actions = await s.code_actions(uri, 3)
        assert [(a.title.split(":")[0], a.kind, a.is_preferred) for a in actions] == [
            ("Fix TDV301", types.CodeActionKind.QuickFix, True),
            ("Add `# noqa", types.CodeActionKind.QuickFix, None),
            ("Fix all flake8-torchdevice findings in this file", types.CodeActionKind.SourceFixAll, None)]
        assert [d.code for d in actions[0].diagnostics] == ["TDV301"]
        text = s.apply(uri, actions[0].edit)
        assert text == TRAIN.replace('torch.load("model.pt")', 'torch.load("model.pt", map_location="cpu")')
        assert [d.code for d in await s.next_diagnostics(uri)] == ["TDV101"]

        # no fix for .cuda() here: `# noqa: TDV101` silences it
        actions = await s.code_actions(uri, 4)
        assert [a.title for a in actions] == ["Add `# noqa: TDV101` to this line"]
        text = s.apply(uri, actions[0].edit)
        assert text.splitlines()[4] == "model = model.cuda()  # noqa: TDV101"
        assert await s.next_diagnostics(uri) == []

        # mid-edit: a syntax error clears the diagnostics; valid again, they are back
        s.change(uri, TRAIN)
        assert [d.code for d in await s.next_diagnostics(uri)] == ["TDV301", "TDV101"]
        s.change(uri, TRAIN.replace("model.cuda()", "model.cuda(  "))
        assert await s.next_diagnostics(uri) == []
        s.change(uri, TRAIN)
        assert [span(d) for d in await s.next_diagnostics(uri)] == [(3, 8, 3, 30), (4, 14, 4, 18)]

    session = run(tmp_path, scenario)
    transcript = os.environ.get("TDV_LSP_TRANSCRIPT")
    if transcript:
        with open(transcript, "w", encoding="utf-8") as file:
            file.write("".join(session.log))


def test_fix_all_source_action(tmp_path):
    text = 'import torch\n\na = torch.load("a.pt")\nb = torch.load("b.pt")\nc = m.cuda()\n'

    async def scenario(s: Session):
        uri = s.open("f.py", text)
        assert [d.code for d in await s.next_diagnostics(uri)] == ["TDV301", "TDV301", "TDV101"]
        # the quick fix of one finding fixes that one only
        (quick,) = [a for a in await s.code_actions(uri, 3) if a.is_preferred]
        assert s.apply(uri, quick.edit) == text.replace('"b.pt"', '"b.pt", map_location="cpu"')
        assert [d.code for d in await s.next_diagnostics(uri)] == ["TDV301", "TDV101"]
        # a client asking for source actions (e.g. on save) gets fixAll alone
        (fix_all,) = await s.code_actions(uri, 0, only=[types.CodeActionKind.Source])
        assert fix_all.kind == types.CodeActionKind.SourceFixAll
        assert s.apply(uri, fix_all.edit) == text.replace('.pt")', '.pt", map_location="cpu")')
        assert [d.code for d in await s.next_diagnostics(uri)] == ["TDV101"]
        assert await s.code_actions(uri, 0, only=[types.CodeActionKind.SourceFixAll]) == []

    run(tmp_path, scenario)


def test_noqa_action_extends_an_existing_noqa_list(tmp_path):
    async def scenario(s: Session):
        uri = s.open("a.py", "import torch\nx = y.cuda()  # noqa: E501\nz = 1\n")
        assert [d.code for d in await s.next_diagnostics(uri)] == ["TDV101"]
        (noqa,) = [a for a in await s.code_actions(uri, 1) if "noqa" in a.title]
        assert s.apply(uri, noqa.edit) == "import torch\nx = y.cuda()  # noqa: E501, TDV101\nz = 1\n"
        assert await s.next_diagnostics(uri) == []
        # nothing on a line without a finding
        assert await s.code_actions(uri, 2) == []

    run(tmp_path, scenario)


def test_non_ascii_columns_are_utf16_units(tmp_path):
    async def scenario(s: Session):
        uri = s.open("u.py", "import torch\nx = ('𝄞é', m.cuda())\n")
        (diagnostic,) = await s.next_diagnostics(uri)
        # '𝄞' is two UTF-16 units: `cuda` spans code points 13 to 17, units 14 to 18
        assert span(diagnostic) == (1, 14, 1, 18)

    run(tmp_path, scenario)


def test_config_is_read_from_the_workspace_and_reloaded(tmp_path):
    (tmp_path / "setup.cfg").write_text("[flake8]\nextend-ignore = TDV101\n")

    async def scenario(s: Session):
        uri = s.open("m.py", CUDA + 'd = torch.device("cuda")\n')
        assert [d.code for d in await s.next_diagnostics(uri)] == ["TDV102"]
        (tmp_path / "setup.cfg").write_text("[flake8]\nextend-ignore = TDV102\n")
        params = types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
            uri=from_fs_path(str(tmp_path / "setup.cfg")), type=types.FileChangeType.Changed)])
        s.note("client -> server", "workspace/didChangeWatchedFiles", params)
        s.client.workspace_did_change_watched_files(params)
        assert [d.code for d in await s.next_diagnostics(uri)] == ["TDV101"]

    run(tmp_path, scenario)


def test_typing_is_debounced_and_only_the_last_version_is_reported(tmp_path):
    async def scenario(s: Session):
        uri = s.open("t.py", "import torch\n")
        assert await s.next_diagnostics(uri) == []
        started = time.monotonic()
        text = "import torch\n"
        for char in "x = m.cuda()\n":
            text += char
            s.change(uri, text)
        diagnostics = await s.next_diagnostics(uri)
        assert time.monotonic() - started >= 0.3
        assert [(d.code, span(d)) for d in diagnostics] == [("TDV101", (1, 6, 1, 10))]
        await asyncio.sleep(0.6)
        assert s.queue(uri).empty()  # one publication for the whole burst

    run(tmp_path, scenario)


def test_a_notebook_document_is_one_program(tmp_path):
    async def scenario(s: Session):
        notebook_uri = from_fs_path(str(tmp_path / "n.ipynb"))
        cells = ["import torch\nready = torch.cuda.device_count() > 0", "# text",
                 "%time y = 1\nif ready:\n    m.cuda()", "z = n.cuda()"]
        kinds = [types.NotebookCellKind.Code, types.NotebookCellKind.Markup, types.NotebookCellKind.Code,
                 types.NotebookCellKind.Code]
        cell_uris = [f"vscode-notebook-cell:{tmp_path}/n.ipynb#cell{index}" for index in range(len(cells))]
        params = types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook_uri, notebook_type="jupyter-notebook", version=1,
                cells=[types.NotebookCell(kind=kind, document=uri) for kind, uri in zip(kinds, cell_uris)]),
            cell_text_documents=[types.TextDocumentItem(uri=uri, language_id="python" if kind == 2 else "markdown",
                                                        version=1, text=text)
                                 for uri, kind, text in zip(cell_uris, kinds, cells)])
        s.client.notebook_document_did_open(params)
        assert await s.next_diagnostics(cell_uris[0]) == []
        assert await s.next_diagnostics(cell_uris[2]) == []  # guarded by the flag of cell 1
        assert [(d.code, span(d)) for d in await s.next_diagnostics(cell_uris[3])] == [("TDV101", (0, 6, 0, 10))]

    run(tmp_path, scenario)


def test_the_linter_runs_without_pygls(tmp_path):
    """pygls is the `lsp` extra's: `check` never imports it; `lsp` without it says what to install."""
    block = "import sys; sys.modules['pygls'] = None; sys.modules['lsprotocol'] = None; "
    env = dict(os.environ, PYTHONPATH=ROOT)
    (tmp_path / "a.py").write_text("import torch\nx = m.cuda()\n")
    check = subprocess.run([sys.executable, "-c", block + "from flake8_torchdevice.cli import main; "
                            "sys.exit(main(['check', 'a.py']))"], cwd=str(tmp_path), env=env,
                           capture_output=True, text=True, timeout=120)
    assert (check.returncode, check.stdout.split(" ")[0]) == (1, "a.py:2:7:")
    lsp = subprocess.run([sys.executable, "-c", block + "from flake8_torchdevice.cli import main; "
                          "sys.exit(main(['lsp']))"], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=120)
    assert lsp.returncode == 2
    assert lsp.stderr.startswith("the language server needs pygls: pip install 'flake8-torchdevice[lsp]'")


@pytest.mark.slow  # 10 to 45 s: the big file's lint
def test_the_server_answers_while_it_lints_a_big_file(tmp_path):
    big = "import torch\n" + "".join(f"def f{i}(x):\n    return x.cuda() + torch.zeros(3) * {i}\n"
                                     for i in range(1500))

    async def scenario(s: Session):
        small = s.open("small.py", "import torch\nx = m.cuda()\n")
        assert len(await s.next_diagnostics(small)) == 1
        started = time.monotonic()
        big_uri = s.open("big.py", big)
        await asyncio.sleep(0.2)  # the big lint is under way in the worker process
        actions = await s.code_actions(small, 1)
        answered = time.monotonic() - started
        assert [a.title for a in actions] == ["Add `# noqa: TDV101` to this line"]
        assert s.queue(big_uri).empty(), "the answer came after the big file's lint"
        assert len(await s.next_diagnostics(big_uri)) == 3000
        linted = time.monotonic() - started
        assert answered < linted / 2

    run(tmp_path, scenario)


@pytest.mark.parametrize("source, line, expected", [
    ("x = m.cuda()\n", 1, "x = m.cuda()  # noqa: TDV101\n"),
    ("x = m.cuda()  # why\n", 1, "x = m.cuda()  # why  # noqa: TDV101\n"),
    ("x = m.cuda()  # noqa: E501\n", 1, "x = m.cuda()  # noqa: E501, TDV101\n"),
    ("x = m.cuda()  # NOQA:E501,W291 more\n", 1, "x = m.cuda()  # NOQA:E501,W291, TDV101 more\n"),
    ("x = m.cuda()", 1, "x = m.cuda()  # noqa: TDV101"),  # no final newline
    ("x = f(m.cuda(), '''\ntext''')\n", 1, None),  # a comment there would be in the string
    ("x = m.cuda() + \\\n    1\n", 1, None),  # nor after a backslash
    ("x = (m.cuda(),\n     2)\n", 1, "x = (m.cuda(),  # noqa: TDV101\n     2)\n"),
])
def test_noqa_edit(source, line, expected):
    from flake8_torchdevice.engine import Finding
    from flake8_torchdevice.lsp import noqa_edit

    edit = noqa_edit(source.splitlines(keepends=True), Finding(line, 4, "TDV101", "m"), source)
    if expected is None:
        assert edit is None
    else:
        assert apply_edit(source, edit) == expected


@pytest.mark.parametrize("old, new", [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("a\nb", "a\nc"),  # the last line has no newline
    ("a\nb", "a\nb\nc\n"),
    ("x = '𝄞'\ny = 1", "x = '𝄞'\ny = 2"),
    ("a\r\nb\r\n", "a\r\nc\r\n"),
    ("a\n", "z\na\n"),
])
def test_line_edits_turn_the_old_text_into_the_new(old, new):
    from flake8_torchdevice.lsp import line_edits

    text = old
    for edit in sorted(line_edits(old, new), key=lambda e: (e.range.start.line, e.range.start.character),
                       reverse=True):
        text = apply_edit(text, edit)
    assert text == new
