"""`python -m flake8_torchdevice.harness` says what is missing, once: the fixtures
folder (an installed package has none) or PyTorch."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

HIDE_TORCH = "import sys; sys.modules['torch'] = None; from flake8_torchdevice.harness import main; sys.exit(main())"


def test_no_fixtures_folder_says_how_to_point_at_a_checkout(tmp_path):
    done = subprocess.run([sys.executable, "-m", "flake8_torchdevice.harness", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"no fixtures folder: {tmp_path / 'nope'}; the fixtures are in a checkout of "
                           "flake8-torchdevice: python -m flake8_torchdevice.harness PATH/TO/CHECKOUT/fixtures\n")


def test_without_torch_one_clear_message():
    done = subprocess.run([sys.executable, "-c", HIDE_TORCH], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and "No module named" not in done.stderr
    assert done.stderr.startswith("the harness runs the fixtures under PyTorch, which this Python")
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in done.stderr
