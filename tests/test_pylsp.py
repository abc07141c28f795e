"""Editors through flake8 keep working: python-lsp-server with its flake8 plugin
(the route of any editor already set up for pylsp) shows TDV diagnostics at the
right place, driven over stdio as an editor drives it."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any, Dict, List

import pytest

pytest.importorskip("pylsp")

from conftest import ONE_OF_EACH, ROOT  # noqa: E402

TIMEOUT = 60
WARNING = 2  # LSP's DiagnosticSeverity.Warning
# Only flake8 among pylsp's linters, run from this interpreter's environment.
SETTINGS = {"pylsp": {"plugins": {
    "flake8": {"enabled": True, "executable": os.path.join(os.path.dirname(sys.executable), "flake8")},
    **{name: {"enabled": False} for name in ("pycodestyle", "pyflakes", "mccabe", "pydocstyle", "pylint",
                                             "autopep8", "yapf", "rope_autoimport")},
}}}


class RawClient:
    """JSON-RPC over a subprocess's stdio, as LSP frames it (pygls's client cannot
    read pylsp's notebook capabilities, so this test speaks the protocol itself)."""

    def __init__(self, root: str) -> None:
        env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.process = subprocess.Popen([sys.executable, "-m", "pylsp"], cwd=root, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.incoming: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            self.incoming.put(json.loads(stream.read(int(headers["content-length"]))))

    def send(self, message: Dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                return message.get("result")

    def receive(self) -> Dict[str, Any]:
        message = self.incoming.get(timeout=TIMEOUT)
        if "id" in message and "method" in message:  # a request of the server's: accept it
            self.send({"id": message["id"], "result": None})
        return message

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.process.wait(timeout=TIMEOUT)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def pylsp_diagnostics(root: str, name: str, text: str) -> List[Dict[str, Any]]:
    client = RawClient(root)
    try:
        root_uri = "file://" + root
        client.request("initialize", {"processId": os.getpid(), "rootUri": root_uri, "capabilities": {},
                                      "workspaceFolders": [{"uri": root_uri, "name": "project"}]})
        client.notify("initialized", {})
        client.notify("workspace/didChangeConfiguration", {"settings": SETTINGS})
        path = os.path.join(root, name)
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
        uri = "file://" + path
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": text}})
        while True:  # pylsp may publish an empty list before flake8's results
            message = client.receive()
            params = message.get("params") or {}
            if message.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == uri \
                    and params["diagnostics"]:
                return params["diagnostics"]
    finally:
        client.close()


def test_pylsp_flake8_plugin_shows_tdv_diagnostics_at_their_positions(tmp_path):
    # the project's own flake8 config applies, as for flake8 on the command line
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = TDV\n")
    diagnostics = pylsp_diagnostics(str(tmp_path), "train.py", ONE_OF_EACH)
    lines = ONE_OF_EACH.splitlines()
    got = [(d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"], d["range"]["end"]["line"],
            d["range"]["end"]["character"], d["severity"], d["source"]) for d in diagnostics]
    # pylsp underlines from the finding to the end of its line (its newline included);
    # every flake8 code but pyflakes' errors and E999 is a Warning
    expected = [(code, line - 1, col - 1, line - 1, len(lines[line - 1]) + 1, WARNING, "flake8")
                for code, line, col in [("TDV201", 8, 20), ("TDV101", 12, 20), ("TDV102", 13, 27),
                                        ("TDV301", 14, 13), ("TDV401", 16, 11)]]
    assert got == expected
    assert diagnostics[1]["message"].startswith("TDV101 .cuda() hard-codes CUDA")
