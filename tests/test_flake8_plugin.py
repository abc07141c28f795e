"""flake8 end to end: the plugin as users run it, in a real subprocess."""

from __future__ import annotations

import pytest

from conftest import ONE_OF_EACH, run_module

BAD = ONE_OF_EACH
# flake8 numbers columns from 1.
BAD_FINDINGS = [
    "bad.py:8:20: TDV201",
    "bad.py:12:20: TDV101",
    "bad.py:13:27: TDV102",
    "bad.py:14:13: TDV301",
    "bad.py:16:11: TDV401",
]


def flake8(tmp_path, *args, stdin=None):
    return run_module("flake8", list(args), cwd=str(tmp_path), stdin=stdin)


def heads(stdout: str):
    """`path:line:col: CODE` of every output line (the message dropped)."""
    return [" ".join(line.split(" ")[:2]) for line in stdout.splitlines()]


@pytest.fixture
def bad(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    return tmp_path


def test_one_of_each_finding(bad):
    result = flake8(bad, "--select=TDV", "bad.py")
    assert heads(result.stdout) == BAD_FINDINGS
    assert result.returncode == 1
    assert result.stderr == ""
    # The message follows the code, as flake8 prints it.
    assert ("bad.py:12:20: TDV101 .cuda() hard-codes CUDA and fails without a GPU; "
            "use .to(device) with a device chosen at run time") in result.stdout.splitlines()


def test_default_selection_includes_tdv(bad):
    result = flake8(bad, "bad.py")
    assert [h for h in heads(result.stdout) if " TDV" in h] == BAD_FINDINGS


def test_clean_file(tmp_path):
    (tmp_path / "good.py").write_text(
        "import torch\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "state = torch.load('m.pt', map_location='cpu')\n"
        "x = torch.ones(2).to(device)\n")
    result = flake8(tmp_path, "--select=TDV", "good.py")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_noqa(tmp_path):
    (tmp_path / "n.py").write_text(
        "x = y.cuda()  # noqa\n"
        "z = y.cuda()  # noqa: TDV101\n"
        "w = y.cuda()  # noqa: TDV102\n"
        "v = y.cuda()  # noqa:TDV1\n")
    result = flake8(tmp_path, "--select=TDV", "n.py")
    assert heads(result.stdout) == ["n.py:3:7: TDV101"]


def test_stdin(tmp_path):
    result = flake8(tmp_path, "--select=TDV", "-", stdin=BAD)
    assert heads(result.stdout) == [h.replace("bad.py", "stdin") for h in BAD_FINDINGS]
    assert result.returncode == 1


def test_syntax_error_is_e999_without_traceback(tmp_path):
    (tmp_path / "s.py").write_text("import torch\nx = y.cuda(\n")
    result = flake8(tmp_path, "s.py")
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("s.py:") and " E999 SyntaxError" in lines[0]
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 1


@pytest.mark.parametrize("config", ["setup.cfg", ".flake8", "tox.ini"])
def test_guard_names_from_config(tmp_path, config):
    (tmp_path / "g.py").write_text("if HAS_ACCEL:\n    x = y.cuda()\n")
    assert heads(flake8(tmp_path, "--select=TDV", "g.py").stdout) == ["g.py:2:11: TDV101"]
    (tmp_path / config).write_text("[flake8]\ntorchdevice-guard-names = HAS_ACCEL, requires_accel\n")
    result = flake8(tmp_path, "--select=TDV", "g.py")
    assert (result.returncode, result.stdout) == (0, "")


def test_guard_names_on_the_command_line(tmp_path):
    (tmp_path / "g.py").write_text("@requires_accel\ndef f(y):\n    return y.cuda()\n")
    assert heads(flake8(tmp_path, "--select=TDV", "g.py").stdout) == ["g.py:3:14: TDV101"]
    result = flake8(tmp_path, "--select=TDV", "--torchdevice-guard-names=requires_accel", "g.py")
    assert result.stdout == ""


def test_check_param_defaults_option(tmp_path):
    (tmp_path / "p.py").write_text("def f(device='cuda'):\n    return device\n")
    assert flake8(tmp_path, "--select=TDV", "p.py").stdout == ""
    result = flake8(tmp_path, "--select=TDV", "--torchdevice-check-param-defaults", "p.py")
    assert heads(result.stdout) == ["p.py:1:14: TDV102"]


def test_extend_ignore_family(bad):
    result = flake8(bad, "--select=TDV", "--extend-ignore=TDV1", "bad.py")
    assert heads(result.stdout) == [h for h in BAD_FINDINGS if " TDV1" not in h]


def test_extend_ignore_in_config(bad):
    (bad / "setup.cfg").write_text("[flake8]\nextend-ignore = TDV301,TDV401\n")
    result = flake8(bad, "--select=TDV", "bad.py")
    assert heads(result.stdout) == [h for h in BAD_FINDINGS if "TDV301" not in h and "TDV401" not in h]


def test_select_one_code(bad):
    result = flake8(bad, "--select=TDV102", "bad.py")
    assert heads(result.stdout) == ["bad.py:13:27: TDV102"]


def test_other_selection_shows_no_tdv(bad):
    result = flake8(bad, "--select=E,F,W", "bad.py")
    assert " TDV" not in result.stdout
    assert result.stderr == ""


def test_plugin_is_registered(tmp_path):
    result = flake8(tmp_path, "--version")
    assert "flake8-torchdevice" in result.stdout


@pytest.mark.parametrize("odd", ["\x0c\n", "s = 'a\x0cb'\n", "s = 'a\u2028b'\n", "s = 'a\x1cb'\n"],
                         ids=["form feed line", "form feed in a string", "line separator", "file separator"])
def test_characters_python_does_not_split_lines_on(tmp_path, odd):
    # str.splitlines() splits on these, Python's tokenizer does not: positions must not shift.
    source = "import torch\n" + odd + "def a():\n    return 1\n\ndef b(x):\n    return x.cuda()\n"
    (tmp_path / "odd.py").write_text(source, encoding="utf-8", newline="")
    result = flake8(tmp_path, "--select=TDV", "odd.py")
    assert heads(result.stdout) == ["odd.py:7:14: TDV101"]
    assert result.stderr == ""


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_other_line_endings(tmp_path, newline):
    source = "import torch\ndef a():\n    return 1\ndef b(x):\n    return x.cuda()\n".replace("\n", newline)
    (tmp_path / "nl.py").write_bytes(source.encode())
    assert heads(flake8(tmp_path, "--select=TDV", "nl.py").stdout) == ["nl.py:5:14: TDV101"]
