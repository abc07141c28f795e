"""`torch.cuda` and `torch.accelerator` as a machine with the emulated GPU answers them.

Each entry of `patches()` replaces one attribute for the length of the session: the
questions a program asks (`is_available`, `device_count`, `get_device_properties`,
memory statistics) get plausible answers, the calls that only order work on a GPU
(`synchronize`, `empty_cache`, seeds, streams, events) do nothing or time on the host,
and the legacy constructors (`torch.cuda.FloatTensor(...)`) make emulated tensors.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any, List, Optional, Tuple

import torch

from .backend import LEGACY_TYPES, EmulatedTensor, state
from .mode import emulated_device, get_default_device, set_default_device

DEVICE_NAME = "Emulated CUDA device (flake8-torchdevice)"
TOTAL_MEMORY = 16 * 1024 ** 3


def _index(device: Any = None) -> int:
    """The ordinal a `device` argument of `torch.cuda` names (the current one by default)."""
    if device is None:
        return state.current
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return state.current if device.index is None else device.index


def set_device(device: Any) -> None:
    index = _index(device)
    if index < 0:
        return  # PyTorch ignores a negative ordinal
    if index >= state.devices:
        raise RuntimeError("CUDA error: invalid device ordinal")
    state.current = index


def get_device_properties(device: Any = None) -> SimpleNamespace:
    _index(device)
    return SimpleNamespace(name=DEVICE_NAME, major=8, minor=0, total_memory=TOTAL_MEMORY,
                           multi_processor_count=108, is_integrated=False, is_multi_gpu_board=False,
                           warp_size=32, L2_cache_size=40 * 1024 ** 2, gcnArchName="", uuid="emulated")


class device:
    """`with torch.cuda.device(1):` makes device 1 current for the block."""

    def __init__(self, device: Any) -> None:
        self.index = _index(device) if device is not None else -1
        self.previous = state.current

    def __enter__(self) -> "device":
        self.previous = state.current
        if self.index >= 0:
            set_device(self.index)
        return self

    def __exit__(self, *exc: Any) -> None:
        state.current = self.previous


class device_of(device):
    """`with torch.cuda.device_of(tensor):` makes the tensor's device current (RNNs do it)."""

    def __init__(self, obj: Any) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def _cudnn_accepting(is_acceptable: Any) -> Any:
    """`torch.backends.cudnn.is_acceptable` that says no for emulated tensors: cuDNN is not
    emulated, and in a CUDA build of PyTorch a yes sends RNNs to the real (absent) GPU."""
    return lambda tensor: not isinstance(tensor, EmulatedTensor) and is_acceptable(tensor)


class Stream:
    """A stream on the emulated device: work is done when it is issued."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = torch.device("cuda", _index(device))
        self.priority = priority

    def synchronize(self) -> None:
        return None

    def wait_stream(self, stream: Any) -> None:
        return None

    def wait_event(self, event: Any) -> None:
        return None

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def is_capturing(self) -> bool:
        return False  # no CUDA graphs are ever captured here

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class Event:
    """A CUDA event: `elapsed_time` measures host time between two records."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self.time: Optional[float] = None

    def record(self, stream: Any = None) -> None:
        self.time = time.perf_counter()

    def synchronize(self) -> None:
        return None

    def wait(self, stream: Any = None) -> None:
        return None

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: "Event") -> float:
        if not (self.enable_timing and end.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.time is None or end.time is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end.time - self.time) * 1000.0


def _stream(device: Any = None) -> Stream:
    return Stream(device)


class _StreamContext:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __enter__(self) -> Any:
        return self.stream

    def __exit__(self, *exc: Any) -> None:
        return None


class _LegacyType(type):
    """`torch.cuda.FloatTensor` and its kin: `isinstance` asks for an emulated tensor of the dtype."""

    def __instancecheck__(cls, value: Any) -> bool:
        return isinstance(value, EmulatedTensor) and value.dtype == cls.dtype


def _legacy_type(name: str, dtype: torch.dtype) -> type:
    """`torch.cuda.FloatTensor(2, 3)` / `torch.cuda.LongTensor([1, 2])` make emulated tensors."""

    def construct(cls, *args: Any, **kwargs: Any) -> torch.Tensor:
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0].to(dtype) if isinstance(args[0], torch.Tensor) else torch.tensor(args[0], dtype=dtype)
        else:
            data = torch.empty(*args, dtype=dtype)
        return data.to(emulated_device("cuda"))

    return _LegacyType(f"{name}Tensor", (), {"__new__": construct, "dtype": dtype, "is_cuda": True,
                                             "__module__": "torch.cuda"})


def _constant(value: Any):
    """A new function that returns `value`. Every replaced attribute gets its own
    function object: torch._dynamo maps each torch object to one rule, and refuses an
    object that stands under two names."""
    return lambda *args, **kwargs: value


_Generator = torch.Generator


class _GeneratorType(type):
    def __instancecheck__(cls, value: Any) -> bool:
        return isinstance(value, _Generator)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return issubclass(subclass, _Generator)


class Generator(metaclass=_GeneratorType):
    """`torch.Generator(device="cuda")`: emulated tensors draw from CPU generators, so a
    CUDA generator is a CPU one (its `device` says cpu)."""

    def __new__(cls, device: Any = "cpu") -> Any:  # type: ignore[misc]
        return _Generator("cpu" if emulated_device(device) is not None else device)


def _rng_state(device: Any = "cuda") -> torch.Tensor:
    _index(device)
    return torch.get_rng_state()


def patches() -> List[Tuple[Any, str, Any]]:
    """(object, attribute, replacement) for the session to apply."""
    cuda = torch.cuda
    answers = {
        "is_available": lambda: True,
        "is_initialized": lambda: True,
        "device_count": lambda: state.devices,
        "current_device": lambda: state.current,
        "set_device": set_device,
        "get_device_name": lambda device=None: get_device_properties(device).name,
        "get_device_capability": lambda device=None: (8, 0),
        "get_device_properties": get_device_properties,
        "get_arch_list": lambda: ["sm_80"],
        "is_bf16_supported": lambda including_emulation=True: True,
        "mem_get_info": lambda device=None: (TOTAL_MEMORY, TOTAL_MEMORY),
        "memory_stats": lambda device=None: {},
        "memory_summary": lambda device=None, abbreviated=False: "(emulated device: no memory statistics)",
        "device": device, "device_of": device_of,
        "Stream": Stream, "Event": Event, "stream": _StreamContext,
        "current_stream": _stream, "default_stream": _stream,
        # Optimizers ask before each step (torch 2.11 through torch.cuda; a CUDA build of
        # PyTorch would ask the CUDA runtime, which has no device here).
        "is_current_stream_capturing": lambda: False,
        # A program may save and restore the GPU's generator state with its checkpoints.
        "get_rng_state": _rng_state,
        "get_rng_state_all": lambda: [_rng_state(i) for i in range(state.devices)],
        "set_rng_state": lambda new_state, device="cuda": None,
        "set_rng_state_all": lambda new_states: None,
        "initial_seed": lambda: torch.initial_seed(),
    }
    # Memory statistics: the emulated device keeps its tensors in host memory.
    answers.update((name, _constant(0)) for name in (
        "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
        "memory_cached", "max_memory_cached"))
    # Work on a GPU is ordered by streams and seeded by its own generator: nothing to do here.
    answers.update((name, _constant(None)) for name in (
        "_lazy_init", "init", "synchronize", "empty_cache", "ipc_collect", "manual_seed", "manual_seed_all",
        "seed", "seed_all", "reset_peak_memory_stats", "reset_max_memory_allocated",
        "reset_accumulated_memory_stats", "set_per_process_memory_fraction"))
    result: List[Tuple[Any, str, Any]] = [(cuda, name, value) for name, value in answers.items()]
    result += [(cuda, f"{name}Tensor", _legacy_type(name, dtype)) for dtype, name in LEGACY_TYPES.items()]
    accelerator = torch.accelerator
    result += [
        (torch, "Generator", Generator),
        (torch, "set_default_device", set_default_device),
        (torch, "get_default_device", get_default_device),
        (accelerator, "is_available", lambda: True),
        (accelerator, "current_accelerator", lambda check_available=False: torch.device("cuda")),
        (accelerator, "device_count", lambda: state.devices),
        (accelerator, "current_device_index", lambda: state.current),
        (accelerator, "current_device_idx", lambda: state.current),
        (accelerator, "set_device_index", set_device),
        (accelerator, "set_device_idx", set_device),
        (accelerator, "synchronize", _constant(None)),
        (accelerator, "current_stream", _stream),
        (torch.cuda.graphs, "is_current_stream_capturing", lambda: False),
        (torch.backends.cudnn, "is_acceptable", _cudnn_accepting(torch.backends.cudnn.is_acceptable)),
        # Pinned host memory is plain host memory here; the DataLoader's pinning thread
        # runs outside the session's mode, so the method itself is replaced.
        (torch.Tensor, "pin_memory", lambda self, device=None: self if isinstance(self, EmulatedTensor)
         else self.clone()),
        (torch.Tensor, "is_pinned", lambda self, device=None: False),
    ]
    return result
