"""The same findings in the same order on every run: whatever PYTHONHASHSEED is
(set and dict order inside the analysis must not leak out), and with flake8 -j1 or -j2."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

from conftest import unmarked

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")


def run(args, seed="0"):
    env = dict(os.environ, PYTHONHASHSEED=seed)
    done = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    return done.stdout


def test_hash_seeds_do_not_change_output():
    outputs = {seed: run(["flake8_torchdevice", "check", FIXTURES], seed) for seed in ("0", "1", "42", "12345")}
    first = outputs["0"]
    assert first.count("\n") >= len(glob.glob(os.path.join(FIXTURES, "*", "bad.py")))
    assert all(output == first for output in outputs.values())


def test_flake8_jobs_and_seeds():
    base = ["flake8", "--select=TDV", FIXTURES]
    one = sorted(run(base + ["-j1"], "0").splitlines())
    assert one and sorted(run(base + ["-j2"], "7").splitlines()) == one
    assert sorted(run(base + ["-j2"], "99").splitlines()) == one
    # flake8 sorts per file; the CLI and flake8 agree on the findings (check adds fix marks)
    cli = sorted(unmarked(run(["flake8_torchdevice", "check", FIXTURES], "3")).splitlines())
    assert cli == one


def test_in_process_repeat():
    from flake8_torchdevice.engine import lint_source

    for path in sorted(glob.glob(os.path.join(FIXTURES, "*", "*.py"))):
        with open(path, encoding="utf-8") as file:
            source = file.read()
        assert lint_source(source, path) == lint_source(source, path) == lint_source(source, path, fast=False)
