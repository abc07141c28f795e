"""The runtime smoke harness: proves under real PyTorch that each rule's bug fails
and that its remedy works (specification: harness.md).

Usage::

    python -m flake8_torchdevice.harness [FIXTURES_DIR] [--json] [--timeout S] [--jobs N]
    python -m flake8_torchdevice.harness --json | python -m flake8_torchdevice.harness --readme README.md

The first form runs every fixture and prints one row per fixture and a closing
line `N passed, M failed` (exit status 1 on any failure); `--json` prints the same
results as JSON instead. The second form reads those JSON results from stdin and
rewrites the "Proof: every rule fails for real" section of README.md: the text
between `<!-- proof:start -->` and `<!-- proof:end -->` (the markers are appended
at the end of the file when missing). It refuses to write when a fixture failed.

Fixtures: `FIXTURES_DIR/<RULE>_<case>/` (default: `fixtures/` at the project root)
holds `bad.py` (the bug, findings marked `# expect: TDV101` at the end of their
lines), `good.py` (the remedy the rule's message names) and optionally
`prepare.py`, run first to write data files the programs read (a checkpoint saved
on a GPU, made with `save_as_if_on_cuda`). Each fixture runs in its own temporary
copy of the folder, so nothing is written into the project.

The device: fixtures choose their device the way user code does,
`"cuda" if torch.cuda.is_available() else "cpu"` (`TDV_HARNESS_DEVICE`, when set by hand,
overrides the choice; the harness never sets it). The harness steers them by where it
runs them: CPU-only (`CUDA_VISIBLE_DEVICES=""`), on the project's emulated GPU
(`python -m flake8_torchdevice.emulate --devices 2`, CUDA hidden too: two GPUs, because
DataParallel checks its module's device only with more than one), or on the machine's GPU.

Per fixture, the harness checks:

1. `bad.py`, run in a fresh subprocess CPU-only, fails with PyTorch's own error: the
   exception type and message of the traceback's last line match the rule's entry in
   `RULES`, and the fixture holds no `raise` or `assert` of its own. For rules whose bug
   needs a second device (`second_device`), it runs on the emulated GPU;
2. `good.py` run CPU-only exits 0;
3. the linter (`lint_path`, the same code as the CLI, `# noqa` included) reports
   exactly the marked findings (code and line) on `bad.py` and nothing on `good.py`;
4. fix: `fix --add-device` (`flake8_torchdevice.fix.fix_source`) applied to a copy of
   `bad.py` must give a program that runs as `good.py` does, and where `bad.py` failed, and
   lints clean (`fix: none` when nothing in it is fixable; `ok on the <accelerator>` when,
   CPU-only, the fixed program of a bug that fails on GPUs too meets the same error for a
   reason of its own: DDP's `device_ids` with a CPU module);
5. accelerator: the machine's GPU when PyTorch sees one, otherwise the emulated GPU.
   `good.py` and the fixed `bad.py` run there and exit 0, and for rules whose bug fails
   on a GPU (`fails_on_gpu`: families 2 and 4) `bad.py` must fail there with PyTorch's
   error. The row says where: `accelerator: emulated GPU, passed`.

A fixture whose bug cannot show on a CPU-only machine says so in bad.py's
docstring, on a line `No CPU-only failure: <reason>`. Its bad.py must then run
cleanly CPU-only (the claim is checked too), and it must fail on the accelerator (step 5).
A bug that shows only with two GPUs says so in a paragraph `Needs two GPUs: <reason>`:
on a machine with one GPU, step 5 runs that bad.py on the emulated GPU (two devices)
instead, and the row says so below it; good.py and the fixed program still run on the GPU.
`.ci/gpu-check` runs the harness on a machine with a GPU (CI has none).

Every subprocess has a timeout: one hanging fixture cannot hang the harness.
The harness imports torch only to ask whether an accelerator is present and in
the checkpoint helpers that fixtures call; the linter never imports it.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .engine import Options
from .rules import RULES_BY_CODE

DEVICE_ENV = "TDV_HARNESS_DEVICE"
# Where a program runs.
CPU_ONLY, EMULATED, GPU = "cpu-only", "emulated GPU", "GPU"
# DataParallel leaves its module where it is, and checks it, only with two GPUs or more.
EMULATED_DEVICES = 2
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FIXTURES = os.path.join(PROJECT_ROOT, "fixtures")
DEFAULT_TIMEOUT = 120.0
README_START, README_END = "<!-- proof:start -->", "<!-- proof:end -->"
README_HEADING = "## Proof: every rule fails for real"

EXPECT_RE = re.compile(r"#\s*expect:\s*(TDV\d{3}(?:\s*,\s*TDV\d{3})*)\s*$")
FIXTURE_RE = re.compile(r"^(TDV\d{3})_\w+$")
RANK_PREFIX = re.compile(r"^\[rank\d+\]: ?")


@dataclass(frozen=True)
class RuleRun:
    """What a rule's bug does at run time."""

    prevents: str  # the PyTorch error, as the README names it
    # (exception type, message regex): PyTorch's own errors for this bug.
    errors: Tuple[Tuple[str, str], ...]
    # The bug shows only where a second device exists: CPU-only, bad.py and good.py run
    # on the emulated GPU.
    second_device: bool = False
    fails_on_gpu: bool = False  # bad.py fails on an accelerator (real or emulated) too


CUDA_UNAVAILABLE = (
    ("AssertionError", r"^Torch not compiled with CUDA enabled"),  # CPU build
    ("RuntimeError", r"^No CUDA GPUs are available"),  # CUDA build, GPUs hidden
    ("RuntimeError", r"^Found no NVIDIA driver on your system"),  # CUDA build, no driver
    ("RuntimeError", r"^Cannot access accelerator device when none is available"),  # .cuda(<index>)
)
DEVICE_MISMATCH = (
    ("RuntimeError", r"^Expected all tensors to be on the same device"),
    ("RuntimeError", r"^Input type \(\S+\) and (weight|bias) type \(\S+\) should be the same"),  # convolutions
    ("RuntimeError", r"^indices should be either on cpu or on the same device as the indexed tensor"),
    # Kernels with their own check (seen on a real GPU: tests/test_emulate_conformance.py, TDV_CONFORMANCE=gpu)
    ("RuntimeError", r"^expected self and mask to be on the same device"),  # masked_fill
    ("RuntimeError", r"^expected device cuda:\d+ but got device cpu for value tensor"),  # index_put_(accumulate)
)
CUDA_ONLY_API = CUDA_UNAVAILABLE + (  # torch 2.13 CPU builds (tests/test_cuda_only_apis.py)
    ("TypeError", r"^type torch\.cuda\.\w+ not available\. Torch not compiled with CUDA enabled"),  # legacy types
    ("RuntimeError", r"^pin_memory=True requires a CUDA or other accelerator backend"),
    ("RuntimeError", r"^Tried to instantiate dummy base class Event"),  # torch.cuda.Event
    ("RuntimeError", r"^torch\.cuda\.Stream requires CUDA support"),
    ("AttributeError", r"^module 'torch\._C' has no attribute '_cuda_\w+'"),  # set_device, reset_peak_memory_stats
    ("RuntimeError", r"^Cannot initialize CUDA without ATen_cuda library"),  # .type(torch.cuda.FloatTensor)
)

RULES: Dict[str, RuleRun] = {
    "TDV101": RuleRun('AssertionError: "Torch not compiled with CUDA enabled"; .cuda(<index>): '
                      'RuntimeError: "Cannot access accelerator device when none is available" '
                      '(CUDA builds: "No CUDA GPUs are available")', CUDA_UNAVAILABLE),
    "TDV102": RuleRun('AssertionError: "Torch not compiled with CUDA enabled" '
                      '(CUDA builds: "No CUDA GPUs are available")', CUDA_UNAVAILABLE),
    "TDV103": RuleRun('AssertionError: "Torch not compiled with CUDA enabled"; legacy types: TypeError: '
                      '"type torch.cuda.FloatTensor not available"; pin_memory=True: RuntimeError: '
                      '"pin_memory=True requires a CUDA or other accelerator backend"; torch.cuda.Event: '
                      'RuntimeError: "Tried to instantiate dummy base class Event" '
                      '(CUDA builds: "No CUDA GPUs are available")', CUDA_ONLY_API),
    "TDV104": RuleRun('`if torch.cuda.is_available:` is always true: AssertionError: "Torch not compiled with '
                      'CUDA enabled" from the CUDA branch; `x = x.to`: TypeError: "linear(): argument '
                      '\'input\' (position 1) must be Tensor, not builtin_function_or_method"',
                      CUDA_UNAVAILABLE + (("TypeError", r"argument '\w+' \(position \d+\) must be Tensor, "
                                                        r"not (builtin_function_or_method|method)$"),)),
    "TDV201": RuleRun('RuntimeError: "Expected all tensors to be on the same device, but found '
                      'at least two devices, cuda:0 and cpu!"', DEVICE_MISMATCH,
                      second_device=True, fails_on_gpu=True),
    "TDV202": RuleRun('RuntimeError: "Expected all tensors to be on the same device, but found '
                      'at least two devices, cuda:0 and cpu!" (the attribute stayed on the CPU after '
                      'model.to(device))', DEVICE_MISMATCH, second_device=True, fails_on_gpu=True),
    "TDV203": RuleRun('RuntimeError: "Expected all tensors to be on the same device, but found '
                      'at least two devices, cuda:0 and cpu!" (the batch never left the CPU)',
                      DEVICE_MISMATCH, second_device=True, fails_on_gpu=True),
    "TDV301": RuleRun('RuntimeError: "Attempting to deserialize object on a CUDA device but '
                      'torch.cuda.is_available() is False"',
                      (("RuntimeError", r"^Attempting to deserialize object on a CUDA device"),)),
    "TDV401": RuleRun('ValueError: "DistributedDataParallel device_ids and output_device arguments '
                      'only work with single-device/multiple-device GPU modules or CPU modules"; '
                      'DataParallel on a GPU: RuntimeError: "module must have its parameters and buffers '
                      'on device cuda:0 (device_ids[0])"',
                      (("ValueError", r"^DistributedDataParallel device_ids and output_device arguments "
                        r"only work with single-device/multiple-device GPU modules or CPU modules"),
                       ("RuntimeError", r"^module must have its parameters and buffers on device")),  # DataParallel
                      fails_on_gpu=True),
}

# Rules of families 1-5 whose bug cannot fail on a CPU-only machine, and why.
NO_CPU_FAILURE: Dict[str, str] = {
    "TDV501": ("torch.autocast(\"cuda\"), torch.cuda.amp.autocast and GradScaler(\"cuda\") only warn "
               "and disable themselves when CUDA is unavailable (custom_fwd/custom_bwd only warn that "
               "they are deprecated): the code runs in full precision instead of failing, so only a "
               "lint rule can catch it."),
}


# ---------------------------------------------------------------- results


@dataclass
class Run:
    """One subprocess run of a fixture program."""

    status: str  # "passed", "failed", "timeout"
    returncode: Optional[int] = None
    device: str = "cpu-only"
    error_type: Optional[str] = None
    message: Optional[str] = None
    origin: Optional[str] = None  # last traceback frame: "file:line"
    tail: str = ""  # end of the output, for diagnosing failures

    @property
    def error(self) -> str:
        return f"{self.error_type}: {first_line(self.message or '')}" if self.error_type else "no exception"


@dataclass
class Result:
    name: str
    rule: str
    passed: bool = False
    bad: Optional[Run] = None
    good: Optional[Run] = None
    lint: str = "not run"
    fix: str = "none"
    # Step 5: "<where>, passed" or "<where>, failed" (where: GPU or emulated GPU).
    accelerator: str = "not run"
    # Why bad.py cannot fail CPU-only, from its docstring; None: it must fail there.
    gpu_only: Optional[str] = None
    problems: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)  # what the row cannot say, said below it

    def row(self) -> str:
        bad = self.bad
        if self.gpu_only is not None and bad is not None and bad.status == "passed":
            bad_text = "no CPU-only failure (see its docs)"
        elif bad is not None and bad.status == "failed":
            where = f" on {bad.device}" if bad.device != "cpu-only" else ""
            bad_text = f"failed{where} with {bad.error}"
        else:
            bad_text = bad.status if bad else "not run"
        return " | ".join([
            f"{'PASS' if self.passed else 'FAIL'} {self.rule} {self.name}",
            f"bad: {bad_text}",
            f"good: {self.good.status if self.good else 'not run'}",
            f"lint: {self.lint}",
            f"fix: {self.fix}",
            f"accelerator: {self.accelerator}",
        ])


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


# ---------------------------------------------------------------- helpers for fixtures


def save_as_if_on_cuda(obj: Any, path: str) -> None:
    """`torch.save(obj, path)` as a run on a GPU would have written it: every CPU
    storage is tagged `cuda:0`, so loading it on a CPU-only machine without
    `map_location` meets PyTorch's real CUDA check.

    Uses PyTorch's own tagging hook (`torch.serialization.register_package`) for the
    length of this one save."""
    import torch
    import torch.serialization as serialization

    def tag(storage: Any) -> Optional[str]:
        return "cuda:0" if storage.device.type == "cpu" else None

    def no_restore(storage: Any, location: str) -> None:
        return None

    entry = (-(2 ** 31), tag, no_restore)  # runs before every built-in tagger
    serialization.register_package(*entry)
    try:
        torch.save(obj, path)
    finally:
        serialization._package_registry.remove(entry)


def saved_locations(path: str) -> List[str]:
    """The location tags of a checkpoint's storages, read without restoring them."""
    import torch

    seen: List[str] = []

    def record(storage: Any, location: str) -> Any:
        seen.append(location)
        return storage

    torch.load(path, map_location=record, weights_only=True)
    return seen


# ---------------------------------------------------------------- running


def accelerator_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def gpu_count() -> int:
    """The machine's GPUs (asked only once a GPU is known to be there)."""
    import torch

    return torch.cuda.device_count()


def _env(hide_cuda: bool) -> Dict[str, str]:
    env = dict(os.environ)
    env.pop(DEVICE_ENV, None)  # the programs choose their device as user code does
    if hide_cuda:
        env["CUDA_VISIBLE_DEVICES"] = ""
    # Fixtures (prepare.py) and the emulator import this package even when it is not installed.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PROJECT_ROOT, env.get("PYTHONPATH")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_program(script: str, cwd: str, timeout: float, where: str = CPU_ONLY) -> Run:
    """Runs `python script` in a fresh process (its own process group, so a timeout
    kills everything it started): CPU-only (CUDA hidden), on the emulated GPU (CUDA
    hidden too) or on the machine's GPU."""
    command = [sys.executable, script]
    if where == EMULATED:
        command[1:1] = ["-m", "flake8_torchdevice.emulate", "--devices", str(EMULATED_DEVICES)]
    process = subprocess.Popen(command, cwd=cwd, env=_env(hide_cuda=where != GPU),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True, text=True, errors="replace")
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return Run("timeout", device=where, tail=f"killed after {timeout:g}s\n" + output[-2000:])
    run = Run("passed" if process.returncode == 0 else "failed", process.returncode, where,
              tail=output[-2000:])
    if process.returncode != 0:
        run.error_type, run.message, run.origin = parse_traceback(output)
    return run


def parse_traceback(output: str) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """(exception type, message, last frame) of the last traceback in `output`."""
    # torch.distributed prefixes each line of an uncaught traceback with "[rank0]: ".
    lines = [RANK_PREFIX.sub("", line) for line in output.splitlines()]
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return None, None, None
    origin = None
    index = starts[-1] + 1
    while index < len(lines) and (lines[index].startswith(" ") or not lines[index].strip()):
        frame = re.match(r'\s+File "(.*)", line (\d+)', lines[index])
        if frame:
            origin = f"{frame.group(1)}:{frame.group(2)}"
        index += 1
    if index >= len(lines):
        return None, None, origin
    match = re.match(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$", lines[index])
    if match is None:
        return None, None, origin
    message = "\n".join([match.group(2) or ""] + lines[index + 1:])
    return match.group(1), message.strip(), origin


def matches(run: Run, rule: RuleRun) -> bool:
    if run.status != "failed" or run.error_type is None:
        return False
    short_type = run.error_type.rsplit(".", 1)[-1]
    return any(short_type == kind and re.search(pattern, run.message or "")
               for kind, pattern in rule.errors)


def docstring_reason(path: str, label: str) -> Optional[str]:
    """The reason given in a program's docstring in a paragraph `<label>: <reason>`."""
    with open(path, encoding="utf-8") as handle:
        docstring = ast.get_docstring(ast.parse(handle.read(), path)) or ""
    match = re.search(rf"^{re.escape(label)}:\s*(.+?)(?:\n\s*\n|\Z)", docstring, re.M | re.S)
    return " ".join(match.group(1).split()) if match else None


def no_cpu_failure_reason(path: str) -> Optional[str]:
    """Why bad.py cannot fail CPU-only (`No CPU-only failure: <reason>` in its docstring)."""
    return docstring_reason(path, "No CPU-only failure")


def two_gpus_reason(path: str) -> Optional[str]:
    """Why bad.py fails only where two GPUs exist (`Needs two GPUs: <reason>`)."""
    return docstring_reason(path, "Needs two GPUs")


def raises_on_purpose(path: str) -> Optional[int]:
    """Line of the first `raise` or `assert` in a fixture program, if any."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Raise, ast.Assert)):
            return node.lineno
    return None


# ---------------------------------------------------------------- linting


def expected_findings(source: str) -> Counter:
    """(line, code) marked `# expect: CODE[, CODE...]` at the end of a line."""
    marks: Counter = Counter()
    for number, line in enumerate(source.splitlines(), 1):
        match = EXPECT_RE.search(line)
        if match:
            for code in match.group(1).split(","):
                marks[(number, code.strip())] += 1
    return marks


def lint_findings(path: str) -> Counter:
    from .files import lint_path  # the CLI's own path: decoding and `# noqa` included

    findings, skipped = lint_path(path, Options())
    if skipped is not None:
        raise ValueError(f"{os.path.basename(path)} was not linted: {skipped}")
    return Counter((f.line, f.code) for f in findings)


def _describe(findings: Counter) -> str:
    return ", ".join(f"{code}@{line}" for (line, code), n in sorted(findings.items()) for _ in range(n))


def check_lint(bad: str, good: str) -> List[str]:
    problems = []
    with open(bad, encoding="utf-8") as handle:
        expected = expected_findings(handle.read())
    found = lint_findings(bad)
    if not expected:
        problems.append("bad.py has no `# expect:` marks")
    if found != expected:
        if expected - found:
            problems.append(f"bad.py: linter misses {_describe(expected - found)}")
        if found - expected:
            problems.append(f"bad.py: linter reports unmarked {_describe(found - expected)}")
    extra = lint_findings(good)
    if extra:
        problems.append(f"good.py: linter reports {_describe(extra)}")
    return problems


def _autofixer():
    """The autofix entry point: fix_source(source, filename) -> FixResult."""
    try:
        from .fix import fix_source  # type: ignore[import-not-found]
    except ImportError:
        return None
    return fix_source


# ---------------------------------------------------------------- one fixture


def run_fixture(folder: str, timeout: float = DEFAULT_TIMEOUT, gpu: Optional[bool] = None) -> Result:
    """Every check of the module docstring on one fixture. `gpu`: whether a real
    accelerator runs step 5 (default: ask PyTorch); otherwise the emulated GPU does."""
    name = os.path.basename(os.path.normpath(folder))
    match = FIXTURE_RE.match(name)
    result = Result(name, match.group(1) if match else "?")
    if match is None or result.rule not in RULES:
        result.problems.append(f"folder name must be <rule>_<case> for a rule in {sorted(RULES)}")
        return result
    rule = RULES[result.rule]
    bad, good = (os.path.join(folder, f) for f in ("bad.py", "good.py"))
    for path in (bad, good):
        if not os.path.isfile(path):
            result.problems.append(f"missing {os.path.basename(path)}")
    if result.problems:
        return result
    result.gpu_only = no_cpu_failure_reason(bad)
    for path in (bad, good):
        line = raises_on_purpose(path)
        if line is not None:
            result.problems.append(f"{os.path.basename(path)}:{line} raises on purpose")

    try:
        result.problems += check_lint(bad, good)
        result.lint = "ok" if not result.problems else "mismatch"
    except (ValueError, SyntaxError, OSError) as error:
        result.lint = "error"
        result.problems.append(f"lint: {error}")

    accelerator = GPU if (accelerator_available() if gpu is None else gpu) else EMULATED
    # Step 1's machine: CPU-only, where a bug that needs a second device shows on the emulated GPU.
    first = EMULATED if rule.second_device else CPU_ONLY
    with tempfile.TemporaryDirectory(prefix=f"tdv-{name}-") as work:
        work = os.path.join(work, name)
        shutil.copytree(folder, work)
        if os.path.isfile(os.path.join(work, "prepare.py")):
            prepared = run_program("prepare.py", work, timeout)
            if prepared.status != "passed":
                result.problems.append(f"prepare.py {prepared.status}: {prepared.error}")
                return _finish(result)
        # The programs are independent: run them side by side.
        with ThreadPoolExecutor(max_workers=3) as pool:
            bad_run = pool.submit(run_program, "bad.py", work, timeout, first)
            good_run = pool.submit(run_program, "good.py", work, timeout, CPU_ONLY)
            good_there = pool.submit(run_program, "good.py", work, timeout, accelerator)
            result.bad, result.good = bad_run.result(), good_run.result()
            good_there_run = good_there.result()
        if result.bad.status == "timeout":
            result.problems.append("bad.py timed out")
        elif result.gpu_only is not None:
            if result.bad.status != "passed":
                result.problems.append(f"bad.py fails CPU-only although its docs say it cannot: {result.bad.error}")
        elif result.bad.status == "passed":
            result.problems.append("bad.py did not fail" + (f" on the {first}" if first != CPU_ONLY else ""))
        elif not matches(result.bad, rule):
            result.problems.append(f"bad.py failed, but not with PyTorch's error for {result.rule}: "
                                   f"{result.bad.error}")
        if result.good.status != "passed":
            result.problems.append(f"good.py {result.good.status}: {result.good.error}")
        fixer = _autofixer()
        if fixer is not None:
            result.fix = _check_fix(fixer, rule, bad, work, timeout, first, accelerator, result.problems)
        before = len(result.problems)
        if good_there_run.status != "passed":
            result.problems.append(f"good.py on the {accelerator} {good_there_run.status}: {good_there_run.error}")
        if rule.fails_on_gpu or result.gpu_only is not None:
            where = accelerator
            if accelerator == GPU and two_gpus_reason(bad) is not None and gpu_count() < EMULATED_DEVICES:
                # The emulator has two devices; a one-GPU machine cannot show this bug.
                where = EMULATED
                result.notes.append(f"bad.py needs two GPUs and this machine has {gpu_count()}: "
                                    f"it fails on the {EMULATED} instead")
            bad_there = result.bad if first == where else run_program("bad.py", work, timeout, where)
            if not matches(bad_there, rule):
                result.problems.append(f"bad.py on the {where} did not fail the same way: {bad_there.error}")
        result.accelerator = f"{accelerator}, {'passed' if len(result.problems) == before else 'failed'}"
    return _finish(result)


def _check_fix(fixer, rule: RuleRun, bad: str, work: str, timeout: float, first: str, accelerator: str,
               problems: List[str]) -> str:
    """`fix --add-device` applied to a copy of bad.py, run as good.py is run (and where
    bad.py failed): it must pass there and on the accelerator, and lint clean. "none"
    when nothing in bad.py is fixable."""
    with open(bad, encoding="utf-8") as handle:
        source = handle.read()
    fixed = fixer(source, bad, add_device=True).text
    if fixed == source:
        return "none"
    path = os.path.join(work, "fixed.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(fixed)
    before = len(problems)
    left = lint_findings(path)
    if left:
        problems.append(f"fixed bad.py: linter still reports {_describe(left)}")
    places = list(dict.fromkeys([CPU_ONLY, first, accelerator]))
    with ThreadPoolExecutor(max_workers=len(places)) as pool:
        runs = dict(zip(places, pool.map(lambda where: run_program("fixed.py", work, timeout, where), places)))
    cpu_only = runs[CPU_ONLY]
    if cpu_only.status != "passed" and not (rule.fails_on_gpu and matches(cpu_only, rule) and not left):
        problems.append(f"fixed bad.py {cpu_only.status}: {cpu_only.error}")
    # A bug that fails on GPUs too may leave a fixed program that meets the same error
    # CPU-only for a reason of its own (DistributedDataParallel takes device_ids only for
    # GPU modules, and the fixed program moves the module to the CPU there): the
    # accelerator proves that fix.
    for where in places[1:]:
        if runs[where].status != "passed":
            problems.append(f"fixed bad.py on the {where} {runs[where].status}: {runs[where].error}")
    if len(problems) != before:
        return "failed"
    return "ok" if cpu_only.status == "passed" else f"ok on the {accelerator}"


def _finish(result: Result) -> Result:
    result.passed = not result.problems
    return result


# ---------------------------------------------------------------- all fixtures


def fixture_folders(root: str) -> List[str]:
    return sorted(os.path.join(root, name) for name in os.listdir(root)
                  if os.path.isdir(os.path.join(root, name)) and not name.startswith((".", "_")))


def run_all(root: str, timeout: float = DEFAULT_TIMEOUT, jobs: int = 0) -> Dict[str, Any]:
    folders = fixture_folders(root)
    gpu = accelerator_available()
    jobs = jobs or max(1, min(4, (os.cpu_count() or 2) // 2))  # each fixture runs two programs at once
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(lambda folder: run_fixture(folder, timeout, gpu), folders))
    counts = Counter(r.rule for r in results)
    return {
        "torch": _torch_version(),
        "accelerator": gpu,
        "fixtures": [_as_dict(r) for r in results],
        "rules": {code: {"name": RULES_BY_CODE[code].name if code in RULES_BY_CODE else "",
                         "prevents": run.prevents, "fixtures": counts.get(code, 0)}
                  for code, run in RULES.items()},
        "no_cpu_failure": NO_CPU_FAILURE,
        "passed": sum(r.passed for r in results),
        "failed": sum(not r.passed for r in results),
    }


def _as_dict(result: Result) -> Dict[str, Any]:
    data = asdict(result)
    data["row"] = result.row()
    return data


def _torch_version() -> Optional[str]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return None


def report(data: Dict[str, Any]) -> str:
    lines = []
    for fixture in data["fixtures"]:
        lines.append(fixture["row"])
        if fixture["gpu_only"]:
            lines.append(f"    no CPU-only failure: {fixture['gpu_only']}")
        lines += [f"    {note}" for note in fixture.get("notes", ())]
        lines += [f"    {problem}" for problem in fixture["problems"]]
    for code, reason in data["no_cpu_failure"].items():
        lines.append(f"---- {code}: no CPU-only failure exists: {reason}")
    lines.append(f"{data['passed']} passed, {data['failed']} failed")
    return "\n".join(lines)


# ---------------------------------------------------------------- README section


def readme_section(data: Dict[str, Any]) -> str:
    """The proof table, from the harness's JSON results only."""
    seen: Dict[str, List[str]] = {}
    for fixture in data["fixtures"]:
        bad = fixture["bad"] or {}
        if fixture["passed"] and bad.get("error_type"):
            device = f" (on `{bad['device']}`)" if bad["device"] != "cpu-only" else ""
            text = f"`{bad['error_type']}: {_short(first_sentence(bad['message']))}`{device}"
            if text not in seen.setdefault(fixture["rule"], []):
                seen[fixture["rule"]].append(text)
    machine = "on a machine with a GPU" if data["accelerator"] else "on a CPU-only machine"
    accelerator = "the GPU" if data["accelerator"] else "the project's emulated GPU (`flake8_torchdevice.emulate`)"
    lines = [
        "Generated by `python -m flake8_torchdevice.harness --json | "
        "python -m flake8_torchdevice.harness --readme README.md`; do not edit by hand.",
        "",
        f"Each rule has fixture programs under `fixtures/` that the harness runs under real "
        f"PyTorch ({data['torch'] or 'unknown version'}, {machine}, CUDA hidden from the "
        "programs): the buggy `bad.py` fails with PyTorch's own error, the fixed `good.py` runs, "
        "and the linter reports exactly the marked lines. Bugs that need a second device fail "
        "on the emulated GPU, which computes real numbers on the CPU while PyTorch sees two "
        f"devices. Then every `good.py` and fixed `bad.py` runs on {accelerator}, and every "
        "`bad.py` of families 2 and 4 must fail there too: the last column says where each "
        "rule's fixtures were proven.",
        "",
        "| Rule | The PyTorch error it prevents | Raised in this run | Fixtures passed | Fixed automatically "
        "| Accelerator step |",
        "|---|---|---|---|---|---|",
    ]
    by_rule = Counter(f["rule"] for f in data["fixtures"] if f["passed"])
    for code, info in data["rules"].items():
        name = f" `{info['name']}`" if info["name"] else ""
        raised = "<br>".join(seen.get(code, [])) or "none"
        lines.append(f"| {code}{name} | {_cell(info['prevents'])} | {raised} | "
                     f"{by_rule.get(code, 0)} of {info['fixtures']} | {_fixed_cell(data, code)} | "
                     f"{_accelerator_cell(data, code)} |")
    gpu_only = [f for f in data["fixtures"] if f.get("gpu_only")]
    if data["no_cpu_failure"] or gpu_only:
        lines += ["", "Bugs with no CPU-only failure to show:", ""]
        lines += [f"- {code}: {reason}" for code, reason in data["no_cpu_failure"].items()]
        lines += [f"- {f['rule']}, `fixtures/{f['name']}`: {f['gpu_only']} Its `bad.py` fails on the "
                  f"accelerator instead (this run: {f.get('accelerator', 'not run')})." for f in gpu_only]
    lines += ["", f"Result: {data['passed']} passed, {data['failed']} failed."]
    return "\n".join(lines)


def _accelerator_cell(data: Dict[str, Any], code: str) -> str:
    """Where step 5 ran a rule's fixtures, and how many passed there."""
    places = Counter(f.get("accelerator", "not run").split(",")[0] for f in data["fixtures"] if f["rule"] == code)
    passed = sum(1 for f in data["fixtures"] if f["rule"] == code and f.get("accelerator", "").endswith("passed"))
    where = ", ".join(sorted(places))
    return f"{passed} of {sum(places.values())} on the {where}" if places else "none"


def _fixed_cell(data: Dict[str, Any], code: str) -> str:
    """How many of a rule's fixtures `fix` repaired, proven by running the fixed bad.py."""
    fixes = [f.get("fix", "none") for f in data["fixtures"] if f["rule"] == code]
    proven = sum(1 for fix in fixes if fix.startswith("ok"))
    unproven = sum(1 for fix in fixes if fix.startswith("unproven"))
    if not proven and not unproven:
        return "no"
    text = f"{proven} of {len(fixes)}"
    return text + (f" ({unproven} more need an accelerator to prove)" if unproven else "")


def first_sentence(text: str) -> str:
    line = first_line(text)
    end = line.find(". ")
    return line[: end + 1] if end != -1 else line


def _short(text: str, limit: int = 150) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def replace_section(readme: str, section: str) -> str:
    """README text with the part between the proof markers replaced by `section`."""
    start, end = readme.find(README_START), readme.find(README_END)
    body = f"{README_START}\n{section}\n{README_END}"
    if start == -1 or end == -1 or end < start:
        heading = "" if README_HEADING in readme else f"{README_HEADING}\n\n"
        return readme.rstrip("\n") + ("\n\n" if readme.strip() else "") + heading + body + "\n"
    return readme[:start] + body + readme[end + len(README_END):]


def write_readme(path: str, data: Dict[str, Any]) -> None:
    try:
        with open(path, encoding="utf-8") as handle:
            readme = handle.read()
    except FileNotFoundError:
        readme = ""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(replace_section(readme, readme_section(data)))


# ---------------------------------------------------------------- command line


def _torch_installed() -> bool:
    """Without importing it: the fixtures do, each in its own process."""
    import importlib.util

    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flake8_torchdevice.harness",
                                     description="Run the runtime fixtures under real PyTorch.")
    parser.add_argument("fixtures", nargs="?", default=DEFAULT_FIXTURES, help="fixtures folder")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per program run")
    parser.add_argument("--jobs", type=int, default=0, help="fixtures run at once (default: half the CPUs, up to 4)")
    parser.add_argument("--readme", metavar="PATH",
                        help="read JSON results from stdin and rewrite the proof section of PATH")
    args = parser.parse_args(argv)
    if args.readme:
        data = json.load(sys.stdin)
        if data.get("failed") or not data.get("fixtures"):
            print("not writing the README: the results hold failures or no fixtures", file=sys.stderr)
            return 1
        write_readme(args.readme, data)
        return 0
    if not os.path.isdir(args.fixtures):
        # an installed (non-editable) package has no fixtures/: they live in a checkout
        print(f"no fixtures folder: {args.fixtures}; the fixtures are in a checkout of "
              "flake8-torchdevice: python -m flake8_torchdevice.harness PATH/TO/CHECKOUT/fixtures",
              file=sys.stderr)
        return 2
    if not _torch_installed():
        print(f"the harness runs the fixtures under PyTorch, which this Python ({sys.executable}) "
              "cannot import; install the CPU build first: "
              "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu", file=sys.stderr)
        return 2
    data = run_all(args.fixtures, args.timeout, args.jobs)
    print(json.dumps(data, indent=2) if args.json else report(data))
    return 1 if data["failed"] or not data["fixtures"] else 0


if __name__ == "__main__":
    sys.exit(main())
