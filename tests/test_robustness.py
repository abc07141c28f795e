"""Bad input never crashes the CLI or flake8: each case gives a clear one-line
message and exit status 0, 1 (findings or skipped files) or 2 (usage/internal error)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import flake8_torchdevice.cli as cli
import flake8_torchdevice.engine as engine
import flake8_torchdevice.files as files
from flake8_torchdevice.plugin import TorchDevicePlugin

CUDA = "import torch\nx = torch.ones(2).cuda()\n"
TDV101 = "TDV101 .cuda() hard-codes CUDA"


def run(args, stdin=None, timeout=300):
    return subprocess.run([sys.executable, "-m", *args], input=stdin, capture_output=True,
                          timeout=timeout)


def check_cli(path, stdin=None):
    done = run(["flake8_torchdevice", "check", path], stdin=stdin)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert "Traceback" not in out + err and done.returncode in (0, 1), (done.returncode, err)
    return done.returncode, out, err


def check_flake8(path, stdin=None):
    done = run(["flake8", "--select=TDV,E9", path], stdin=stdin)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert "Traceback" not in out + err and "internal error" not in err
    assert done.returncode in (0, 1), (done.returncode, err)
    return done.returncode, out, err


def write(tmp_path, name, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("data, line, col", [
    (CUDA.encode(), 2, 19),
    (b"\xef\xbb\xbf" + CUDA.encode(), 2, 19),  # BOM
    (CUDA.replace("\n", "\r\n").encode(), 2, 19),  # CRLF
    (b"import torch\r\ny = 1\nz = 2\rx = torch.ones(2).cuda()\n", 4, 19),  # mixed endings
    (b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9\xe9'; x = torch.ones(2).cuda()\n", 3, 29),
    (b"import torch\n\x0c\ndef f():\n    s = '\xe2\x80\xa8'\n    return 1\nx = torch.ones(2).cuda()\n", 6, 19),
], ids=["lf", "bom", "crlf", "mixed", "latin-1", "formfeed-u2028"])
def test_encodings_and_line_endings(tmp_path, data, line, col):
    path = write(tmp_path, "t.py", data)
    for tool in (check_cli, check_flake8):
        code, out, err = tool(path)
        assert out == f"{path}:{line}:{col}: {out.split(': ', 1)[1]}" and TDV101 in out and code == 1, out


@pytest.mark.parametrize("data, expected", [
    (b"import torch\nx = torch.zeros(3).cuda(\n", ":2:25: E999 SyntaxError: '(' was never closed"),
    (b"import torch\nx = 1\x00\n", ":1:1: E999 SyntaxError: source code string cannot contain null bytes"),
    (b"if a:\n        x = 1\n\ty = 2\n", ":3:2: E999 TabError: inconsistent use of tabs"),
    (b"x = " + b"(" * 1000 + b"1" + b")" * 1000 + b"\n", ":1:206: E999 SyntaxError: too many nested parentheses"),
    (b"x = " + b"[" * 1000 + b"1" + b"]" * 1000 + b"\n", ":1:206: E999 SyntaxError: too many nested parentheses"),
    (b"".join(b" " * i + b"if x:\n" for i in range(1000)) + b" " * 1000 + b"pass\n",
     ":101:2: E999 IndentationError: too many levels of indentation"),
], ids=["unclosed", "nul", "tabs", "parens", "lists", "ifs"])
def test_syntax_errors(tmp_path, data, expected):
    path = write(tmp_path, "s.py", data)
    for tool in (check_cli, check_flake8):
        code, out, err = tool(path)
        assert code == 1 and out.startswith(path + expected) and out.count("\n") == 1, (tool, out)


@pytest.mark.parametrize("data", [
    CUDA.encode() + b"s = '\xff'\n",  # undeclared latin-1
    b"# coding: utf-8\n" + CUDA.encode() + b"s = '\xe9'\n",  # declared UTF-8, is not
    b"# coding: no-such-codec\n" + CUDA.encode(),
], ids=["undeclared", "wrongly-declared", "unknown-codec"])
def test_non_utf8(tmp_path, data):
    """flake8 falls back to latin-1 and lints the file; so does the CLI."""
    path = write(tmp_path, "n.py", data)
    line = CUDA.count("\n") + data.startswith(b"#")
    for tool in (check_cli, check_flake8):
        code, out, err = tool(path)
        assert (code, out) == (1, f"{path}:{line}:19: {TDV101}{out.split(TDV101)[1]}"), tool


def test_empty_file(tmp_path):
    path = write(tmp_path, "e.py", b"")
    assert check_cli(path) == (0, "", "")
    assert check_flake8(path)[:2] == (0, "")


@pytest.mark.parametrize("body, reason", [
    ("y = " + " and ".join(["a"] * 20000), "line 3: a chain of 20000 operands or names is too long"),
    ("import " + ".".join(["a"] * 20000), "line 3: a chain of 20000 operands or names is too long"),
    ("y = (" + " ".join(['"a"'] * 5000) + ")", "libcst cannot parse this file: "),  # CPython accepts it
    ("y = " + " and ".join(["a"] * 400), "code nested too deeply to analyse"),
], ids=["and-chain", "dotted-import", "string-concatenation", "nested-too-deeply"])
def test_deep_or_long_code_is_skipped(tmp_path, body, reason):
    """libcst's native parser would crash the process on the first two (C stack)."""
    path = write(tmp_path, "d.py", (CUDA + body + "\n").encode())
    code, out, err = check_cli(path)
    assert (code, out) == (1, "") and err.startswith(f"{path}: skipped: {reason}") and err.count("\n") == 1
    code, out, err = check_flake8(path)
    assert (code, out) == (0, "") and f"flake8-torchdevice: skipped {path}: {reason}" in err


def test_an_indentation_mixing_tabs_and_spaces_is_read_as_python_reads_it(tmp_path):
    """Python takes a block indented `\t  ` under one indented `\t` (old research code: GFM's
    test script); libcst's tokenizer refuses it. The file is analysed with its indentations
    in spaces, columns counted as written, and `fix` leaves it alone."""
    source = b"import torch\ndef f(x):\n\tif x:\n\t  y = x.cuda()\n\treturn 1\n"
    path = write(tmp_path, "m.py", source)
    code, out, err = check_cli(path)
    assert (code, err) == (1, "") and out.startswith(f"{path}:4:10: TDV101 ") and "[*]" not in out
    assert check_flake8(path)[:2] == (1, f"{path}:4:10: TDV101 .cuda() hard-codes CUDA and fails without a GPU; "
                                         "use .to(device) with a device chosen at run time\n")
    run(["flake8_torchdevice", "fix", path])
    with open(path, "rb") as handle:
        assert handle.read() == source


def test_binop_chain_never_crashes_our_plugin(tmp_path):
    path = write(tmp_path, "b.py", (CUDA + "y = " + " + ".join(["a"] * 1000) + "\n").encode())
    code, out, err = check_cli(path)
    assert code == 1 and "skipped: code nested too deeply to analyse" in err
    done = run(["flake8", "--select=TDV", path])
    err = done.stderr.decode()
    # pyflakes itself fails on this file; our plugin only reports the skip
    assert "flake8-torchdevice: skipped" in err and "TorchDevice" not in err and "TDV" not in err


def test_libcst_failure_in_process(monkeypatch):
    import libcst

    def broken(text):
        raise RecursionError("deep")
    monkeypatch.setattr(libcst, "parse_module", broken)
    with pytest.raises(engine.SourceError, match="libcst cannot parse this file: RecursionError"):
        engine.lint_source(CUDA)


@pytest.mark.parametrize("text", [CUDA, CUDA + "y = " + " and ".join(["a"] * 400) + "\n", "def f(:\n"],
                         ids=["findings", "too-deep-for-libcst", "syntax-error"])
def test_garbage_collector_is_as_the_caller_left_it(text):
    """The engine turns Python's cyclic collector off while it works (speed); a failure
    must not leave it off in the host process (flake8, an editor), nor turn it on there."""
    import gc

    for enabled in (True, False):
        gc.enable() if enabled else gc.disable()
        try:
            files.lint_text(text, "t.py", engine.DEFAULT_OPTIONS)
        except engine.SourceError:
            pass
        finally:
            after = gc.isenabled()
            gc.enable()
        assert after is enabled


def test_large_generated_file(tmp_path):
    """20 MB: a data table plus two functions with findings (about 40 s, 4 GB with ast
    alone, as flake8 needs too); and 3 MB of dense code, skipped as too large."""
    rows = "".join(f"    ({i}, 'name_{i}', {i}.5, [1, 2, 3]),\n" for i in range(400_000))
    source = "import torch\n\n\ndef a(x):\n    return x.cuda()\n\n\nTABLE = [\n" + rows + "]\n"
    source += "\n\ndef b(y):\n    return y.cuda()\n"
    path = write(tmp_path, "big.py", source.encode())
    assert os.path.getsize(path) > 19_000_000
    code, out, err = check_cli(path)
    last = source.count("\n")
    assert (code, err) == (1, "") and out.splitlines() == [
        f"{path}:5:14: {TDV101}" + out.splitlines()[0].split(TDV101)[1],
        f"{path}:{last}:14: {TDV101}" + out.splitlines()[0].split(TDV101)[1]]
    dense = "import torch\n" + "def f(x):\n    return x.cuda()\n" * 100_000
    path = write(tmp_path, "dense.py", dense.encode())
    code, out, err = check_cli(path)
    assert (code, out) == (1, "") and "skipped: too large to analyse: 3.0 MB of code" in err


def test_unreadable_file(tmp_path, monkeypatch, capsys):
    path = write(tmp_path, "u.py", CUDA.encode())
    real_open = open

    def deny(name, *args, **kwargs):
        if name == path:
            raise PermissionError(13, "Permission denied", name)
        return real_open(name, *args, **kwargs)
    monkeypatch.setattr("builtins.open", deny)
    assert cli.main(["check", path]) == 1
    assert capsys.readouterr().err == f"{path}: skipped: cannot read: Permission denied\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read a chmod 000 file")
def test_chmod_000(tmp_path):
    path = write(tmp_path, "u.py", CUDA.encode())
    os.chmod(path, 0)
    code, out, err = check_cli(path)
    assert code == 1 and err == f"{path}: skipped: cannot read: Permission denied\n"
    assert check_flake8(path)[1].startswith(f"{path}:0:1: E902 PermissionError")


def test_broken_symlink_and_directory_named_py(tmp_path):
    (tmp_path / "x.py").mkdir()
    (tmp_path / "x.py" / "inner.py").write_text(CUDA)
    os.symlink(tmp_path / "missing", tmp_path / "broken.py")
    code, out, err = check_cli(str(tmp_path))
    assert code == 1 and err == f"{tmp_path}/broken.py: skipped: cannot read: No such file or directory\n"
    assert out.startswith(f"{tmp_path}/x.py/inner.py:2:19: {TDV101}")
    code, out, err = check_flake8(str(tmp_path))
    assert f"{tmp_path}/broken.py:0:1: E902 FileNotFoundError" in out and f"x.py/inner.py:2:19: {TDV101}" in out


def test_non_utf8_file_name(tmp_path):
    name = os.fsencode(str(tmp_path)) + b"/bad\xffname.py"
    with open(name, "wb") as file:
        file.write(CUDA.encode())
    code, out, err = check_cli(str(tmp_path))
    assert code == 1 and out.startswith(f"{tmp_path}/bad\\udcffname.py:2:19: {TDV101}")


def test_stdin():
    code, out, err = check_cli("-", stdin=CUDA.replace("\n", "\r\n").encode())
    assert code == 1 and out.startswith(f"stdin:2:19: {TDV101}")
    code, out, err = check_flake8("-", stdin=CUDA.encode())
    assert code == 1 and out.startswith(f"stdin:2:19: {TDV101}")
    assert check_cli("-", stdin=b"") == (0, "", "")


def test_internal_error_names_the_file_and_goes_on(tmp_path, monkeypatch, capsys):
    bad = write(tmp_path, "a.py", CUDA.encode())
    good = write(tmp_path, "b.py", CUDA.encode())
    real = files.lint_source

    def explode(source, path, *args, **kwargs):
        if path == bad:
            raise KeyError("boom")
        return real(source, path, *args, **kwargs)
    monkeypatch.setattr(files, "lint_source", explode)
    assert cli.main(["check", bad, good]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"{bad}: internal error: KeyError: 'boom'; please report this bug")
    assert captured.err.count("\n") == 1
    assert captured.out.startswith(f"{good}:2:19: {TDV101}")


def test_plugin_survives_an_internal_error(monkeypatch, capsys):
    import ast

    monkeypatch.setattr("flake8_torchdevice.plugin.lint_source",
                        lambda *a, **k: (_ for _ in ()).throw(ValueError("boom")))
    plugin = TorchDevicePlugin(ast.parse(CUDA), CUDA.splitlines(True), "p.py")
    assert list(plugin.run()) == []
    err = capsys.readouterr().err
    assert err.startswith("flake8-torchdevice: internal error on p.py: ValueError: boom;") and err.count("\n") == 1


@pytest.mark.parametrize("args, status", [
    (["check"], 2), (["check", "--nope", "x.py"], 2), (["frobnicate"], 2), ([], 2),
    (["explain", "TDV000"], 2), (["explain", "TDV101"], 0), (["rules"], 0),
])
def test_exit_codes(args, status, capsys):
    assert cli.main(args) == status


def test_exit_codes_for_files(tmp_path):
    clean = write(tmp_path, "c.py", b"import torch\nx = torch.ones(2)\n")
    assert check_cli(clean)[0] == 0
    assert check_cli(write(tmp_path, "f.py", CUDA.encode()))[0] == 1


def test_verbose_summary(tmp_path):
    write(tmp_path, "a.py", CUDA.encode())
    write(tmp_path, "b.py", b"x = (\n")
    os.symlink(tmp_path / "missing", tmp_path / "c.py")
    done = run(["flake8_torchdevice", "check", "-v", str(tmp_path)])
    assert done.returncode == 1
    assert done.stderr.decode().splitlines()[-1] == (
        "flake8-torchdevice: 3 files, 2 findings, 1 skipped, 0 internal errors")


def test_broken_pipe(tmp_path):
    for index in range(200):
        write(tmp_path, f"m{index:03}.py", CUDA.encode())
    proc = subprocess.Popen([sys.executable, "-m", "flake8_torchdevice", "check", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    # the findings' status, as flake8's
    assert proc.wait(timeout=120) == 1 and "Traceback" not in err and "Exception" not in err
