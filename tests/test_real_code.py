"""Crash-free on real code: every Python file of PyTorch's installed sources (about
2,285 files, 1.2 million lines) and of timm 1.0.31 (304 files, 141,000 lines), with
the standalone command and with flake8 -j2. Every file is either linted or reported
as skipped with a reason; no traceback, no internal error, exit status 0 or 1.

Measured here (2 cores, shared with other jobs): PyTorch 68 s standalone and 212 s
with flake8 -j2 (flake8 also runs pyflakes and pycodestyle on every file); timm 13 s
for both; about 5 minutes in all.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import subprocess
import sys
import zipfile

import pytest

from flake8_torchdevice.cli import iter_python_files

pytestmark = pytest.mark.slow
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def torch_dir() -> str:
    spec = importlib.util.find_spec("torch")  # found, not imported
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    return list(spec.submodule_search_locations)[0]


def timm_dir(request) -> str:
    shared = os.path.join(ROOT, "benchmarks", ".cache", "timm-1.0.31", "timm")
    if os.path.isdir(shared):
        return shared
    cache = getattr(request.config, "cache", None)  # absent with -p no:cacheprovider
    target = str(cache.mkdir("timm-1.0.31") if cache else request.getfixturevalue("tmp_path_factory").mktemp("timm"))
    unpacked = os.path.join(target, "timm")
    if not os.path.isdir(unpacked):
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "timm==1.0.31",
                               "-d", target, "-q"], capture_output=True, text=True)
        wheels = glob.glob(os.path.join(target, "timm-*.whl"))
        if done.returncode != 0 or not wheels:
            pytest.skip(f"cannot download timm 1.0.31: {done.stderr.strip()[-200:]}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(target)
    return unpacked


@pytest.fixture(scope="module", params=["torch", "timm"])
def tree(request):
    return torch_dir() if request.param == "torch" else timm_dir(request)


def count_lines(files) -> int:
    total = 0
    for path in files:
        with open(path, "rb") as file:
            total += file.read().count(b"\n")
    return total


def test_standalone_command(tree):
    files = list(iter_python_files([tree]))
    assert len(files) > 250
    done = subprocess.run([sys.executable, "-m", "flake8_torchdevice", "check", "-v", tree],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr and ": internal error:" not in done.stderr
    *skips, summary = done.stderr.splitlines()
    for line in skips:
        assert re.fullmatch(r".+\.py: skipped: \S.*", line), line
    match = re.fullmatch(r"flake8-torchdevice: (\d+) files, (\d+) findings, (\d+) skipped, 0 internal errors",
                         summary)
    assert match and int(match.group(1)) == len(files) and int(match.group(3)) == len(skips), summary
    lines = done.stdout.splitlines()
    if lines and lines[-1].startswith("[*] "):  # the closing count of fixable findings
        assert re.fullmatch(r"\[\*\] (\d+) fixable with `flake8-torchdevice fix`", lines[-1]), lines[-1]
        assert int(lines[-1].split()[1]) == sum(" [*] " in line for line in lines[:-1])
        lines.pop()
    for line in lines:
        assert re.fullmatch(r".+\.py:\d+:\d+: (TDV\d{3}|E999)( \[\*\])? .+", line), line
    print(f"{tree}: {len(files)} files, {count_lines(files)} lines, {match.group(2)} findings, "
          f"{len(skips)} skipped")


def test_flake8(tree):
    files = list(iter_python_files([tree]))
    done = subprocess.run([sys.executable, "-m", "flake8", "--select=TDV,E999", "-j2", "--benchmark", tree],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    out = done.stdout + done.stderr
    assert "Traceback" not in out and ": internal error" not in out and "failed during execution" not in out
    match = re.search(r"^(\d+)\s+total files processed$", done.stdout, re.M)
    assert match and int(match.group(1)) == len(files), done.stdout[-500:]
    for line in done.stderr.splitlines():
        assert line.startswith("flake8-torchdevice: skipped "), line
