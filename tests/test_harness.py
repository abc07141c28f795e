"""The runtime harness: every fixture really fails (bad.py) and really runs (good.py)
under PyTorch, and the harness itself notices broken fixtures."""

import io
import json
import os
import re
import subprocess
import sys
import textwrap
from collections import Counter
from types import SimpleNamespace

import pytest

from flake8_torchdevice import harness

torch = pytest.importorskip("torch")

FIXTURES = harness.fixture_folders(harness.DEFAULT_FIXTURES)
# A CUDA build of PyTorch with its GPUs hidden (tests/conftest.py hides them) fails in its own
# words where a CPU build says "not compiled with CUDA" or "cannot access accelerator device".
NO_GPU_IN_A_CUDA_BUILD = "RuntimeError: No CUDA GPUs are available"
CUDA_BUILD = torch.version.cuda is not None
CORE_RULES = ("TDV101", "TDV102", "TDV103", "TDV104", "TDV201", "TDV202", "TDV203", "TDV301", "TDV401")


@pytest.mark.parametrize("folder", FIXTURES, ids=[os.path.basename(f) for f in FIXTURES])
def test_fixture_proves_its_rule(folder):
    result = harness.run_fixture(folder)
    assert result.passed, "\n".join([result.row()] + result.problems + [result.bad.tail if result.bad else ""])
    if result.gpu_only is None:
        assert result.bad.status == "failed" and harness.matches(result.bad, harness.RULES[result.rule])
    else:  # its bug needs an accelerator: CPU-only it runs, as its docs say
        assert result.bad.status == "passed"
    # Step 5: without a GPU, the emulated one runs every fixture.
    assert result.accelerator in ("emulated GPU, passed", "GPU, passed"), result.accelerator
    assert result.good.status == "passed"
    assert result.lint == "ok"


def test_every_core_rule_has_two_fixtures_that_fail_cpu_only():
    counts = Counter(harness.FIXTURE_RE.match(os.path.basename(f)).group(1) for f in FIXTURES
                     if harness.no_cpu_failure_reason(os.path.join(f, "bad.py")) is None)
    assert all(counts[code] >= 2 for code in CORE_RULES), counts


def test_every_fixture_folder_is_named_after_a_known_rule():
    for folder in FIXTURES:
        match = harness.FIXTURE_RE.match(os.path.basename(folder))
        assert match and match.group(1) in harness.RULES, folder


# ---------------------------------------------------------------- broken fixtures are caught


def make_fixture(root, name, bad, good="print('ok')\n"):
    folder = root / name
    folder.mkdir()
    (folder / "bad.py").write_text(textwrap.dedent(bad))
    (folder / "good.py").write_text(textwrap.dedent(good))
    return str(folder)


def test_bad_program_that_does_not_fail_is_reported(tmp_path):
    folder = make_fixture(tmp_path, "TDV101_no_failure", """\
        class Batch:
            def cuda(self):
                return self
        Batch().cuda()  # expect: TDV101
    """)
    result = harness.run_fixture(folder, timeout=60, gpu=False)
    assert not result.passed
    assert result.bad.status == "passed"
    assert "bad.py did not fail" in result.problems


def test_failure_that_is_not_pytorchs_is_reported(tmp_path):
    folder = make_fixture(tmp_path, "TDV101_name_error", """\
        model = build_model()
        model.cuda()  # expect: TDV101
    """)
    result = harness.run_fixture(folder, timeout=60, gpu=False)
    assert not result.passed
    assert (result.bad.error_type, result.lint) == ("NameError", "ok")
    assert result.problems == ["bad.py failed, but not with PyTorch's error for TDV101: "
                               "NameError: name 'build_model' is not defined"]


def test_raising_the_expected_message_on_purpose_is_reported(tmp_path):
    folder = make_fixture(tmp_path, "TDV101_fake", """\
        class Net:
            def cuda(self):
                raise AssertionError("Torch not compiled with CUDA enabled")
        Net().cuda()  # expect: TDV101
    """)
    result = harness.run_fixture(folder, timeout=60, gpu=False)
    assert not result.passed
    assert harness.matches(result.bad, harness.RULES["TDV101"])  # the message alone would pass
    assert result.problems == ["bad.py:3 raises on purpose"]


GPU_ONLY_DOC = '''"""Wraps before moving.

No CPU-only failure: DataParallel without
GPUs calls the module directly.
"""
'''


def test_gpu_only_fixture_runs_cpu_only_and_fails_on_the_emulated_gpu(tmp_path):
    folder = make_fixture(tmp_path, "TDV401_runs", GPU_ONLY_DOC + (
        "import torch\nimport torch.nn as nn\nmodel = nn.DataParallel(nn.Linear(2, 2))  # expect: TDV401\n"
        "print(model(torch.randn(3, 2)).shape)\n"))
    result = harness.run_fixture(folder, timeout=60, gpu=False)
    assert result.gpu_only == "DataParallel without GPUs calls the module directly."
    assert result.passed, result.problems
    assert result.row() == ("PASS TDV401 TDV401_runs | bad: no CPU-only failure (see its docs) | good: passed | "
                            "lint: ok | fix: none | accelerator: emulated GPU, passed")


def test_gpu_only_fixture_that_does_not_fail_on_the_emulated_gpu_is_reported(tmp_path):
    # Wrapped but never called: DataParallel checks the module's device only in forward.
    folder = make_fixture(tmp_path, "TDV401_never_called", GPU_ONLY_DOC + (
        "import torch.nn as nn\nmodel = nn.DataParallel(nn.Linear(2, 2))  # expect: TDV401\n"))
    result = harness.run_fixture(folder, timeout=60, gpu=False)
    assert not result.passed and result.accelerator == "emulated GPU, failed"
    assert result.problems == ["bad.py on the emulated GPU did not fail the same way: no exception"]


def test_gpu_only_fixture_that_fails_cpu_only_is_reported(tmp_path):
    folder = make_fixture(tmp_path, "TDV401_fails", GPU_ONLY_DOC + "model = build()\n")
    result = harness.run_fixture(folder, timeout=60, gpu=False)
    assert not result.passed
    assert ("bad.py fails CPU-only although its docs say it cannot: "
            "NameError: name 'build' is not defined") in result.problems


def test_lint_mismatch_and_failing_good_program_are_reported(tmp_path):
    folder = make_fixture(tmp_path, "TDV102_wrong_marks", """\
        import torch
        x = torch.ones(2).cuda()  # expect: TDV102
    """, good="import torch\nx = torch.ones(2).cuda()\n")
    result = harness.run_fixture(folder, timeout=60, gpu=False)
    assert result.lint == "mismatch"
    assert result.problems == [
        "bad.py: linter misses TDV102@2",
        "bad.py: linter reports unmarked TDV101@2",
        "good.py: linter reports TDV101@2",
        "good.py failed: " + (NO_GPU_IN_A_CUDA_BUILD if CUDA_BUILD
                              else "AssertionError: Torch not compiled with CUDA enabled"),
    ]


def test_a_hanging_program_times_out(tmp_path):
    folder = make_fixture(tmp_path, "TDV101_hangs", """\
        import time
        time.sleep(600)
        model.cuda()  # expect: TDV101
    """)
    result = harness.run_fixture(folder, timeout=2, gpu=False)
    assert result.bad.status == "timeout"
    assert "bad.py timed out" in result.problems and not result.passed


def test_command_reports_rows_and_exit_status(tmp_path, capsys):
    make_fixture(tmp_path, "TDV101_no_failure", "print('fine')\nx = 1  # expect: TDV101\n")
    make_fixture(tmp_path, "README_not_a_fixture", "print('x')\n")
    assert harness.main([str(tmp_path), "--timeout", "60"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith("FAIL TDV101 TDV101_no_failure | bad: passed | good: passed | lint: mismatch")
               for line in out)
    assert any(line.startswith("FAIL ? README_not_a_fixture") for line in out)
    assert out[-1] == "0 passed, 2 failed"
    assert any(line.startswith("---- TDV501: no CPU-only failure exists") for line in out)


# ---------------------------------------------------------------- pieces


def test_traceback_parsing_takes_the_last_exception():
    output = textwrap.dedent("""\
        Traceback (most recent call last):
          File "a.py", line 1, in <module>
        KeyError: 'x'

        During handling of the above exception, another exception occurred:

        [rank0]: Traceback (most recent call last):
        [rank0]:   File "bad.py", line 9, in <module>
        [rank0]:     ddp = DDP(model, device_ids=[0])
        [rank0]:   File "/torch/nn/parallel/distributed.py", line 939, in __init__
        [rank0]: ValueError: first line
        [rank0]: second line
    """)
    assert harness.parse_traceback(output) == (
        "ValueError", "first line\nsecond line", "/torch/nn/parallel/distributed.py:939")
    assert harness.parse_traceback("killed\n") == (None, None, None)
    assert harness.parse_traceback("Traceback (most recent call last):\n  File \"x\", line 2\n"
                                   "torch.OutOfMemoryError\n")[0] == "torch.OutOfMemoryError"


def test_expect_marks():
    source = "a\nx.cuda()  # expect: TDV101\ny.to('cuda')  # expect: TDV102, TDV102\n# expect: nothing\n"
    assert harness.expected_findings(source) == Counter({(2, "TDV101"): 1, (3, "TDV102"): 2})


def test_checkpoint_saved_as_if_on_cuda(tmp_path):
    path = str(tmp_path / "ckpt.pt")
    registry = list(torch.serialization._package_registry)
    harness.save_as_if_on_cuda({"w": torch.ones(3), "b": torch.zeros(2), "step": 4}, path)
    assert torch.serialization._package_registry == registry  # the hook is gone again
    assert harness.saved_locations(path) == ["cuda:0", "cuda:0"]
    assert torch.load(path, map_location="cpu")["w"].tolist() == [1.0, 1.0, 1.0]
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="^Attempting to deserialize object on a CUDA device"):
            torch.load(path)
    plain = str(tmp_path / "plain.pt")
    torch.save({"w": torch.ones(3)}, plain)
    assert harness.saved_locations(plain) == ["cpu"]


RESULTS = {
    "torch": "2.13.0+cpu", "accelerator": False, "passed": 1, "failed": 0,
    "fixtures": [{"rule": "TDV301", "passed": True, "bad": {
        "error_type": "RuntimeError", "device": "cpu-only",
        "message": "Attempting to deserialize object on a CUDA device but ...\nmore"}}],
    "rules": {"TDV301": {"name": "load-without-map-location", "prevents": "RuntimeError: a|b", "fixtures": 1}},
    "no_cpu_failure": {"TDV501": "only warns"},
}


def test_readme_section_replaces_only_between_markers(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n\n<!-- proof:start -->\nold table\n<!-- proof:end -->\n\n## After\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(RESULTS)))
    assert harness.main(["--readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("# Title\n\n<!-- proof:start -->\nGenerated by `python -m flake8_torchdevice.harness")
    assert text.endswith("<!-- proof:end -->\n\n## After\n") and "old table" not in text
    assert ("| TDV301 `load-without-map-location` | RuntimeError: a\\|b | "
            "`RuntimeError: Attempting to deserialize object on a CUDA device but ...` | 1 of 1 |") in text
    assert "- TDV501: only warns" in text


def test_readme_markers_are_appended_when_missing_and_failures_are_refused(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text("# Title\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(RESULTS)))
    assert harness.main(["--readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("# Title\n\n## Proof: every rule fails for real\n\n<!-- proof:start -->\n")
    assert text.endswith("<!-- proof:end -->\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(dict(RESULTS, failed=1))))
    assert harness.main(["--readme", str(readme)]) == 1
    assert readme.read_text() == text


@pytest.mark.parametrize("rule, error_type, message, expected", [
    ("TDV101", "AssertionError", "Torch not compiled with CUDA enabled", True),
    ("TDV101", "RuntimeError", "No CUDA GPUs are available", True),
    ("TDV101", "RuntimeError", "Cannot access accelerator device when none is available.", True),
    ("TDV101", "RuntimeError", "Torch not compiled with CUDA enabled", False),  # wrong type
    ("TDV101", "AssertionError", "CUDA is not enabled here: Torch not compiled with CUDA enabled", False),
    ("TDV201", "RuntimeError", "Expected all tensors to be on the same device, but found at least two "
                               "devices, cuda:0 and cpu!", True),
    ("TDV201", "RuntimeError", "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be "
                               "the same or input should be a MKLDNN tensor and weight is a dense tensor", True),
    # the messages of kernels with their own check, as a real GPU gave them
    ("TDV202", "RuntimeError", "expected self and mask to be on the same device, but got mask on cpu and self "
                               "on cuda:0", True),
    ("TDV201", "RuntimeError", "expected device cuda:0 but got device cpu for value tensor", True),
    # the retired `meta` stand-in's message is no GPU's
    ("TDV201", "RuntimeError", "Tensor on device cpu is not on the expected device meta!", False),
    ("TDV201", "RuntimeError", "Torch not compiled with CUDA enabled", False),  # another rule's error
    ("TDV103", "TypeError", "type torch.cuda.LongTensor not available. Torch not compiled with CUDA enabled.", True),
    ("TDV103", "RuntimeError", "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
                               "allocator is available on this system.", True),
    ("TDV103", "RuntimeError", "Tried to instantiate dummy base class Event", True),
    ("TDV103", "AttributeError", "module 'torch._C' has no attribute '_cuda_setDevice'", True),
    ("TDV103", "AttributeError", "'NoneType' object has no attribute 'synchronize'", False),
    ("TDV103", "TypeError", "type torch.FloatTensor not available", False),
    ("TDV104", "AssertionError", "Torch not compiled with CUDA enabled", True),
    ("TDV104", "TypeError", "linear(): argument 'input' (position 1) must be Tensor, not "
                            "builtin_function_or_method", True),
    ("TDV104", "TypeError", "conv2d() received an invalid combination of arguments", False),
    ("TDV202", "RuntimeError", "indices should be either on cpu or on the same device as the indexed tensor "
                               "(cpu)", True),
    ("TDV202", "RuntimeError", "Torch not compiled with CUDA enabled", False),
    ("TDV203", "RuntimeError", "Expected all tensors to be on the same device, but found at least two "
                               "devices, cuda:0 and cpu!", True),
    ("TDV203", "TypeError", "linear(): argument 'input' (position 1) must be Tensor, not "
                            "builtin_function_or_method", False),
    ("TDV401", "ValueError", "DistributedDataParallel device_ids and output_device arguments only work "
                             "with single-device/multiple-device GPU modules or CPU modules, but got ...", True),
    ("TDV401", "RuntimeError", "module must have its parameters and buffers on device cuda:0 "
                               "(device_ids[0]) but found one of them on device: cpu", True),
])
def test_pytorch_error_families(rule, error_type, message, expected):
    run = harness.Run("failed", 1, error_type=error_type, message=message)
    assert harness.matches(run, harness.RULES[rule]) is expected


def fixture(name):
    return os.path.join(harness.DEFAULT_FIXTURES, name)


def test_second_device_bugs_fail_on_the_emulated_gpu_and_not_cpu_only():
    result = harness.run_fixture(fixture("TDV201_class_weights"), gpu=False)
    assert result.passed, result.problems
    assert (result.bad.device, result.bad.error_type) == ("emulated GPU", "RuntimeError")
    assert result.bad.message.startswith("Expected all tensors to be on the same device, but found at least "
                                         "two devices, cuda:0 and cpu!")
    with_cuda_hidden = harness.run_program(os.path.join(fixture("TDV201_class_weights"), "bad.py"),
                                           fixture("TDV201_class_weights"), 60)
    assert with_cuda_hidden.status == "passed"  # the bug is invisible on a CPU-only run


def test_accelerator_step_says_when_a_bug_does_not_show_there():
    # Claiming a GPU where there is none: the "GPU" run is a plain CPU run, the bug of
    # a second device does not show there, and step 5 must say so.
    result = harness.run_fixture(fixture("TDV201_class_weights"), gpu=True)
    assert result.accelerator == "GPU, failed" and not result.passed
    assert result.problems == ["bad.py on the GPU did not fail the same way: no exception"]


def test_a_two_gpu_bug_on_a_one_gpu_machine_fails_on_the_emulated_gpu_instead(monkeypatch):
    # One "GPU" (a plain CPU run here): DataParallel would move the module itself, so
    # the fixture's `Needs two GPUs:` paragraph sends bad.py's step 5 to the emulator.
    monkeypatch.setattr(harness, "gpu_count", lambda: 1)
    result = harness.run_fixture(fixture("TDV401_data_parallel"), gpu=True)
    assert result.passed, result.problems
    assert result.accelerator == "GPU, passed"
    assert result.notes == ["bad.py needs two GPUs and this machine has 1: it fails on the emulated GPU instead"]
    monkeypatch.setattr(harness, "gpu_count", lambda: 2)
    result = harness.run_fixture(fixture("TDV401_data_parallel"), gpu=True)
    assert result.problems == ["bad.py on the GPU did not fail the same way: no exception"] and not result.notes


def test_an_autofix_is_run_and_checked(monkeypatch):
    def fix_source(source, filename, add_device=False):
        source = source.replace(".cuda(non_blocking=True)", ".to(device, non_blocking=True)")
        return SimpleNamespace(text=re.sub(r"\.cuda\(\)  # expect: TDV101", ".to(device)", source))

    monkeypatch.setattr(harness, "_autofixer", lambda: fix_source)
    result = harness.run_fixture(fixture("TDV101_tensor_cuda"), gpu=False)
    assert (result.passed, result.fix) == (True, "ok"), result.problems

    monkeypatch.setattr(harness, "_autofixer", lambda: lambda source, filename, add_device=False: SimpleNamespace(
        text=source.replace(".cuda()  # expect", ".cuda(0)  # expect")))
    result = harness.run_fixture(fixture("TDV101_tensor_cuda"), gpu=False)
    assert result.fix == "failed"
    assert result.problems[0] == "fixed bad.py: linter still reports TDV101@28, TDV101@29"
    no_device = NO_GPU_IN_A_CUDA_BUILD if CUDA_BUILD else "RuntimeError: Cannot access accelerator device"
    assert result.problems[1].startswith(f"fixed bad.py failed: {no_device}")


def test_the_real_fix_is_proven_by_running_it():
    result = harness.run_fixture(fixture("TDV301_resume_training"), gpu=False)
    assert (result.passed, result.fix) == (True, "ok"), result.problems


def test_a_fix_only_an_accelerator_can_prove_is_marked_so():
    # DDP with device_ids: the fixed program moves the module first, which is right on
    # a GPU node; CPU-only it meets DDP's refusal of device_ids for a CPU module.
    result = harness.run_fixture(fixture("TDV401_ddp_device_ids"), gpu=False)
    assert (result.passed, result.fix) == (True, "ok on the emulated GPU"), result.problems


def test_readme_table_has_the_fixed_automatically_column():
    def entry(rule, fix):
        return {"rule": rule, "fix": fix, "passed": True, "bad": None, "gpu_only": None,
                "accelerator": "emulated GPU, passed"}

    data = {"accelerator": False, "torch": "2.x", "passed": 4, "failed": 0, "no_cpu_failure": {},
            "rules": {code: {"name": "", "prevents": "x", "fixtures": 2} for code in ("TDV101", "TDV301", "TDV401")},
            "fixtures": [entry("TDV101", "none"), entry("TDV101", "none"), entry("TDV301", "ok"),
                         entry("TDV301", "ok"), entry("TDV401", "ok"),
                         entry("TDV401", "unproven CPU-only (needs an accelerator)")]}
    rows = [line for line in harness.readme_section(data).splitlines() if line.startswith("| TDV")]
    assert [row.rsplit("|", 3)[1].strip() for row in rows] == [
        "no", "2 of 2", "1 of 2 (1 more need an accelerator to prove)"]
    assert [row.rsplit("|", 2)[1].strip() for row in rows] == [
        "2 of 2 on the emulated GPU"] * 3


# ---------------------------------------------------------------- claims of NO_CPU_FAILURE

AMP_CUDA_ONLY = textwrap.dedent("""\
    import warnings
    import torch
    import torch.nn as nn
    warnings.simplefilter("always")
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = {scaler}
    with {autocast}:
        out = model(torch.randn(3, 4))
        loss = out.float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    print(out.dtype, scaler.is_enabled())
""")


@pytest.mark.parametrize("scaler, autocast", [
    ("torch.cuda.amp.GradScaler()", "torch.cuda.amp.autocast()"),
    ('torch.amp.GradScaler("cuda")', 'torch.autocast("cuda")'),
    ('torch.amp.GradScaler("cuda")', 'torch.autocast(device_type="cuda", dtype=torch.float16)'),
])
def test_cuda_amp_has_no_cpu_only_failure(scaler, autocast):
    # What NO_CPU_FAILURE says of TDV501: CPU-only, CUDA autocast and GradScaler warn and
    # switch themselves off; the step runs in full precision instead of failing.
    program = AMP_CUDA_ONLY.format(scaler=scaler, autocast=autocast)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["torch.float32", "False"]
    assert "Disabling" in done.stderr
    assert "TDV501" in harness.NO_CPU_FAILURE and "TDV501" not in harness.RULES


def test_cuda_amp_custom_fwd_has_no_cpu_only_failure():
    program = textwrap.dedent("""\
        import torch
        class Square(torch.autograd.Function):
            @staticmethod
            @torch.cuda.amp.custom_fwd(cast_inputs=torch.float16)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x
            @staticmethod
            @torch.cuda.amp.custom_bwd
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad
        x = torch.ones(3, requires_grad=True)
        Square.apply(x).sum().backward()
        print(x.grad.tolist())
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert (done.returncode, done.stdout.strip()) == (0, "[2.0, 2.0, 2.0]"), done.stderr[-2000:]
