"""TDV103's contract with PyTorch: every API the rule reports raises on CPU-only torch,
and the `torch.cuda` APIs it must never report run there (spec: TDV103 cuda-only-api).

Each call runs with CUDA hidden (`CUDA_VISIBLE_DEVICES=""`) in a child process forked
from one probe process that imported torch once, so every call starts from a torch
that has not touched CUDA and one failure cannot leak into the next call.

On a CPU build the exact exception type and message are asserted (torch 2.13.0); on a
CUDA build with the GPUs hidden PyTorch raises from its lazy CUDA initialisation
instead, so there only "raises an error that names CUDA, a GPU or a driver" is asserted.
Where the rule's own tables exist (`CUDA_ONLY_APIS`, `SAFE_CUDA_APIS`,
`LEGACY_CUDA_TYPES` in flake8_torchdevice/rules/cuda.py), every name in them must have
a probe here, so the rule can list nothing that is not shown to raise (or not to).
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

CUDA_BUILD = torch.version.cuda is not None
NOT_COMPILED = ("AssertionError", "Torch not compiled with CUDA enabled")
NO_PINNED = ("RuntimeError", "pin_memory=True requires a CUDA or other accelerator backend; "
                             "no pinned memory allocator is available on this system.")
NO_ATEN_CUDA = ("RuntimeError", "Cannot initialize CUDA without ATen_cuda library.")  # message goes on


def legacy_type_error(name):
    return ("TypeError", f"type torch.cuda.{name} not available. Torch not compiled with CUDA enabled.")


LEGACY_TYPES = ("BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor",
                "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor")

# Calls that must raise CPU-only: name -> (code as a user writes it, (type, message prefix) on a CPU build).
RAISES = {
    # The spec's list.
    "synchronize": ("torch.cuda.synchronize()", NOT_COMPILED),
    "set_device": ("torch.cuda.set_device(0)",
                   ("AttributeError", "module 'torch._C' has no attribute '_cuda_setDevice'")),
    "current_device": ("torch.cuda.current_device()", NOT_COMPILED),
    "get_device_name": ("torch.cuda.get_device_name(0)", NOT_COMPILED),
    "get_device_properties": ("torch.cuda.get_device_properties(0)", NOT_COMPILED),
    "mem_get_info": ("torch.cuda.mem_get_info()", NOT_COMPILED),
    "reset_peak_memory_stats": ("torch.cuda.reset_peak_memory_stats()",
                                ("AttributeError", "module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats'")),
    "Stream": ("stream = torch.cuda.Stream()\nwith torch.cuda.stream(stream):\n    pass",
               ("RuntimeError", "torch.cuda.Stream requires CUDA support")),
    "Event": ("start = torch.cuda.Event(enable_timing=True)\nstart.record()",
              ("RuntimeError", "Tried to instantiate dummy base class Event")),
    # Also raise, though the spec does not list them (a rule may add them).
    "get_device_capability": ("torch.cuda.get_device_capability()", NOT_COMPILED),
    "current_stream": ("torch.cuda.current_stream()", NOT_COMPILED),
    "default_stream": ("torch.cuda.default_stream()", NOT_COMPILED),
    "init": ("torch.cuda.init()", NOT_COMPILED),
    "ipc_collect": ("torch.cuda.ipc_collect()", NOT_COMPILED),
    "get_rng_state": ("torch.cuda.get_rng_state()", NOT_COMPILED),
    "initial_seed": ("torch.cuda.initial_seed()", NOT_COMPILED),
    "reset_max_memory_allocated": ("torch.cuda.reset_max_memory_allocated()",
                                   ("AttributeError", "module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats'")),
    "device": ("with torch.cuda.device(0):\n    pass", ("RuntimeError", "PyTorch was compiled without CUDA support")),
    "CUDAGraph": ("torch.cuda.CUDAGraph()", ("RuntimeError", "Tried to instantiate dummy base class CUDAGraph")),
}
# The legacy typed constructors, with a size and with data.
for _name in LEGACY_TYPES:
    RAISES[_name] = (f"torch.cuda.{_name}(2)", legacy_type_error(_name))
    RAISES[f"{_name}(data)"] = (f"torch.cuda.{_name}([1, 0])", legacy_type_error(_name))
RAISES.update({
    ".pin_memory()": ("torch.ones(2).pin_memory()",
                      ("RuntimeError", "Cannot access accelerator device when none is available.")),
    ".type(torch.cuda.FloatTensor)": ("torch.ones(2).type(torch.cuda.FloatTensor)", NO_ATEN_CUDA),
    '.type("torch.cuda.FloatTensor")': ('torch.ones(2).type("torch.cuda.FloatTensor")', NO_ATEN_CUDA),
    "set_default_tensor_type(torch.cuda.FloatTensor)": (
        "torch.set_default_tensor_type(torch.cuda.FloatTensor)", legacy_type_error("FloatTensor")),
    'set_default_tensor_type("torch.cuda.FloatTensor")': (
        'torch.set_default_tensor_type("torch.cuda.FloatTensor")', legacy_type_error("FloatTensor")),
})
# pin_memory=True in every tensor factory that takes it.
PIN_MEMORY_FACTORIES = {
    "zeros": "2", "ones": "2", "empty": "2", "full": "(2,), 1.0", "rand": "2", "randn": "2",
    "randint": "0, 5, (2,)", "randperm": "4", "arange": "4", "linspace": "0, 1, 4",
    "logspace": "0, 1, 4", "eye": "2", "tensor": "[1.0, 2.0]", "empty_strided": "(2,), (1,)",
    "zeros_like": "torch.ones(2)", "ones_like": "torch.ones(2)", "empty_like": "torch.ones(2)",
    "full_like": "torch.ones(2), 1.0", "rand_like": "torch.ones(2)", "randn_like": "torch.ones(2)",
}
for _name, _args in PIN_MEMORY_FACTORIES.items():
    RAISES[f"{_name}(pin_memory=True)"] = (f"torch.{_name}({_args}, pin_memory=True)", NO_PINNED)
RAISES["x.new_zeros(pin_memory=True)"] = ("torch.ones(2).new_zeros(3, pin_memory=True)", NO_PINNED)

# A CUDA build of PyTorch on a machine whose GPUs are hidden runs these three calls as
# no-ops (seen on torch 2.11.0+cu130, CUDA_VISIBLE_DEVICES=""): they fail on CPU builds only,
# which is what laptops and Macs install, so the rule still reports them.
RUN_ON_A_CUDA_BUILD = {"reset_peak_memory_stats", "reset_max_memory_allocated",
                       'set_default_tensor_type("torch.cuda.FloatTensor")',
                       "set_default_tensor_type(torch.cuda.FloatTensor)"}

# Calls that must run CPU-only: the rule never reports them.
RUNS = {
    "manual_seed": "torch.cuda.manual_seed(0)",
    "manual_seed_all": "torch.cuda.manual_seed_all(0)",
    "seed": "torch.cuda.seed()",
    "empty_cache": "torch.cuda.empty_cache()",
    "device_count": "n = torch.cuda.device_count()",
    "memory_allocated": "used = torch.cuda.memory_allocated()",
    "max_memory_allocated": "peak = torch.cuda.max_memory_allocated()",
    "memory_reserved": "reserved = torch.cuda.memory_reserved()",
    "max_memory_reserved": "reserved = torch.cuda.max_memory_reserved()",
    "memory_stats": "stats = torch.cuda.memory_stats()",
    "is_available": "ok = torch.cuda.is_available()",
    "is_initialized": "ok = torch.cuda.is_initialized()",
    "is_bf16_supported": "ok = torch.cuda.is_bf16_supported()",
    "get_arch_list": "arches = torch.cuda.get_arch_list()",
    "get_rng_state_all": "states = torch.cuda.get_rng_state_all()",
    "set_rng_state": "torch.cuda.set_rng_state(torch.zeros(16, dtype=torch.uint8))",
    "stream": "with torch.cuda.stream(None):\n    pass",
    # A legacy type named but not used to make a tensor.
    "FloatTensor (no call)": "Tensor = torch.cuda.FloatTensor",
    "isinstance(x, torch.cuda.FloatTensor)": "is_gpu = isinstance(torch.ones(1), torch.cuda.FloatTensor)",
    "pin_memory=False": "torch.zeros(2, pin_memory=False)",
    # DataLoader(pin_memory=True) is no factory: without an accelerator it warns and does not pin.
    "DataLoader(pin_memory=True)": textwrap.dedent("""\
        from torch.utils.data import DataLoader, TensorDataset
        loader = DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=2, pin_memory=True)
        batches = [batch for (batch,) in loader]"""),
}

PROBE = textwrap.dedent("""\
    import json, os, sys, warnings
    import torch
    warnings.simplefilter("ignore")
    results = {}
    for name, code in json.load(sys.stdin).items():
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # a fresh torch that has not touched CUDA for every call
            os.close(read)
            try:
                exec(code, {"torch": torch})
                outcome = None
            except BaseException as error:
                outcome = [type(error).__name__, str(error)]
            with os.fdopen(write, "w") as out:
                json.dump(outcome, out)
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            results[name] = json.loads(pipe.read())
        os.waitpid(pid, 0)
    json.dump(results, sys.stdout)
""")


@pytest.fixture(scope="module")
def outcomes():
    """name -> None (ran) or [exception type, message], for every call above."""
    calls = {name: code for name, (code, _) in RAISES.items()}
    calls.update({f"safe:{name}": code for name, code in RUNS.items()})
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, "-c", PROBE], input=json.dumps(calls), env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the probe forks one child per call")
@pytest.mark.parametrize("name", sorted(RAISES))
def test_cuda_only_api_raises_cpu_only(outcomes, name):
    outcome = outcomes[name]
    if CUDA_BUILD and name in RUN_ON_A_CUDA_BUILD:
        pytest.skip("a CUDA build with its GPUs hidden runs this call; CPU builds raise")
    assert outcome is not None, f"{RAISES[name][0]!r} ran without CUDA"
    kind, message = outcome
    if CUDA_BUILD:  # GPUs hidden from a CUDA build: PyTorch's lazy-init errors
        assert any(word in message for word in ("CUDA", "GPU", "NVIDIA", "driver")), outcome
    else:
        assert (kind, message[:len(RAISES[name][1][1])]) == RAISES[name][1]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the probe forks one child per call")
@pytest.mark.parametrize("name", sorted(RUNS))
def test_safe_cuda_api_runs_cpu_only(outcomes, name):
    assert outcomes[f"safe:{name}"] is None


def test_every_legacy_cuda_type_of_this_torch_is_probed():
    assert sorted(n for n in dir(torch.cuda) if n.endswith("Tensor") and n[0].isupper()) == sorted(LEGACY_TYPES)


# ---------------------------------------------------------------- the rule's own tables


def rule_table(name):
    cuda_rules = pytest.importorskip("flake8_torchdevice.rules.cuda")
    if not hasattr(cuda_rules, name):
        pytest.skip(f"rules/cuda.py has no {name} yet")
    return {entry.rsplit(".", 1)[-1] for entry in getattr(cuda_rules, name)}


SPEC_LIST = {"synchronize", "set_device", "current_device", "get_device_name", "get_device_properties",
             "mem_get_info", "reset_peak_memory_stats", "Stream", "Event"}
SPEC_SAFE = {"manual_seed", "empty_cache", "device_count", "memory_allocated"}


def test_rule_reports_every_api_the_spec_lists():
    assert SPEC_LIST <= rule_table("CUDA_ONLY_APIS")


def test_rule_reports_only_apis_shown_to_raise():
    assert rule_table("CUDA_ONLY_APIS") <= set(RAISES)


def test_rule_knows_every_legacy_cuda_type():
    assert rule_table("LEGACY_CUDA_TYPES") == set(LEGACY_TYPES)


def test_rule_safe_list_is_shown_safe_and_disjoint():
    safe = rule_table("SAFE_CUDA_APIS")
    assert SPEC_SAFE <= safe <= set(RUNS)
    assert not safe & set(RAISES)
