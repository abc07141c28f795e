"""The emulated GPU from the outside: the `emulate` command and the pytest switch, as
real subprocess runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

BUGGY = textwrap.dedent("""\
    import torch
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.Linear(4, 2).to(device)
    x = torch.randn(8, 4).to(device)
    mask = torch.ones(8, 4){fix}
    print(model(x * mask).device)
""")


# the installed script: beside this Python, else on PATH (a `pip install --target` puts it elsewhere)
CLI = (shutil.which("flake8-torchdevice", path=os.path.dirname(sys.executable))
       or shutil.which("flake8-torchdevice") or "flake8-torchdevice")


def run(*command, cwd=None):
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_buggy_script_fails_only_on_the_emulated_gpu_and_its_fix_passes_there(tmp_path):
    buggy, fixed = tmp_path / "buggy.py", tmp_path / "fixed.py"
    buggy.write_text(BUGGY.format(fix=""))
    fixed.write_text(BUGGY.format(fix=".to(device)"))
    plain = run(sys.executable, str(buggy))
    assert (plain.returncode, plain.stdout) == (0, "cpu\n")  # invisible CPU-only
    emulated = run(CLI, "emulate", str(buggy))
    assert emulated.returncode == 1
    assert emulated.stderr.splitlines()[-1] == ("RuntimeError: Expected all tensors to be on the same device, "
                                                "but found at least two devices, cuda:0 and cpu!")
    assert f'File "{buggy}", line 6' in emulated.stderr and "flake8_torchdevice" not in emulated.stderr
    done = run(sys.executable, "-m", "flake8_torchdevice.emulate", str(fixed))
    assert (done.returncode, done.stdout) == (0, "cuda:0\n"), done.stderr


# The three bugs a CPU-only test suite ships: each runs plain, fails on the emulated GPU
# with PyTorch's message, and its fix runs there (printing the device it ran on).
PROGRAMS = {
    "mask left behind by .to()": ("""\
        import torch, torch.nn as nn
        class Masked(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)
                {mask}
            def forward(self, x):
                return self.lin(x).masked_fill(self.mask, 0.0)
        device = "cuda" if torch.cuda.is_available() else "cpu"
        model = Masked().to(device)
        print(model(torch.randn(2, 4, device=device)).device)
        """, "self.mask = torch.ones(2, 4, dtype=torch.bool).triu()",
        "self.register_buffer('mask', torch.ones(2, 4, dtype=torch.bool).triu())"),
    "discarded X.to(device)": ("""\
        import torch, torch.nn as nn
        from torch.utils.data import DataLoader, TensorDataset
        device = "cuda" if torch.cuda.is_available() else "cpu"
        model = nn.Linear(3, 1).to(device)
        for X, y in DataLoader(TensorDataset(torch.randn(8, 3), torch.randn(8, 1)), batch_size=4):
            {move}
            loss = nn.functional.mse_loss(model(X), y.to(device))
        print(loss.device)
        """, "X.to(device)", "X = X.to(device)"),
    "arange without device=": ("""\
        import torch, torch.nn as nn
        class Positions(nn.Module):
            def forward(self, x):
                return x + {arange}
        device = "cuda" if torch.cuda.is_available() else "cpu"
        print(Positions().to(device)(torch.zeros(5, device=device)).device)
        """, "torch.arange(x.shape[0])", "torch.arange(x.shape[0], device=x.device)"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_cpu_invisible_bug_fails_only_on_the_emulated_gpu(tmp_path, name):
    template, bug, fix = PROGRAMS[name]
    key = template.split("{")[1].split("}")[0]
    buggy, fixed = tmp_path / "buggy.py", tmp_path / "fixed.py"
    buggy.write_text(textwrap.dedent(template).replace("{%s}" % key, bug))
    fixed.write_text(textwrap.dedent(template).replace("{%s}" % key, fix))
    plain = run(sys.executable, str(buggy))
    assert (plain.returncode, plain.stdout) == (0, "cpu\n"), plain.stderr
    emulated = run(sys.executable, "-m", "flake8_torchdevice.emulate", str(buggy))
    assert emulated.returncode == 1
    assert emulated.stderr.splitlines()[-1].startswith(
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices"), \
        emulated.stderr[-1500:]
    done = run(sys.executable, "-m", "flake8_torchdevice.emulate", str(fixed))
    assert (done.returncode, done.stdout) == (0, "cuda:0\n"), done.stderr[-1500:]


def test_emulate_passes_arguments_and_exit_status(tmp_path):
    script = tmp_path / "args.py"
    script.write_text("import sys, torch\nprint(sys.argv[1:], torch.cuda.device_count())\nsys.exit(3)\n")
    done = run(CLI, "emulate", "--devices", "2", str(script), "--epochs", "1")
    assert (done.returncode, done.stdout) == (3, "['--epochs', '1'] 2\n"), done.stderr


def test_emulate_runs_a_module(tmp_path):
    (tmp_path / "trainer.py").write_text("import torch\nprint(torch.zeros(1, device='cuda').device)\n")
    done = run(sys.executable, "-m", "flake8_torchdevice.emulate", "-m", "trainer", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "cuda:0\n"), done.stderr


TESTS = textwrap.dedent("""\
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"

    def test_mask():
        x = torch.randn(3, device=device)
        assert (x * torch.ones(3)).shape == (3,)

    def test_fixture(emulated_cuda):
        assert torch.zeros(2, device="cuda").is_cuda
""")


def test_pytest_switch_fails_the_buggy_test_only_when_given(tmp_path):
    (tmp_path / "test_model.py").write_text(TESTS)
    common = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_model.py")
    plain = run(*common, cwd=tmp_path)
    assert plain.returncode == 0 and "2 passed" in plain.stdout, plain.stdout
    emulated = run(*common, "--emulate-cuda", cwd=tmp_path)
    assert emulated.returncode == 1 and "1 failed, 1 passed" in emulated.stdout
    assert "Expected all tensors to be on the same device" in emulated.stdout


def test_pytest_switch_is_on_before_the_projects_conftest(tmp_path):
    # Projects decide at conftest import which devices to test.
    (tmp_path / "conftest.py").write_text("import torch\nDEVICES = ['cpu'] + (['cuda'] if torch.cuda.is_available() "
                                          "else [])\n")
    (tmp_path / "test_devices.py").write_text("from conftest import DEVICES\n\ndef test_devices():\n"
                                              "    assert DEVICES == ['cpu', 'cuda']\n")
    done = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--emulate-cuda", cwd=tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout


def test_emulate_leaves_the_modules_options_to_it(tmp_path):
    (tmp_path / "test_one.py").write_text("import torch\n\ndef test_cuda():\n    assert torch.cuda.is_available()\n")
    done = run(sys.executable, "-m", "flake8_torchdevice.emulate", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "test_one.py", cwd=tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


def test_pytest_plugin_is_inert_and_imports_no_torch(tmp_path):
    (tmp_path / "test_nothing.py").write_text(
        "import sys\n\ndef test_no_torch():\n    assert 'torch' not in sys.modules\n")
    done = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_nothing.py", cwd=tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout


def test_emulate_without_torch_says_so_once(tmp_path):
    done = run(sys.executable, "-c", "import sys; sys.modules['torch'] = None; "
               "from flake8_torchdevice.emulate.run import main; sys.exit(main(['x.py']))", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "cannot import; install the CPU build first: pip install torch==2.13.0" in done.stderr


def test_package_imports_without_torch():
    done = run(sys.executable, "-c", "import sys; sys.modules['torch'] = None; "
               "import flake8_torchdevice.emulate, flake8_torchdevice.emulate.pytest_plugin, flake8_torchdevice.cli")
    assert done.returncode == 0, done.stderr
