"""`check` as a peer of flake8: exclusion, configuration (found as flake8 finds it,
and pyproject.toml), unknown codes, the reporting options, -j; each run as a
subprocess, most next to flake8 itself on the same files."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ONE_OF_EACH, run_module, unmarked
from flake8_torchdevice import __version__
from flake8_torchdevice.config import ConfigError, load_config
from flake8_torchdevice.rules import RULES_BY_CODE

CUDA = "import torch\nx = torch.ones(2).cuda()\n"
LITERAL = "import torch\nd = torch.device('cuda')\n"
MSG101 = RULES_BY_CODE["TDV101"].message
MSG102 = RULES_BY_CODE["TDV102"].message


def check(cwd, *args, stdin=None):
    """`check` in a subprocess, its text output without the fix marks flake8 has not."""
    result = run_module("flake8_torchdevice", ["check", *args], cwd=str(cwd), stdin=stdin)
    assert "Traceback" not in result.stderr
    result.stdout = unmarked(result.stdout)
    return result


def flake8(cwd, *args, stdin=None):
    return run_module("flake8", ["--select=TDV,E9", *args], cwd=str(cwd), stdin=stdin)


def tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# ------------------------------------------------------------------- exclusion


@pytest.fixture
def venv_project(tmp_path):
    return tree(tmp_path, {
        "src/a.py": CUDA, "src/gen/b.py": CUDA, ".venv/lib/torch/c.py": CUDA, "build/d.py": CUDA,
        "node_modules/e.py": CUDA, "pkg.egg/f.py": CUDA, "__pycache__/g.py": CUDA, ".git/h.py": CUDA,
        "src/z_test.py": CUDA,
    })


@pytest.mark.parametrize("args", [
    [],  # flake8's defaults: .git, __pycache__, *.egg, ...
    ["--exclude=.venv,build,node_modules"],  # replaces the defaults
    ["--extend-exclude=.venv,build,node_modules"],
    ["--extend-exclude=*_test.py,./src/gen"],  # a base-name pattern, a path from here
    ["--exclude=src/gen"],  # a path with a slash is relative to the current directory
], ids=["defaults", "exclude", "extend-exclude", "patterns", "path"])
def test_exclude_as_flake8(venv_project, args):
    ours, theirs = check(venv_project, *args, "."), flake8(venv_project, *args, ".")
    assert ours.stdout == theirs.stdout and ours.returncode == theirs.returncode == 1
    assert ours.stdout


def test_exclude_lists(venv_project):
    files = lambda out: sorted(line.split(":")[0] for line in out.splitlines())  # noqa: E731
    assert files(check(venv_project, ".").stdout) == [
        "./.venv/lib/torch/c.py", "./build/d.py", "./node_modules/e.py", "./src/a.py", "./src/gen/b.py",
        "./src/z_test.py"]
    assert files(check(venv_project, "--extend-exclude=.venv,build,node_modules,./src/gen", ".").stdout) == [
        "./src/a.py", "./src/z_test.py"]
    # --exclude replaces the defaults: .git and the rest are linted again
    assert "./.git/h.py" in files(check(venv_project, "--exclude=.venv", ".").stdout)
    # a file named on the command line is excluded too, as in flake8
    assert check(venv_project, "--extend-exclude=a.py", "src/a.py").stdout == ""


def test_exclude_from_config_is_relative_to_the_config_file(venv_project):
    tree(venv_project, {"setup.cfg": "[flake8]\nextend-exclude = .venv, build, node_modules, src/gen\n"})
    sub = venv_project / "src"
    ours, theirs = check(sub, "."), flake8(sub, ".")
    assert ours.stdout == theirs.stdout == f"./a.py:2:19: TDV101 {MSG101}\n./z_test.py:2:19: TDV101 {MSG101}\n"


def test_exclude_from_pyproject(venv_project):
    tree(venv_project, {"pyproject.toml": '[tool.flake8-torchdevice]\nextend-exclude = [".venv", "build", '
                                          '"node_modules", "src/gen", "*_test.py"]\n'})
    assert check(venv_project / "src", ".").stdout == f"./a.py:2:19: TDV101 {MSG101}\n"


# --------------------------------------------------------------- configuration


def test_config_found_in_a_parent_as_flake8_finds_it(tmp_path):
    tree(tmp_path, {"tox.ini": "[flake8]\nextend-ignore = TDV101\n", "src/sub/m.py": CUDA + LITERAL})
    sub = tmp_path / "src" / "sub"
    ours, theirs = check(sub, "m.py"), flake8(sub, "m.py")
    assert ours.stdout == theirs.stdout == f"m.py:4:18: TDV102 {MSG102}\n"
    # a nearer file without a [flake8] section does not stop the search; one with it does
    tree(tmp_path, {"src/setup.cfg": "[metadata]\nname = x\n"})
    assert check(sub, "m.py").stdout == theirs.stdout
    tree(tmp_path, {"src/.flake8": "[flake8]\nextend-ignore = TDV102\n"})
    ours, theirs = check(sub, "m.py"), flake8(sub, "m.py")
    assert ours.stdout == theirs.stdout == f"m.py:2:19: TDV101 {MSG101}\n"


def test_config_option(tmp_path):
    tree(tmp_path, {"m.py": CUDA + LITERAL, "setup.cfg": "[flake8]\nextend-ignore = TDV101\n",
                    "other.cfg": "[flake8]\nextend-ignore = TDV102\n"})
    ours, theirs = check(tmp_path, "--config", "other.cfg", "m.py"), flake8(tmp_path, "--config", "other.cfg", "m.py")
    assert ours.stdout == theirs.stdout == f"m.py:2:19: TDV101 {MSG101}\n"
    missing = check(tmp_path, "--config", "nope.cfg", "m.py")
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr == "flake8-torchdevice: error: the specified config file does not exist: nope.cfg\n"
    # --isolated reads no file
    assert len(check(tmp_path, "--isolated", "m.py").stdout.splitlines()) == 2


def test_pyproject_table(tmp_path):
    tree(tmp_path, {"m.py": "if HAS_ACCEL:\n    x = y.cuda()\n" + LITERAL + "def f(device='cuda'):\n    pass\n",
                    "pyproject.toml": "[project]\nname = 'x'\n\n[tool.flake8-torchdevice]\n"
                                      "select = ['TDV1']\nguard-names = ['HAS_ACCEL']\n"
                                      "check-param-defaults = true\n"})
    result = check(tmp_path / ".", "m.py")
    assert result.stdout == f"m.py:4:18: TDV102 {MSG102}\nm.py:5:14: TDV102 {MSG102}\n"
    # the command line replaces a configured option
    assert check(tmp_path, "--select=TDV101", "m.py").returncode == 0


def test_pyproject_wins_over_flake8_section_key_by_key(tmp_path):
    tree(tmp_path, {"m.py": CUDA + LITERAL,
                    "setup.cfg": "[flake8]\nextend-ignore = TDV101\nselect = TDV\n",
                    "pyproject.toml": "[tool.flake8-torchdevice]\nselect = ['TDV102']\n"})
    config = load_config(str(tmp_path))
    assert config.get("select") == ("TDV102",) and config.get("extend-ignore") == ("TDV101",)
    assert config.sources == (str(tmp_path / "setup.cfg"), str(tmp_path / "pyproject.toml"))
    assert check(tmp_path, "m.py").stdout == f"m.py:4:18: TDV102 {MSG102}\n"


@pytest.mark.parametrize("table, message", [
    ("selct = ['TDV']", "unknown key 'selct' (did you mean 'select'?)"),
    ("guard_names = ['X']", "unknown key 'guard_names' (did you mean 'guard-names'?)"),
    ("select = 'TDV1'", "select must be a list of strings, such as [\"TDV1\"], not 'TDV1'"),
    ("check-param-defaults = 'yes'", "check-param-defaults must be true or false, not 'yes'"),
    ("ignore = ['TDV7']", "unknown code 'TDV7' in ignore of [tool.flake8-torchdevice]"),
])
def test_pyproject_errors(tmp_path, table, message):
    tree(tmp_path, {"m.py": CUDA, "pyproject.toml": f"[tool.flake8-torchdevice]\n{table}\n"})
    result = check(tmp_path, "m.py")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("flake8-torchdevice: error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1
    with pytest.raises(ConfigError):
        load_config(str(tmp_path))


def test_invalid_toml_and_bad_flake8_boolean(tmp_path):
    tree(tmp_path, {"m.py": CUDA, "pyproject.toml": "[tool.flake8-torchdevice\n"})
    result = check(tmp_path, "m.py")
    assert result.returncode == 2 and "pyproject.toml: not valid TOML" in result.stderr
    tree(tmp_path, {"pyproject.toml": "", "setup.cfg": "[flake8]\ntorchdevice-check-param-defaults = maybe\n"})
    result = check(tmp_path, "m.py")
    assert result.returncode == 2 and "expected true or false, got 'maybe'" in result.stderr


def test_pyproject_without_our_table_is_ignored(tmp_path):
    tree(tmp_path, {"m.py": CUDA, "pyproject.toml": "[tool.black]\nline-length = 100\n"})
    assert check(tmp_path, "m.py").stdout == f"m.py:2:19: TDV101 {MSG101}\n"


def test_flake8_select_without_tdv_warns(tmp_path):
    tree(tmp_path, {"m.py": CUDA, "broken.py": "x = (\n", "setup.cfg": "[flake8]\nselect = E,F,W\n"})
    ours, theirs = check(tmp_path, "m.py", "broken.py"), run_module("flake8", ["m.py", "broken.py"], str(tmp_path))
    # as flake8: no TDV rule runs, E999 still does
    assert ours.stdout == theirs.stdout == "broken.py:1:6: E999 SyntaxError: '(' was never closed\n"
    assert "select = E,F,W" in ours.stderr and "turns every TDV rule off; add TDV to it" in ours.stderr


# --------------------------------------------------------------- unknown codes


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select", "--extend-ignore"])
@pytest.mark.parametrize("code", ["XYZ", "TDV7", "TDV1011", "F401"])
def test_unknown_codes_exit_two(tmp_path, option, code):
    tree(tmp_path, {"m.py": CUDA})
    result = check(tmp_path, f"{option}=TDV1,{code}", "m.py")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"flake8-torchdevice: error: unknown code '{code}' in {option}: ")


@pytest.mark.parametrize("select", ["TDV", "tdv1", "TDV101", "E", "E9", "E999", "TDV,E9"])
def test_known_codes_and_prefixes(tmp_path, select):
    tree(tmp_path, {"m.py": CUDA})
    assert check(tmp_path, f"--select={select}", "m.py").returncode in (0, 1)


def test_unknown_tdv_code_in_flake8_section(tmp_path):
    tree(tmp_path, {"m.py": CUDA, ".flake8": "[flake8]\nextend-ignore = E501, TDV7\n"})
    result = check(tmp_path, "m.py")
    assert result.returncode == 2 and f"unknown code 'TDV7' in extend-ignore in {tmp_path}/.flake8" in result.stderr


def test_select_e9_reports_syntax_errors_as_flake8(tmp_path):
    tree(tmp_path, {"broken.py": "x = (\n"})
    for select, expected in [("TDV", ""), ("TDV,E9", "broken.py:1:6: E999 SyntaxError: '(' was never closed\n")]:
        ours, theirs = check(tmp_path, f"--select={select}", "broken.py"), run_module(
            "flake8", [f"--select={select}", "broken.py"], str(tmp_path))
        assert ours.stdout == theirs.stdout == expected
        assert ours.returncode == theirs.returncode


# --------------------------------------------------------- reporting options


def test_version(tmp_path):
    result = run_module("flake8_torchdevice", ["--version"], cwd=str(tmp_path))
    assert result.returncode == 0 and result.stdout.startswith(f"flake8-torchdevice {__version__} (libcst ")


def test_exit_zero(tmp_path):
    tree(tmp_path, {"m.py": CUDA})
    result = check(tmp_path, "--exit-zero", "m.py")
    assert (result.returncode, result.stdout) == (0, f"m.py:2:19: TDV101 {MSG101}\n")


def test_statistics_count_show_source_as_flake8(tmp_path):
    tree(tmp_path, {"b.py": ONE_OF_EACH, "a.py": CUDA + "\ty = 1\n" + "if x:\n\tz = y.cuda()\n", "c.py": CUDA})
    args = ["--show-source", "--statistics", "--count", "c.py", "b.py", "a.py"]
    ours, theirs = check(tmp_path, *args), flake8(tmp_path, *args)
    assert ours.stdout == theirs.stdout
    assert ours.returncode == theirs.returncode == 1
    stats = [line.split()[:2] for line in ours.stdout.splitlines()[-7:-1]]
    assert stats == [["1", "E999"], ["2", "TDV101"], ["1", "TDV102"], ["1", "TDV201"], ["1", "TDV301"], ["1", "TDV401"]]
    lines = ours.stdout.splitlines()
    assert lines[-1] == "7"


def test_stdin_display_name(tmp_path):
    ours = check(tmp_path, "--stdin-display-name=train.py", "-", stdin=CUDA)
    theirs = flake8(tmp_path, "--stdin-display-name=train.py", "-", stdin=CUDA)
    assert ours.stdout == theirs.stdout == f"train.py:2:19: TDV101 {MSG101}\n"
    # the display name is what --exclude sees
    args = ["--stdin-display-name=gen/x.py", "--extend-exclude=x.py", "-"]
    assert check(tmp_path, *args, stdin=CUDA).stdout == flake8(tmp_path, *args, stdin=CUDA).stdout == ""


def test_broken_pipe_keeps_the_status(tmp_path):
    tree(tmp_path, {f"m{i:03}.py": CUDA for i in range(300)})
    shell = f"{sys.executable} -m flake8_torchdevice check . | head -1; echo status=${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", shell], cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.stdout == f"./m000.py:2:19: TDV101 {MSG101}\nstatus=1\n"
    assert done.stderr == ""


# ------------------------------------------------------------------------- -j


def test_jobs_same_output_and_order(tmp_path):
    files = {f"p{i % 5}/m{i:02}.py": (CUDA if i % 3 else LITERAL) + ("x = (\n" if i == 7 else "") for i in range(40)}
    files.update({"a.py": ONE_OF_EACH, "z/deep/b.py": ONE_OF_EACH})
    tree(tmp_path, files)
    (tmp_path / "gone.py").symlink_to(tmp_path / "missing")
    serial = check(tmp_path, "-j1", ".")
    assert serial.returncode == 1 and len(serial.stdout.splitlines()) == 40 + 10
    assert serial.stderr == "./gone.py: skipped: cannot read: No such file or directory\n"
    for jobs in ("2", "3", "auto"):
        parallel = check(tmp_path, "-j", jobs, ".")
        assert (parallel.stdout, parallel.stderr, parallel.returncode) == (
            serial.stdout, serial.stderr, serial.returncode), jobs
    assert serial.stdout == flake8(tmp_path, "-j1", ".").stdout.replace(
        "./gone.py:0:1: E902 FileNotFoundError: [Errno 2] No such file or directory: './gone.py'\n", "")


@pytest.mark.parametrize("value", ["0", "-2", "many"])
def test_jobs_invalid(tmp_path, value):
    result = check(tmp_path, "-j", value, ".")
    assert result.returncode == 2 and "expected a number of processes or auto" in result.stderr


# --------------------------------------------------------------- explain, help


@pytest.mark.parametrize("name", ["cuda-call", "CUDA-CALL", "tdv101"])
def test_explain_by_name_or_code(tmp_path, name):
    result = run_module("flake8_torchdevice", ["explain", name], cwd=str(tmp_path))
    assert result.returncode == 0 and result.stdout.startswith("# TDV101 cuda-call\n")


def test_help_matches_behaviour(tmp_path):
    result = run_module("flake8_torchdevice", ["check", "--help"], cwd=str(tmp_path))
    text = " ".join(result.stdout.split())
    guarded = [code for code in RULES_BY_CODE if code.startswith(("TDV1", "TDV3", "TDV5"))]
    assert f"not reported by {', '.join(guarded)} (guards never silence TDV2xx or TDV401)" in text
    off = [code for code, rule in RULES_BY_CODE.items() if not rule.default_enabled]
    assert ("e.g. " + ",".join(off) + " (off by default)" in text) if off else "TDV9" not in text
