"""The `flake8-torchdevice fix` command, run as users run it (a subprocess)."""

from __future__ import annotations

from conftest import run_module

LOAD = "import torch\nstate = torch.load('m.pt')\nx = torch.zeros(2).cuda()\n"
LOADED = "import torch\nstate = torch.load('m.pt', map_location=\"cpu\")\nx = torch.zeros(2).cuda()\n"


def tool(tmp_path, *args):
    return run_module("flake8_torchdevice", list(args), cwd=str(tmp_path))


def test_fix_rewrites_reports_what_is_left_and_a_second_run_changes_nothing(tmp_path):
    (tmp_path / "train.py").write_text(LOAD)
    (tmp_path / "clean.py").write_text("import torch\n")
    done = tool(tmp_path, "fix", ".")
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "train.py").read_text() == LOADED
    [left] = done.stdout.splitlines()  # the finding fix cannot repair (no device in scope)
    assert left.startswith("./train.py:3:") and " TDV101 " in left
    assert done.stderr.strip().splitlines()[-1] == "Fixed 1 finding in 1 file."
    again = tool(tmp_path, "fix", ".")
    assert again.returncode == 0 and (tmp_path / "train.py").read_text() == LOADED
    assert again.stderr.strip().splitlines()[-1] == "Fixed 0 findings in 0 files."


def test_diff_prints_and_writes_nothing(tmp_path):
    (tmp_path / "train.py").write_text(LOAD)
    done = tool(tmp_path, "fix", "--diff", "train.py")
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "train.py").read_text() == LOAD
    assert done.stdout == ("--- train.py\n+++ train.py\n@@ -1,3 +1,3 @@\n import torch\n"
                           "-state = torch.load('m.pt')\n+state = torch.load('m.pt', map_location=\"cpu\")\n"
                           " x = torch.zeros(2).cuda()\n")
    assert done.stderr.strip() == "Would fix 1 finding in 1 file."


def test_selection_from_options_and_configuration(tmp_path):
    (tmp_path / "train.py").write_text(LOAD)
    done = tool(tmp_path, "fix", "--select", "TDV1", "train.py")
    assert done.returncode == 0 and (tmp_path / "train.py").read_text() == LOAD
    (tmp_path / "setup.cfg").write_text("[flake8]\nextend-ignore = TDV301\n")
    done = tool(tmp_path, "fix", "train.py")
    assert done.returncode == 0 and (tmp_path / "train.py").read_text() == LOAD


def test_excluded_folders_are_never_rewritten(tmp_path):
    """flake8's default exclude (.git, .tox, ...) and the configured one, as in check."""
    for folder in (".tox/lib", "build", "src"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "m.py").write_text(LOAD)
    (tmp_path / "setup.cfg").write_text("[flake8]\nextend-exclude = build\n")
    done = tool(tmp_path, "fix", ".")
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "src" / "m.py").read_text() == LOADED
    assert (tmp_path / ".tox" / "lib" / "m.py").read_text() == LOAD
    assert (tmp_path / "build" / "m.py").read_text() == LOAD
    done = tool(tmp_path, "fix", "--extend-exclude", "src", "--isolated", ".")
    assert done.returncode == 1 and (tmp_path / "build" / "m.py").read_text() == LOADED


def test_broken_file_is_reported_and_untouched_the_others_fixed(tmp_path):
    (tmp_path / "a_broken.py").write_text("import torch\nstate = torch.load('m.pt'\n")
    (tmp_path / "b_train.py").write_text(LOAD)
    done = tool(tmp_path, "fix", ".")
    assert done.returncode == 1
    assert "./a_broken.py: skipped: SyntaxError" in done.stderr
    assert (tmp_path / "a_broken.py").read_text() == "import torch\nstate = torch.load('m.pt'\n"
    assert (tmp_path / "b_train.py").read_text() == LOADED


def test_usage_errors_exit_2(tmp_path):
    assert tool(tmp_path, "fix").returncode == 2
    assert tool(tmp_path, "fix", "-").returncode == 2
