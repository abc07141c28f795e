"""The standalone command `flake8-torchdevice check|rules|explain`."""

from __future__ import annotations

import pytest

from conftest import ONE_OF_EACH, run_module, unmarked
from flake8_torchdevice import cli
from flake8_torchdevice.rules import ALL_RULES

BAD = ONE_OF_EACH
BAD_HEADS = ["8:20: TDV201 [*]", "12:20: TDV101", "13:27: TDV102 [*]", "14:13: TDV301 [*]", "16:11: TDV401"]
FIXABLE_IN_BAD = "[*] 3 fixable with `flake8-torchdevice fix`\n"
GOOD = ("import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "state = torch.load('m.pt', map_location='cpu')\n")


def heads(stdout: str):
    """`path:line:col: CODE`, with ` [*]` when marked fixable; the closing count apart."""
    found = []
    for line in stdout.splitlines():
        words = line.split(" ")
        if words[0] != "[*]":
            found.append(" ".join(words[:3] if words[2:3] == ["[*]"] else words[:2]))
    return found


def tool(tmp_path, *args, stdin=None):
    return run_module("flake8_torchdevice", list(args), cwd=str(tmp_path), stdin=stdin)


@pytest.fixture
def project(tmp_path):
    """bad.py, good.py, pkg/sub/deep.py (bad), pkg/notes.txt, .git/hook.py (skipped)."""
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "deep.py").write_text(BAD)
    (tmp_path / "pkg" / "notes.txt").write_text("x = y.cuda()\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "hook.py").write_text(BAD)
    return tmp_path


@pytest.fixture
def run(project, monkeypatch, capsys):
    """cli.main in-process, in the project folder: (status, stdout, stderr)."""
    monkeypatch.chdir(project)

    def _run(*args):
        status = cli.main(list(args))
        out, err = capsys.readouterr()
        return status, out, err
    return _run


# ------------------------------------------------------------------ subprocess


def test_files_subprocess(project):
    result = tool(project, "check", "bad.py", "good.py")
    assert heads(result.stdout) == [f"bad.py:{h}" for h in BAD_HEADS]
    assert result.stdout.endswith(FIXABLE_IN_BAD)
    assert result.returncode == 1
    assert result.stderr == ""


def test_output_is_identical_to_flake8(project):
    ours = tool(project, "check", ".")
    theirs = run_module("flake8", ["--select=TDV", "."], cwd=str(project))
    assert unmarked(ours.stdout) == theirs.stdout
    assert heads(ours.stdout) == ([f"./bad.py:{h}" for h in BAD_HEADS]
                                  + [f"./pkg/sub/deep.py:{h}" for h in BAD_HEADS])


def test_clean_exit_zero_subprocess(project):
    result = tool(project, "check", "good.py")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_stdin(project):
    result = tool(project, "check", "-", stdin=BAD)
    assert heads(result.stdout) == [f"stdin:{h}" for h in BAD_HEADS]
    assert result.returncode == 1
    assert tool(project, "check", "-", stdin=GOOD).returncode == 0


@pytest.mark.parametrize("args", [["bogus"], [], ["check"], ["explain"], ["explain", "TDV999"],
                                  ["check", "--no-such-flag", "bad.py"]])
def test_usage_errors_exit_two(project, args):
    result = tool(project, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr
    assert "Traceback" not in result.stderr


def test_rules_subprocess(project):
    result = tool(project, "rules")
    assert result.returncode == 0
    codes = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert codes == [rule.code for rule in ALL_RULES]


def test_explain_subprocess(project):
    result = tool(project, "explain", "TDV101")
    assert result.returncode == 0
    assert result.stdout.startswith("# TDV101 cuda-call")
    for section in ("## What it does", "## Why is this bad", "## Example", "## Use instead", "## How to silence it"):
        assert section in result.stdout


# -------------------------------------------------------------------- in-process


def test_folder_is_recursive(run):
    status, out, err = run("check", "pkg")
    assert status == 1
    assert heads(out) == [f"pkg/sub/deep.py:{h}" for h in BAD_HEADS]  # notes.txt is not Python


def test_skips_vcs_folders(run):
    status, out, _ = run("check", ".")
    assert not any(".git" in line for line in out.splitlines())
    assert status == 1


def test_file_given_by_name_is_linted_whatever_its_suffix(run, project):
    (project / "script").write_text("x = y.cuda()\n")
    assert run("check", "script")[:2] == (1, "script:1:7: TDV101 " + cli.RULES_BY_CODE["TDV101"].message + "\n")


def test_clean(run):
    assert run("check", "good.py") == (0, "", "")


@pytest.mark.parametrize("select, expected", [
    ("TDV1", ["12:20: TDV101", "13:27: TDV102 [*]"]),
    ("TDV301,TDV401", ["14:13: TDV301 [*]", "16:11: TDV401"]),
    ("tdv201", ["8:20: TDV201 [*]"]),
])
def test_select(run, select, expected):
    status, out, _ = run("check", f"--select={select}", "bad.py")
    assert heads(out) == [f"bad.py:{h}" for h in expected]
    assert status == 1


def test_ignore(run):
    status, out, _ = run("check", "--ignore=TDV1,TDV301", "bad.py")
    assert heads(out) == ["bad.py:8:20: TDV201 [*]", "bad.py:16:11: TDV401"]
    # The more specific prefix wins, as in flake8.
    status, out, _ = run("check", "--select=TDV101", "--ignore=TDV1", "bad.py")
    assert heads(out) == ["bad.py:12:20: TDV101"]


def test_ignore_everything_found_exits_zero(run):
    assert run("check", "--ignore=TDV", "bad.py") == (0, "", "")


def test_config_file(run, project):
    (project / "setup.cfg").write_text("[flake8]\nextend-ignore = TDV2,TDV4\nselect = E,W,TDV\n")
    _, out, _ = run("check", "bad.py")
    assert heads(out) == ["bad.py:12:20: TDV101", "bad.py:13:27: TDV102 [*]", "bad.py:14:13: TDV301 [*]"]


def test_guard_names(run, project):
    (project / "g.py").write_text("if HAS_ACCEL:\n    x = y.cuda()\n")
    assert run("check", "g.py")[0] == 1
    assert run("check", "--guard-names=HAS_ACCEL", "g.py") == (0, "", "")
    (project / ".flake8").write_text("[flake8]\ntorchdevice-guard-names = HAS_ACCEL\n")
    assert run("check", "g.py") == (0, "", "")


def test_check_param_defaults(run, project):
    (project / "p.py").write_text("def f(device='cuda'):\n    return device\n")
    assert run("check", "p.py") == (0, "", "")
    assert heads(run("check", "--check-param-defaults", "p.py")[1]) == ["p.py:1:14: TDV102"]


def test_noqa(run, project):
    (project / "n.py").write_text(
        "a = y.cuda()  # noqa\n"
        "b = y.cuda()  # noqa: TDV101\n"
        "c = y.cuda()  # noqa: TDV102\n"
        "d = y.cuda()  # NOQA:TDV102,TDV101\n"
        "e = y.cuda()  # noqa:TDV1\n"
        "f = y.cuda()  # noqa: E501\n")
    status, out, _ = run("check", "n.py")
    assert heads(out) == ["n.py:3:7: TDV101", "n.py:6:7: TDV101"]
    assert status == 1


def test_syntax_error_is_e999(run, project):
    (project / "s.py").write_text("import torch\nx = y.cuda(\n")
    status, out, err = run("check", "s.py")
    assert status == 1
    assert out.startswith("s.py:2:") and " E999 SyntaxError: " in out
    assert len(out.splitlines()) == 1


def test_missing_file(run):
    status, out, err = run("check", "missing.py")
    assert status == 1
    assert out == ""
    assert err.startswith("missing.py: skipped: cannot read")


def test_encoding_and_bom(run, project):
    (project / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\nx = y.cuda()\n")
    (project / "bom.py").write_bytes(b"\xef\xbb\xbfx = y.cuda()\n")
    status, out, _ = run("check", "latin.py", "bom.py")
    # files in flake8's order: sorted by name
    assert heads(out) == ["bom.py:1:7: TDV101", "latin.py:3:7: TDV101"]


def test_rules_lists_every_code(run):
    status, out, _ = run("rules")
    assert status == 0
    listed = [line.split()[:2] for line in out.splitlines()]
    assert listed == [[rule.code, rule.name] for rule in ALL_RULES]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda rule: rule.code)
def test_explain_every_rule(run, rule):
    status, out, _ = run("explain", rule.code.lower())
    assert status == 0
    assert out.startswith(f"# {rule.code} {rule.name}")
    assert "## Example" in out and "## Use instead" in out


def test_explain_unknown_code(run):
    status, out, err = run("explain", "TDV999")
    assert (status, out) == (2, "")
    assert "unknown code TDV999" in err


def test_syntax_error_without_any_trigger_is_still_reported(tmp_path):
    # E999 at the same position flake8 gives, even though no rule could match
    from flake8_torchdevice.cli import main
    import subprocess, sys
    path = tmp_path / "broken.py"
    path.write_text("import os\nos.path(\n")
    result = subprocess.run([sys.executable, "-m", "flake8_torchdevice", "check", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stdout == f"{path}:2:9: E999 SyntaxError: '(' was never closed\n"
    assert main(["check", str(path)]) == 1
