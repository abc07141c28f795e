"""`emulate_cuda()`: the emulated GPU for the length of a `with` block (or a process)."""

from __future__ import annotations

import threading
from typing import Any, List, Optional, Tuple

import torch

from . import backend, cuda_api, modules, serialization
from .mode import EmulationMode

_lock = threading.Lock()
_active: Optional["EmulatedCuda"] = None


class EmulatedCuda:
    """While entered, `torch.cuda` reports `devices` GPUs and CUDA tensors live on the
    emulated device. The redirection of `device="cuda"` arguments applies to the thread
    that entered it (PyTorch's function modes are per thread); `torch.cuda`'s answers and
    pinned memory apply to every thread. Sessions do not nest: entering a second one
    while one is active raises RuntimeError."""

    def __init__(self, devices: int = 1) -> None:
        if devices < 1:
            raise ValueError("devices must be at least 1")
        self.devices = devices
        self._saved: List[Tuple[Any, str, Any]] = []
        self._mode: Optional[EmulationMode] = None
        self._threads = True

    def __enter__(self) -> "EmulatedCuda":
        global _active
        with _lock:
            if _active is not None:
                raise RuntimeError("the emulated GPU is already active")
            if torch.cuda.is_available():
                # Its CUDA kernels would be replaced by the emulator's (backend.register).
                raise RuntimeError("a real CUDA GPU is visible: the emulator stands in for a GPU only where "
                                   "there is none; hide it to emulate one (CUDA_VISIBLE_DEVICES=)")
            backend.register()
            backend.state.devices, backend.state.current, backend.state.default = self.devices, 0, None
            for owner, name, value in cuda_api.patches() + serialization.patches() + modules.patches():
                self._saved.append((owner, name, owner.__dict__.get(name, _MISSING)))
                setattr(owner, name, value)
            # Autograd runs a non-CPU device's backward on a thread of that device, sized by
            # a device count that a Python-registered backend cannot report: run it all on
            # the calling thread instead (results are the same).
            self._threads = torch._C._is_multithreading_enabled()
            torch._C._set_multithreading_enabled(False)

            self._mode = EmulationMode()
            self._mode.__enter__()
            _active = self
        return self

    def __exit__(self, *exc: Any) -> None:
        global _active
        with _lock:
            if self._mode is not None:
                self._mode.__exit__(*exc)
                self._mode = None
            for owner, name, value in reversed(self._saved):
                if value is _MISSING:
                    delattr(owner, name)
                else:
                    setattr(owner, name, value)
            self._saved.clear()
            torch._C._set_multithreading_enabled(self._threads)
            backend.state.default = None
            _active = None


_MISSING = object()


def emulate_cuda(devices: int = 1) -> EmulatedCuda:
    """`with emulate_cuda(): ...` runs the block with `devices` emulated GPUs."""
    return EmulatedCuda(devices)


def active() -> bool:
    return _active is not None
