"""Family 1: code that hard-codes CUDA and so fails on CPU-only, MPS and XPU machines.

Code under a CUDA guard (see `Analyzer.guarded`) only runs where CUDA exists and is
never reported by this family; nor is a module that is CUDA-only on purpose
(`accelerators/cuda.py`, or one whose top raises without CUDA). TDV104 does not ask:
a device method never called is a bug on CUDA machines too.
"""

from __future__ import annotations

import re
from typing import AbstractSet, Optional

import libcst as cst

from ..analysis import (dotted_name, first_argument, is_cuda_literal, is_device_name, keyword, last_identifier,
                        method_call, positional_args, string_value)
from .base import Fix, Rule, names_read, trigger_union, with_first_argument, with_keyword

# `torch.cuda.<name>` functions and classes that raise on a build without CUDA (each one
# is shown to raise on CPU-only torch by tests/test_cuda_only_apis.py, with its error).
CUDA_ONLY_APIS = frozenset({
    "synchronize", "set_device", "current_device", "get_device_name", "get_device_properties",
    "mem_get_info", "reset_peak_memory_stats", "Stream", "Event",
    "get_device_capability", "current_stream", "default_stream", "init", "ipc_collect",
    "get_rng_state", "initial_seed", "reset_max_memory_allocated", "device", "CUDAGraph",
})
# `torch.cuda.<name>` that run without CUDA (no-ops, zeros, False): never reported.
SAFE_CUDA_APIS = frozenset({
    "manual_seed", "manual_seed_all", "seed", "empty_cache", "device_count", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats", "is_available",
    "is_initialized", "is_bf16_supported", "get_arch_list", "get_rng_state_all", "set_rng_state", "stream",
})
# The legacy typed constructors `torch.cuda.<name>`, each with its dtype.
LEGACY_CUDA_TYPES = {
    "BFloat16Tensor": "torch.bfloat16", "BoolTensor": "torch.bool", "ByteTensor": "torch.uint8",
    "CharTensor": "torch.int8", "DoubleTensor": "torch.float64", "FloatTensor": "torch.float32",
    "HalfTensor": "torch.float16", "IntTensor": "torch.int32", "LongTensor": "torch.int64",
    "ShortTensor": "torch.int16",
}
# Tensor factories that take `pin_memory=` (which raises without an accelerator when True).
PIN_MEMORY_FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
    "logspace", "eye", "tensor", "empty_strided", "zeros_like", "ones_like", "empty_like", "full_like",
    "rand_like", "randn_like",
})
PIN_MEMORY_METHODS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})


# Functions that test or skip by device rather than put anything on it.
_PREDICATE_RE = re.compile(r"_*(check|is|has|skip|assert|expect|only|require|get)", re.I)


def _asks_about_device(call: cst.Call) -> bool:
    """`check_device(t, device="cuda")`, `pg._get_backend(torch.device("cuda"))`,
    `partial(skipDeviceIf, device="cuda")`: the device is a question, not a placement."""
    name = last_identifier(call.func) or ""
    if name == "partial" and call.args:
        name = last_identifier(call.args[0].value) or ""
    return bool(_PREDICATE_RE.match(name))


class CudaCall(Rule):
    """`x.cuda()` on a tensor or module outside a CUDA guard.

    ## What it does
    Reports every `.cuda(...)` method call (on a tensor, an `nn.Module` or anything
    else) that is not inside a CUDA guard, i.e. code that can run on a machine
    without CUDA.

    ## Why is this bad
    `.cuda()` always means a CUDA device. Where there is none (a laptop, a CPU-only
    CI runner, Apple silicon, an Intel XPU) the call raises instead of running:
    `AssertionError: Torch not compiled with CUDA enabled` with a CPU-only build of
    PyTorch (`RuntimeError: Cannot access accelerator device when none is available.`
    for `.cuda(0)` with an index), or a `RuntimeError` such as `No CUDA GPUs are
    available` with a CUDA build on a machine without a usable GPU. The code can
    then only be run, tested and debugged on a CUDA machine.

    ## Example
    ```python
    model = Net().cuda()
    for batch in loader:
        batch = batch.cuda(non_blocking=True)
    ```

    ## Use instead
    Choose the device once, at run time, and move with `.to(device)`:
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
    ```

    ## When it is not reported
    Code under a CUDA guard only runs where CUDA exists. Guarded code is:
    - the body of `if`, `elif` and `while`, the true arm of `a if cond else b` and
      the right side of `cond and ...`, whose test calls `torch.cuda.is_available()`,
      compares `torch.cuda.device_count()` with a number, reads a flag whose name
      says CUDA or GPU (`use_cuda`, `args.cuda`, `self.use_gpu`, `opt.gpu_ids`; not a
      parameter `need_cuda=True` of a function that never rebinds it and whose every call
      in the file leaves it out: there it is always true, as in mmpose's `_make_input(t)`),
      tests a device (`device.type == "cuda"`, `x.device == torch.device("cuda")`,
      `str(device).startswith("cuda")`, `x.is_cuda`, `device != "cpu"`,
      `device_id is not None`), tests that a tensor is on CUDA already
      (`isinstance(x.data, torch.cuda.FloatTensor)`, `x.type() == "torch.cuda.FloatTensor"`,
      `"cuda" in x.type()`), compares with a named constant or enum member
      called `CUDA` or `cuda` (`rng_type == RNGType.CUDA`, `backend is Backend.CUDA`),
      or `and`-combines one of these;
    - a `case` of `match` on a device whose pattern names only CUDA
      (`match device.type: case "cuda":`, `case "cuda" | "cuda:0":`, `case DeviceType.CUDA:`);
    - the `else` arm of the negated tests (`if not torch.cuda.is_available(): ... else: ...`,
      `if device_type != DeviceType.CUDA: ... else: ...`);
    - the code after `if not torch.cuda.is_available():` that ends in `return`,
      `raise`, `continue`, `break`, `sys.exit()` or `pytest.skip()`, the code after
      `if x.is_cuda: ... else: raise ...` (a CUDA test whose `else` exits), and the code
      after `assert torch.cuda.is_available()`;
    - loops and comprehensions over `range(torch.cuda.device_count())`, and
      comprehensions filtered by such a test (`[x.cuda() for x in xs if use_cuda]`);
    - functions and classes decorated with
      `unittest.skipIf(not torch.cuda.is_available(), ...)`,
      `unittest.skipUnless(torch.cuda.is_available(), ...)`, the same
      `pytest.mark.skipif(...)`, or a decorator whose name says CUDA or GPU
      (`@requires_cuda`, `@gpu_only`); tests whose own name says so
      (`class TestGPUKernels`, `def test_cuda_graphs`), and a class's own
      `def cuda(self)`; a test module after such a `pytestmark = ...` or after
      `if not torch.cuda.is_available(): pytest.skip(..., allow_module_level=True)`
      (wherever it stands among the module's functions). A helper whose
      name says CUDA (`def to_cuda(x)`, `class CUDACallback`) is no guard: it is called
      from code that may run anywhere, and the `.cuda()` inside it is what fails.
      A `skipIf(*gpu_unavailable)` reads its (condition, reason) pair by its name;
    - a helper that only guarded code calls: a private function or method (`_check`),
      or any function of a test file (`test_*.py`, `*_test.py`), whose every use in the
      file is a call from guarded code or from another such helper (torchrec's tests
      skipped without a GPU, calling `self._run_case(...)`). A use that is no call
      (`map(_check, xs)`, a callback), a call from code that may run anywhere, or a
      public helper outside a test file, which other modules may call, keeps the finding;
    - all of a module that is CUDA-only on purpose, which users expect to use CUDA: a
      CUDA backend file whose path says so (`cuda.py`, `*_cuda.py`, `cuda_*.py`, or any
      file under a folder named `cuda`: `accelerators/cuda.py`, `ops/cuda/kernels.py`),
      or a module whose top, before its first function or class, stops the import
      without CUDA (`if not torch.cuda.is_available(): raise ImportError(...)`,
      `assert torch.cuda.is_available()`). A raise inside a function, or after the
      functions, does not make the module CUDA-only. Such a module still gets the
      findings that are bugs on CUDA machines too: TDV2xx (tensors on the wrong device,
      discarded moves), TDV104 and the deprecated `torch.cuda.amp` API (TDV501).

    Also not reported: `cuda(...)` called as a function of an imported module
    (`some_module.cuda(x)`). Code under `try:` whose `except` catches the failure
    *is* reported: the fallback hides the bug, it does not guard against it.

    ## Position
    The finding is at the `cuda` name (line and column), not at the start of the
    receiver: in a chain split over lines, the line with `.cuda()` is the one that is
    reported and the one a `# noqa: TDV101` goes on.

    ## Fix
    `flake8-torchdevice fix` turns `x.cuda()` into `x.to(device)`, keeping keywords
    (`x.cuda(non_blocking=True)` -> `x.to(device, non_blocking=True)`), with the
    device chosen as people fixing it by hand choose it: in `forward(self, x)` the
    input's `x.device`, in an optimizer's `for p in group["params"]:` `p.device`
    (never the device of what is being moved); in another method of a module with
    parameters `next(self.parameters()).device`; else a device variable in scope (a
    `device` variable or parameter, `self.device` set in `__init__`, a tensor
    parameter's `.device`). With none in scope, only `fix --add-device` fixes it,
    adding `device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`
    after the imports. `.cuda(1)` and `.cuda(args.gpu)` are not fixed: they pick a GPU
    that the value in scope may not be.

    ## How to silence it
    - One line: `x = x.cuda()  # noqa: TDV101`.
    - A whole project: `extend-ignore = TDV101` in the `[flake8]` section of
      `setup.cfg`, `tox.ini` or `.flake8` (the standalone command reads it too).
    - Your own guards: name your flags and decorators in
      `torchdevice-guard-names = HAS_ACCEL, requires_accelerator` (or
      `--guard-names` on the command line); code they guard is then not reported.
    """

    code = "TDV101"
    silenced_by_guards = True
    name = "cuda-call"
    message = ".cuda() hard-codes CUDA and fails without a GPU; use .to(device) with a device chosen at run time"
    triggers = r"\.cuda\b"
    trigger_words = (".cuda",)

    VALID = [
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).to(device)\n",
        "import torch\nif torch.cuda.is_available():\n    model.cuda()\n",
        "import torch\nx = x.cuda() if args.cuda else x\n",
        "import torch\ndef f(x):\n    if not torch.cuda.is_available():\n        return x\n    return x.cuda()\n",
    ]
    INVALID = [
        "import torch\nmodel = Net().cuda()  # expect: TDV101\n",
        "def f(x):\n    return x.cuda(non_blocking=True)  # expect: TDV101\n",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.guarded:
            return
        receiver = method_call(node, "cuda")
        if receiver is None:
            return
        if self.ctx.resolve(receiver) is not None:
            return  # `some_module.cuda(...)`: a function of an imported module, not a tensor
        assert isinstance(node.func, cst.Attribute)
        # At the `cuda` name: in a multi-line chain that is the line a `# noqa` goes on.
        self.report(node.func.attr, fix=self._fix(node))

    def _fix(self, call: cst.Call) -> Optional[Fix]:
        """`.cuda()` / `.cuda(non_blocking=True)` -> `.to(device, ...)`; an explicit
        index (`.cuda(1)`, `.cuda(args.gpu)`) picks a GPU the device in scope may not be."""
        if positional_args(call) or keyword(call, "device") is not None or any(a.star for a in call.args):
            return None
        assert isinstance(call.func, cst.Attribute)
        found = self.device_for_fix(call, names_read(call.func.value))  # not `x.to(x.device)`
        if found is None:
            return None
        device, added = found
        moved = call.with_changes(func=call.func.with_changes(attr=cst.Name("to")),  # type: ignore[attr-defined]
                                  args=with_first_argument(call, device))
        return Fix().replace(call, moved).needs_added_device(added)


class CudaLiteral(Rule):
    """The string `"cuda"` / `"cuda:N"` used as a device outside a CUDA guard.

    ## What it does
    Reports a CUDA device string (`"cuda"`, `"cuda:0"`, `f"cuda:{rank}"`) where it
    picks the device, outside a CUDA guard:
    - the `device=` or `map_location=` keyword of any call
      (`torch.zeros(n, device="cuda")`, `torch.load(f, map_location="cuda")`);
    - the first argument of `torch.device(...)` (also `with torch.device("cuda"):`),
      `torch.set_default_device(...)` and `torch.get_device_module(...)`;
    - the first positional argument of `.to(...)` (`x.to("cuda:0")`);
    - the root of a hard-coded device: a CUDA string bound to a device-named target
      (`device = "cuda"`, `self.device = "cuda:0"`, `DEVICE = torch.device("cuda")`),
      reported at the binding, where the fix goes; the later uses of the name are not
      literals and are not reported again;
    - the default of a command-line option for a device
      (`parser.add_argument("--device", default="cuda")`, also `dest="device"`): every
      user without a GPU gets a program that fails unless they pass the option.

    ## Why is this bad
    The program then only runs where CUDA exists. Without it, the first tensor
    placed on that device raises: `AssertionError: Torch not compiled with CUDA
    enabled` with a CPU-only build of PyTorch (a `RuntimeError` such as `No CUDA GPUs
    are available` with a CUDA build and no GPU), and `torch.load(f,
    map_location="cuda")` raises `RuntimeError: Attempting to deserialize object on a
    CUDA device but torch.cuda.is_available() is False...`.

    ## Example
    ```python
    device = torch.device("cuda")
    mask = torch.ones(n, device="cuda:0")
    state = torch.load(path, map_location="cuda")
    ```

    ## Use instead
    Choose the device at run time and pass it around:
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    mask = torch.ones(n, device=device)
    state = torch.load(path, map_location=device)
    ```

    ## When it is not reported
    - The selection idiom `torch.device("cuda" if torch.cuda.is_available() else "cpu")`.
    - Comparisons and other strings that do not pick a device:
      `device.type == "cuda"`, `x.device == torch.device("cuda")`, `print("cuda")`,
      `torch.autocast("cuda")` (the `device_type` of autocast is not a device).
    - Calls that ask about a device rather than put anything on it: functions whose
      name starts with `check`, `is`, `has`, `skip`, `assert`, `expect`, `only`,
      `require` or `get` (`check_device(t, device="cuda")`,
      `pg._get_backend(torch.device("cuda"))`, `partial(skipDeviceIf, device="cuda")`).
    - A parameter default such as `def build(device="cuda"):` or
      `device=torch.device("cuda")`; callers can pass another device. Set `torchdevice-check-param-defaults = true` (or
      `--check-param-defaults`) to report these too.
    - Code under a CUDA guard (`if torch.cuda.is_available():`, a flag named
      `use_cuda`, `if not torch.cuda.is_available(): return` before it, a
      `@requires_cuda` decorator, ...; TDV101's page lists them all), and a module that
      is CUDA-only on purpose (`accelerators/cuda.py`, or one whose top raises without
      CUDA; TDV101's page says which).

    - Class attributes (`class Config: device = "cuda"`, dataclass fields): defaults like
      parameter defaults, reported with `torchdevice-check-param-defaults`. Options for
      other things (`--gpu`), and positional arguments.

    ## Fix
    `flake8-torchdevice fix` turns the device being chosen into the selection idiom:
    `device = "cuda"`, `parser.add_argument("--device", default="cuda")`,
    `torch.device("cuda")`, `torch.set_default_device("cuda")` and
    `with torch.device("cuda"):` get `"cuda" if torch.cuda.is_available() else
    "cpu"` (with the file's torch alias and quotes). A use (`device="cuda"`,
    `.to("cuda")`) gets the device-aware value in scope, or with `fix --add-device`
    the selection it adds after the imports; `map_location="cuda"` gets that value,
    else `"cpu"`. `"cuda:1"` and `f"cuda:{rank}"` are not fixed: they name a GPU.

    ## How to silence it
    - One line: `device = torch.device("cuda")  # noqa: TDV102`.
    - A whole project: `extend-ignore = TDV102` in the `[flake8]` section.
    - Your own guards: `torchdevice-guard-names = HAS_ACCEL, requires_accelerator`
      (or `--guard-names`); code they guard is then not reported.
    """

    code = "TDV102"
    silenced_by_guards = True
    name = "cuda-literal"
    message = ('"cuda" hard-codes the device and fails without a GPU; use a device chosen at run time, '
               'e.g. torch.device("cuda" if torch.cuda.is_available() else "cpu")')
    triggers = r"""["']cuda"""
    trigger_words = ("cuda",)

    VALID = [
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
        "import torch\nif x.device.type == 'cuda':\n    pass\n",
        "import torch\ndef make(device='cuda'):\n    return torch.zeros(2, device=device)\n",
        "import torch\nif torch.cuda.is_available():\n    x = torch.zeros(2, device='cuda')\n",
    ]
    INVALID = [
        "import torch\nx = torch.zeros(2, device='cuda')  # expect: TDV102\n",
        "import torch\nx = y.to('cuda:0')  # expect: TDV102\n",
        "import torch\nwith torch.device('cuda'):  # expect: TDV102\n    pass\n",
    ]

    # Functions whose first positional argument is a device.
    DEVICE_FUNCTIONS = ("torch.device", "torch.set_default_device", "torch.get_device_module")
    DEVICE_KEYWORDS = ("device", "map_location")

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.guarded or self._in_parameter_default():
            return
        if isinstance(self.ctx.parent(), (cst.Comparison, cst.ComparisonTarget)):
            return  # `x.device == torch.device("cuda")` tests a device, it does not pick one
        if _asks_about_device(node):
            return
        argument_of = self.ctx.parent(2)  # torch.device("cuda") handed to a lookup
        if isinstance(self.ctx.parent(), cst.Arg) and isinstance(argument_of, cst.Call) and _asks_about_device(argument_of):
            return
        for name in self.DEVICE_KEYWORDS:
            arg = keyword(node, name)
            if arg is not None and is_cuda_literal(arg.value):
                self.report(arg.value, fix=self._use_fix(arg.value, _receiver_names(node),
                                                         checkpoint=name == "map_location"))
        if self.ctx.resolve(node.func) in self.DEVICE_FUNCTIONS:
            device = first_argument(node, "type")
            if device is not None and is_cuda_literal(device) and keyword(node, "device") is None:
                self.report(device, fix=self._selection_fix(device))
        elif method_call(node, "to") is not None and node.args:
            first = node.args[0]
            if first.keyword is None and first.star == "" and is_cuda_literal(first.value):
                self.report(first.value, fix=self._use_fix(first.value, _receiver_names(node)))
        self._check_option_default(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check_binding([t.target for t in node.targets], node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._check_binding([node.target], node.value)

    def _check_binding(self, targets, value: cst.BaseExpression) -> None:
        """`device = "cuda"`, `self.device = "cuda:0"`: the root of a hard-coded device."""
        if self.ctx.guarded or not is_cuda_literal(value):
            return
        if self.ctx.scope.kind == "class" and not self.options.check_param_defaults:
            return  # a class attribute (a dataclass field, a config class) is a default
        if any(is_device_name(last_identifier(t) or "") for t in targets):
            self.report(value, fix=self._selection_fix(value))

    def _check_option_default(self, call: cst.Call) -> None:
        """`parser.add_argument("--device", default="cuda")`: every user's default device."""
        default = keyword(call, "default")
        if default is None or not is_cuda_literal(default.value):
            return
        names = [string_value(arg.value) or "" for arg in positional_args(call)]
        dest = keyword(call, "dest")
        options = [n for n in names if n.startswith("-")] + ([string_value(dest.value) or ""] if dest else [])
        if any(is_device_name(name.lstrip("-").replace("-", "_")) for name in options):
            self.report(default.value, fix=self._selection_fix(default.value))

    def _use_fix(self, literal: cst.BaseExpression, avoid: AbstractSet[str] = frozenset(),
                 checkpoint: bool = False) -> Optional[Fix]:
        """`device="cuda"`, `.to("cuda")` -> the device-aware value in scope (else the one
        `--add-device` adds); `map_location="cuda"` -> that value, else `"cpu"`."""
        if string_value(literal) != "cuda":
            return None  # `"cuda:1"`, `f"cuda:{rank}"`: a chosen GPU, which the value in scope may not be
        if checkpoint:
            found = self.device_for_fix(literal, avoid, add=False)
            return Fix().replace(literal, found[0] if found else '"cpu"')
        found = self.device_for_fix(literal, avoid)
        return None if found is None else Fix().replace(literal, found[0]).needs_added_device(found[1])

    def _selection_fix(self, literal: cst.BaseExpression) -> Optional[Fix]:
        """`torch.device("cuda")` -> `torch.device("cuda" if torch.cuda.is_available() else "cpu")`:
        where the device is chosen, the selection idiom."""
        torch = self.ctx.name_for("torch")
        if string_value(literal) != "cuda" or not isinstance(literal, cst.SimpleString) or torch is None:
            return None
        quote = literal.quote
        return Fix().replace(literal, f"{literal.value} if {torch}.cuda.is_available() else {quote}cpu{quote}")

    def _in_parameter_default(self) -> bool:
        """`def f(device=torch.device("cuda"))`: a default, reported only on request."""
        return any(type(node) is cst.Param for node in self.ctx.stack)  # (isinstance of an ABC is slow)

    def visit_Param(self, node: cst.Param) -> None:
        if not self.options.check_param_defaults or self.ctx.guarded:
            return
        default = node.default
        if isinstance(default, cst.Call) and self.ctx.resolve(default.func) == "torch.device" and default.args:
            default = default.args[0].value
        if default is not None and is_cuda_literal(default) and is_device_name(node.name.value):
            self.report(default)



def _as_value(node: cst.CSTNode, parents) -> Optional[cst.CSTNode]:
    """The assignment whose value `node` is, directly or as an arm of `a if c else b`."""
    child = node
    for parent in parents:
        if isinstance(parent, cst.IfExp) and child is not parent.test:
            child = parent
            continue
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is child:
            return parent
        return None
    return None


class CudaOnlyApi(Rule):
    """A `torch.cuda` API that raises on a machine without CUDA, outside a CUDA guard.

    ## What it does
    Reports, outside a CUDA guard (however `torch.cuda` was imported):
    - calls of `torch.cuda` functions and classes that need a CUDA device:
      `synchronize`, `set_device`, `current_device`, `get_device_name`,
      `get_device_properties`, `get_device_capability`, `mem_get_info`,
      `reset_peak_memory_stats`, `reset_max_memory_allocated`, `Stream`, `Event`,
      `CUDAGraph`, `current_stream`, `default_stream`, `device` (`with
      torch.cuda.device(0):`), `init`, `ipc_collect`, `get_rng_state`, `initial_seed`;
    - the legacy typed constructors `torch.cuda.FloatTensor(...)`,
      `torch.cuda.LongTensor(...)`, ... (all ten), `x.type(torch.cuda.FloatTensor)`
      (also with the type's name as a string) and
      `torch.set_default_tensor_type(torch.cuda.FloatTensor)`;
    - a legacy CUDA type bound to a name, directly or as an arm of a conditional
      expression whose test is no guard
      (`Tensor = torch.cuda.FloatTensor if torch.cuda.is_available else torch.FloatTensor`:
      without the call the test is always true, so the type is always CUDA's);
    - `pin_memory=True` in a tensor factory (`torch.zeros`, `torch.empty`, `torch.tensor`,
      the `*_like` factories, `x.new_zeros(...)`, ...), and `x.pin_memory()` of a tensor
      (`x.pin_memory().to(device, non_blocking=True)`), outside a batch class's own
      `pin_memory` method.

    ## Why is this bad
    Each of these raises on a build of PyTorch without CUDA (measured on CPU-only
    torch 2.13): `torch.cuda.synchronize()` and `get_device_name()` raise
    `AssertionError: Torch not compiled with CUDA enabled`, `torch.cuda.set_device(0)`
    raises `AttributeError: module 'torch._C' has no attribute '_cuda_setDevice'`,
    `torch.cuda.Event()` raises `RuntimeError: Tried to instantiate dummy base class
    Event`, `torch.cuda.FloatTensor(2)` raises `TypeError: type torch.cuda.FloatTensor
    not available. Torch not compiled with CUDA enabled.`, and
    `torch.zeros(2, pin_memory=True)` raises `RuntimeError: pin_memory=True requires a
    CUDA or other accelerator backend; no pinned memory allocator is available on this
    system.`, `torch.ones(2).pin_memory()` `RuntimeError: Cannot access accelerator device
    when none is available.` With a CUDA build on a machine without a GPU they raise `RuntimeError: No
    CUDA GPUs are available` or `Found no NVIDIA driver`, except three that such a build runs
    as no-ops (seen on torch 2.11.0+cu130 with the GPUs hidden): `reset_peak_memory_stats()`,
    `reset_max_memory_allocated()` and `set_default_tensor_type(torch.cuda.FloatTensor)`
    (the type or its name). They still fail on every CPU build, which laptops and Macs run.

    ## Example
    ```python
    Tensor = torch.cuda.FloatTensor
    noise = Tensor(batch, dim).normal_()
    torch.cuda.synchronize()
    batch = torch.empty(n, 3, 224, 224, pin_memory=True)
    ```

    ## Use instead
    ```python
    noise = torch.randn(batch, dim, device=device)
    if device.type == "cuda":
        torch.cuda.synchronize()
    batch = torch.empty(n, 3, 224, 224, pin_memory=torch.cuda.is_available())
    ```

    ## When it is not reported
    - `torch.cuda` APIs that run without CUDA: `manual_seed`, `manual_seed_all`, `seed`,
      `empty_cache`, `device_count`, `memory_allocated`, `max_memory_allocated`,
      `memory_reserved`, `max_memory_reserved`, `memory_stats`, `is_available`,
      `is_initialized`, `is_bf16_supported`, `get_arch_list`, `get_rng_state_all`,
      `set_rng_state` and `with torch.cuda.stream(...)`.
    - A legacy type only named, not used to make a tensor: `isinstance(x,
      torch.cuda.FloatTensor)`, `x.type() == "torch.cuda.FloatTensor"`.
    - `pin_memory=True` given to a `DataLoader` (it warns and does not pin without an
      accelerator), `pin_memory=False`, and `pin_memory=<expression>`.
    - Code under a CUDA guard (`if torch.cuda.is_available():`, `if device.type ==
      "cuda":`, a flag named `use_cuda`, ...; TDV101's page lists them all), and a module
      that is CUDA-only on purpose (`accelerators/cuda.py`, or one whose top raises
      without CUDA; TDV101's page says which).

    ## Fix
    - `pin_memory=True` becomes `pin_memory=torch.cuda.is_available()`.
    - With a device-aware value in scope (or `fix --add-device`), a legacy constructor
      becomes a factory with the dtype and the device: `torch.cuda.FloatTensor([0.5, 1])`
      -> `torch.tensor([0.5, 1], dtype=torch.float32, device=device)`, and sizes
      (`torch.cuda.LongTensor(2, 3)`, `FloatTensor(8)`) -> `torch.empty(2, 3,
      dtype=torch.int64, device=device)`, uninitialised as before. A single argument
      that is not a literal (`FloatTensor(x)`) may be data, a size, a tensor or a NumPy
      array: not fixed.
    - `x.type(torch.cuda.FloatTensor)` -> `x.to(device, torch.float32)`.
    - Not fixed: calls of `torch.cuda.*` functions (a guard around a call changes the
      control flow: review it), `torch.set_default_tensor_type(...)` (two calls replace
      it), a type chosen by an expression.

    ## How to silence it
    - One line: `torch.cuda.synchronize()  # noqa: TDV103`.
    - A whole project: `extend-ignore = TDV103` in the `[flake8]` section.
    - Your own guards: `torchdevice-guard-names = HAS_ACCEL` (or `--guard-names`).
    """

    code = "TDV103"
    silenced_by_guards = True
    name = "cuda-only-api"
    message = "this torch.cuda API raises without CUDA; call it only under a CUDA guard (if torch.cuda.is_available():)"
    # In parts: `cuda`, in most files of a PyTorch project, guards only a pattern that
    # starts with it (found by a fast scan for the word), `init` (in comments: "weight
    # init") only `init(`; the long alternation runs only on text holding one of its
    # own, rarer words. Its lookahead lists the first letters of every alternative: `re`
    # then skips other positions at once (three times faster on real code).
    trigger_parts = (
        # `from torch.cuda import device` makes a bare `device(0)` the CUDA-only call
        (("cuda",), r"cuda(?:\.device\b|\s+import\s+\(?[\w\s,]*\bdevice\b)"),
        # `init\s*\(` without the `init` of every `__init__`
        (tuple(f"init{c}" for c in "( \t\n\r\f\v"), r"(?=i)\binit\s*\("),
        (("synchronize", "set_device", "current_device", "get_device_name", "get_device_properties",
          "get_device_capability", "mem_get_info", "reset_peak", "reset_max", "current_stream", "default_stream",
          "ipc_collect", "get_rng_state", "initial_seed", "CUDAGraph", "set_default_tensor_type", "Stream", "Event",
          "pin_memory", *(f"{kind}Tensor" for kind in ("BFloat16", "Bool", "Byte", "Char", "Double", "Float", "Half",
                                                        "Int", "Long", "Short"))),
         r"(?=[sgcmrdiCSEBFHILDp])(?:"
         r"\b(synchronize|set_device|current_device|get_device_name|get_device_properties|"
         r"get_device_capability|mem_get_info|reset_peak_memory_stats|reset_max_memory_allocated|"
         r"current_stream|default_stream|ipc_collect|get_rng_state|initial_seed|CUDAGraph|"
         r"set_default_tensor_type)\b|\b(Stream|Event)\s*\(|"
         r"\b(BFloat16|Bool|Byte|Char|Double|Float|Half|Int|Long|Short)Tensor\b|pin_memory\s*(?:=\s*True|\(\s*\)))"),
    )
    triggers, trigger_words = trigger_union(trigger_parts)

    VALID = [
        "import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n",
        "import torch\ntorch.cuda.manual_seed_all(0)\ntorch.cuda.empty_cache()\n",
        "import torch\nx = torch.zeros(2, pin_memory=torch.cuda.is_available())\n",
        "import torch\nTensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor\n",
    ]
    INVALID = [
        "import torch\ntorch.cuda.synchronize()  # expect: TDV103\n",
        "import torch\nx = torch.cuda.FloatTensor(2, 3)  # expect: TDV103\n",
        "import torch\nbatch = torch.empty(8, 3, pin_memory=True)  # expect: TDV103\n",
    ]

    def _legacy_type(self, node: cst.CSTNode) -> Optional[str]:
        """`FloatTensor` for `torch.cuda.FloatTensor` (however imported) or its name as a string."""
        if isinstance(node, cst.Attribute) and node.attr.value not in LEGACY_CUDA_TYPES:
            return None  # (cheap: asked of every attribute) `a.b` resolves to something ending in `.b`
        qualified = self.ctx.resolve(node) or string_value(node) or ""
        prefix, _, name = qualified.rpartition(".")
        return name if prefix == "torch.cuda" and name in LEGACY_CUDA_TYPES else None

    def _sets_tensor_type(self, call: cst.Call) -> bool:
        """`x.type(T)` or `torch.set_default_tensor_type(T)`: T becomes a tensor's type."""
        if self.ctx.resolve(call.func) == "torch.set_default_tensor_type":
            return True
        return method_call(call, "type") is not None and self.ctx.resolve(call.func) is None

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.guarded:
            return
        qualified = self.ctx.resolve(node.func) or ""
        prefix, _, name = qualified.rpartition(".")
        if prefix == "torch.cuda" and name in CUDA_ONLY_APIS:
            self.report(node, f"torch.cuda.{name}() raises without CUDA; call it only under a CUDA guard "
                              f'(if torch.cuda.is_available(): / if device.type == "cuda":)')
            return
        if self._sets_tensor_type(node):
            argument = first_argument(node, "dtype" if method_call(node, "type") is not None else "t")
            if argument is not None and isinstance(argument, (cst.SimpleString, cst.ConcatenatedString)):
                self._report_type_use(argument, node)  # the type by name: `.type("torch.cuda.FloatTensor")`
        pinned = method_call(node, "pin_memory")
        function = self.ctx.current_function
        # (not in a batch class's own `pin_memory()`: the DataLoader calls it only when it pins)
        if pinned is not None and not node.args and self.ctx.kinds.is_tensor(pinned) \
                and (function is None or function.name.value != "pin_memory"):
            self.report(node, ".pin_memory() raises without CUDA or another accelerator; call it only under "
                              'a CUDA guard (if device.type == "cuda":)')
        pin = keyword(node, "pin_memory")
        if pin is not None and isinstance(pin.value, cst.Name) and pin.value.value == "True":
            factory = (prefix == "torch" and name in PIN_MEMORY_FACTORIES) or (
                method_call(node, *PIN_MEMORY_METHODS) is not None and not qualified)
            if factory:
                alias = self.ctx.name_for("torch")
                fix = Fix().replace(pin.value, f"{alias}.cuda.is_available()") if alias else None
                self.report(pin, "pin_memory=True raises without CUDA or another accelerator; "
                                 "use pin_memory=torch.cuda.is_available()", fix=fix)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._check_type_reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.ctx.parent()
        if type(parent) is cst.Attribute and parent.attr is node:  # (exact class: cheap for every name)
            return  # the `FloatTensor` of `torch.cuda.FloatTensor`: its Attribute is checked
        self._check_type_reference(node)

    def _check_type_reference(self, node: cst.BaseExpression) -> None:
        if self.ctx.guarded or self._legacy_type(node) is None:
            return
        parent = self.ctx.parent()
        if isinstance(parent, cst.Call) and parent.func is node:
            name = self._legacy_type(node)
            self.report(node, f"torch.cuda.{name} only exists with CUDA; use "
                              f"torch.tensor(data, dtype={LEGACY_CUDA_TYPES[name]}, device=device) "
                              f"(or torch.empty(size, ...)) with a device chosen at run time",
                        fix=self._constructor_fix(parent, name))
        elif isinstance(parent, cst.Arg) and isinstance(self.ctx.parent(2), cst.Call):
            call = self.ctx.parent(2)
            if self._sets_tensor_type(call) and parent.value is node:
                self._report_type_use(node, call)
        elif _as_value(node, reversed(self.ctx.stack[:-1])) is not None:
            name = self._legacy_type(node)
            self.report(node, f"torch.cuda.{name} chosen without a CUDA guard fails when used; "
                              f"pick the dtype and a run-time device: torch.tensor(data, "
                              f"dtype={LEGACY_CUDA_TYPES[name]}, device=device)")

    def _dtype(self, name: str) -> Optional[str]:
        """The dtype of a legacy type, written with the file's name for torch."""
        torch = self.ctx.name_for("torch")
        return None if torch is None else torch + LEGACY_CUDA_TYPES[name][len("torch"):]

    def _constructor_fix(self, call: cst.Call, name: str) -> Optional[Fix]:
        """`torch.cuda.FloatTensor([1, 2])` -> `torch.tensor([1, 2], dtype=torch.float32,
        device=device)`; sizes (`FloatTensor(2, 3)`, `FloatTensor(4)`, `FloatTensor()`) ->
        `torch.empty(...)`, uninitialised as before. A single argument that is not a
        literal may be data or a size (or a tensor, a NumPy array): no fix."""
        dtype, found = self._dtype(name), self.device_for_fix(call)
        if dtype is None or found is None or any(arg.keyword is not None or arg.star for arg in call.args):
            return None
        args = positional_args(call)
        if len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple, cst.ListComp)):
            factory = "tensor"
        elif len(args) != 1 or isinstance(args[0].value, cst.Integer):
            factory = "empty"
        else:
            return None
        torch = self.ctx.name_for("torch")
        new = call.with_changes(func=cst.parse_expression(f"{torch}.{factory}"),
                                args=call.args if args else [cst.Arg(cst.Integer("0"))])
        new = with_keyword(with_keyword(new, "dtype", dtype), "device", found[0])
        return Fix().replace(call, new).needs_added_device(found[1])

    def _type_fix(self, call: cst.Call, name: str) -> Optional[Fix]:
        """`x.type(torch.cuda.FloatTensor)` -> `x.to(device, torch.float32)`."""
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else call.func
        dtype, found = self._dtype(name), self.device_for_fix(call, names_read(receiver))
        if dtype is None or found is None or len(call.args) != 1 or call.args[0].keyword or call.args[0].star:
            return None
        typed = call.with_changes(func=call.func.with_changes(attr=cst.Name("to")),  # type: ignore[attr-defined]
                                  args=[call.args[0].with_changes(value=cst.parse_expression(dtype))])
        return Fix().replace(call, typed.with_changes(args=with_first_argument(typed, found[0]))
                             ).needs_added_device(found[1])  # else the placeholder stays in the code

    def _report_type_use(self, argument: cst.BaseExpression, call: cst.Call) -> None:
        name = self._legacy_type(argument)
        if name is None:
            return
        dtype = LEGACY_CUDA_TYPES[name]
        if method_call(call, "type") is not None:
            self.report(argument, f".type(torch.cuda.{name}) needs CUDA; use .to(device, {dtype}) "
                                  f"with a device chosen at run time", fix=self._type_fix(call, name))
        else:
            self.report(argument, f"torch.set_default_tensor_type(torch.cuda.{name}) needs CUDA; use "
                                  f"torch.set_default_dtype({dtype}) and torch.set_default_device(device)")


# Functions that say whether a device is there: a reference without a call is always true.
DEVICE_QUERIES = frozenset({
    "torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.is_initialized",
    "torch.cuda.is_bf16_supported", "torch.backends.cudnn.is_available", "torch.backends.mps.is_available",
    "torch.backends.mps.is_built", "torch.backends.cuda.is_built", "torch.mps.is_available",
    "torch.xpu.is_available", "torch.xpu.device_count", "torch.accelerator.is_available",
    "torch.accelerator.device_count",
})
# Device methods whose reference, where a statement or return uses it, was meant as a call.
DEVICE_METHODS = ("cuda", "cpu", "to")
# Objects that hold options: `args.cuda`, `opt.cpu` are flags, not methods.
_OPTIONS_HOLDER_RE = re.compile(r"^_*(args|arguments|opts?|options|cfg|config|conf|hparams|hps|flags|"
                                r"settings|params|kwargs)$|_(args|opts?|cfg|config)$", re.I)


class UncalledDeviceMethod(Rule):
    """A device method or device query used without calling it.

    ## What it does
    Reports a reference to a device function where a call was obviously meant:
    - `torch.cuda.is_available`, `torch.cuda.device_count`,
      `torch.backends.mps.is_available`, ... without `()` used as a test (`if`, `while`,
      `assert`, `x if ... else y`, `and`/`or`/`not`), compared (`torch.cuda.device_count > 1`)
      or returned;
    - `x.cuda`, `x.cpu`, `x.to` without `()` as a statement of its own (`model.cuda`),
      assigned back to itself (`x = x.to`, `self.net = self.net.cuda`) or to a name from a
      call (`net = Net().cuda`), and `x.cuda` / `x.cpu` returned (`return net.cuda`).

    ## Why is this bad
    A function object is always true: `if torch.cuda.is_available:` takes the CUDA
    branch on every machine, so on one without CUDA the code under it fails there
    with `AssertionError: Torch not compiled with CUDA enabled`, and
    `torch.cuda.device_count > 1` raises `TypeError: '>' not supported between
    instances of 'function' and 'int'`. `return net.cuda` returns the bound method
    instead of the moved model, which fails later and far away (`AttributeError:
    'function' object has no attribute 'parameters'`); `model.cuda` alone does nothing.
    The code under such a test is no guarded code: the other rules report it.

    ## Example
    ```python
    if torch.cuda.is_available:
        model = model.cuda
    ```

    ## Use instead
    ```python
    if torch.cuda.is_available():
        model = model.cuda()
    ```

    ## When it is not reported
    - A method handed over to be called later: `map(torch.Tensor.cuda, xs)`,
      `model.apply(fn=x.cuda)`, `original = torch.cuda.is_available` (saving it before a
      patch), `torch.cuda.is_available = lambda: False`.
    - Flags that happen to be named like a method: `args.cuda`, `opt.cpu`, `cfg.to`
      (on objects named `args`, `opt`, `cfg`, `config`, `hparams`, ...), `return msg.to`.
    - Functions of imported modules (`torch.cuda`, `numba.cuda`).

    CUDA guards do not matter here, nor does a module that is CUDA-only on purpose
    (`accelerators/cuda.py`): a method never called is a bug on CUDA machines too.

    ## Fix
    `flake8-torchdevice fix` calls the query: `if torch.cuda.is_available:` becomes
    `if torch.cuda.is_available():` (the code under it is then guarded, so findings
    there may go too). `.to` / `.cuda` without `()` have no fix: which device the
    call should name is not in the code.

    ## How to silence it
    - One line: `if torch.cuda.is_available:  # noqa: TDV104`.
    - A whole project: `extend-ignore = TDV104` in the `[flake8]` section.
    """

    code = "TDV104"
    name = "uncalled-device-method"
    message = "a device method used without calling it; add the call: torch.cuda.is_available(), x.cuda(), x.to(device)"
    # `.to`, in most files, guards only the pattern that starts with it (a fast scan for `.`)
    trigger_parts = (
        (("is_available", "device_count", "is_built", "is_initialized", "is_bf16_supported"),
         r"\b(is_available|device_count|is_built|is_initialized|is_bf16_supported)\b(?!\s*\()"),
        ((".cuda", ".cpu", ".to"), r"\.(cuda|cpu|to)\b(?!\s*\()"),
    )
    triggers, trigger_words = trigger_union(trigger_parts)

    VALID = [
        "import torch\nif torch.cuda.is_available():\n    pass\n",
        "import torch\nxs = list(map(torch.Tensor.cuda, xs))\n",
        "import torch\nif args.cuda:\n    model.cuda()\n",
    ]
    INVALID = [
        "import torch\nif torch.cuda.is_available:  # expect: TDV104\n    pass\n",
        "def build(net):\n    return net.cuda  # expect: TDV104\n",
    ]

    def _query(self, node: cst.BaseExpression) -> bool:
        qualified = self.ctx.resolve(node)
        if qualified is not None:
            return qualified in DEVICE_QUERIES
        dotted = dotted_name(node) or ""  # `cuda.is_available` from an import the file does not show
        return dotted.endswith(("cuda.is_available", "cuda.device_count"))

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.ctx.parent()
        if isinstance(parent, cst.Attribute):
            return  # part of an attribute chain: the Attribute is checked
        if self.ctx.resolve(node) in DEVICE_QUERIES and self._used_as_value(node, parent):
            self.report(node, fix=Fix().replace(node, cst.Call(func=node)))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        parent = self.ctx.parent()
        if isinstance(parent, cst.Call) and parent.func is node:
            return
        if self._query(node):
            if self._used_as_value(node, parent):
                self.report(node.attr, f"{dotted_name(node) or node.attr.value} without () is always true; "
                                       f"call it: {dotted_name(node) or node.attr.value}()",
                            fix=Fix().replace(node, cst.Call(func=node)))
            return
        method = node.attr.value
        if method in DEVICE_METHODS and self._meant_as_call(node, parent):
            self.report(node.attr, f".{method} without () does not move anything; call it: .{method}(...)")

    @staticmethod
    def _used_as_value(node: cst.BaseExpression, parent: Optional[cst.CSTNode]) -> bool:
        """Used for its truth or value: a test, an operand of and/or/not, a comparison, a return."""
        if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)):
            return parent.test is node
        if isinstance(parent, cst.UnaryOperation):
            return isinstance(parent.operator, cst.Not)
        return isinstance(parent, (cst.BooleanOperation, cst.Comparison, cst.ComparisonTarget, cst.Return))

    def _meant_as_call(self, node: cst.Attribute, parent: Optional[cst.CSTNode]) -> bool:
        receiver = node.value
        if self.ctx.resolve(receiver) is not None:
            return False  # `torch.Tensor.cuda`, `numba.cuda`: a module's or class's attribute
        holder = last_identifier(receiver)
        if holder is not None and not isinstance(receiver, cst.Call) and _OPTIONS_HOLDER_RE.search(holder):
            return False  # `args.cuda`: a flag
        method = node.attr.value
        if isinstance(parent, cst.Expr):
            return True  # `model.cuda` alone does nothing
        if isinstance(parent, cst.Return):
            if method == "to":
                return False  # `return msg.to`: often an address, not the method
            if isinstance(receiver, cst.Name) and receiver.value == "self":
                current = self.ctx.current_class
                return current is not None and current.is_module
            return True
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node:
            if isinstance(receiver, cst.Call):
                return True  # `net = Net().cuda`
            targets = parent.targets if isinstance(parent, cst.Assign) else [parent]
            own = dotted_name(receiver)
            return own is not None and any(dotted_name(t.target) == own for t in targets)
        return False


def _receiver_names(call: cst.Call) -> AbstractSet[str]:
    """The names `x.to(...)` or `x.new_zeros(..., device=...)` reads in its receiver:
    their tensors' device is not the one to write there."""
    return names_read(call.func.value) if isinstance(call.func, cst.Attribute) else frozenset()


__all__ = ["CUDA_ONLY_APIS", "CudaCall", "CudaLiteral", "CudaOnlyApi", "DEVICE_QUERIES", "LEGACY_CUDA_TYPES",
           "SAFE_CUDA_APIS", "UncalledDeviceMethod"]
