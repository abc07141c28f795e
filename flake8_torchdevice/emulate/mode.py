"""Where a program names CUDA, the emulated device answers.

A `TorchFunctionMode` sees every call of PyTorch's Python API: `device="cuda"` on a
factory, `.to("cuda:1")`, `.cuda()`, `.type(torch.cuda.FloatTensor)`, `pin_memory=True`.
It turns each into the same call on the emulated device (`emucuda`), so that the rest of
PyTorch (autograd, `Module._apply`, `_to_copy`) works as it does for a real backend.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

from .backend import BACKEND, LEGACY_TYPES, EmulatedTensor, legacy_type_name, state

_LEGACY_DTYPES = {name: dtype for dtype, name in LEGACY_TYPES.items()}  # "Float" -> torch.float32


def emulated_device(device: Any) -> Optional[torch.device]:
    """The emulated device a `device` argument names, or None when it names no GPU."""
    if isinstance(device, int) and not isinstance(device, bool):
        index = device  # a bare ordinal names the accelerator
    else:
        if isinstance(device, str):
            device = torch.device(device)
        if not isinstance(device, torch.device) or device.type != "cuda":
            return None
        index = state.current if device.index is None else device.index
    if not 0 <= index < state.devices:
        raise RuntimeError("CUDA error: invalid device ordinal")
    return torch.device(BACKEND, index)


def _device_argument(value: Any) -> Any:
    target = emulated_device(value) if isinstance(value, (str, torch.device, int)) else None
    return value if target is None else target


def _legacy_type(value: Any) -> Optional[Tuple[bool, torch.dtype]]:
    """(on CUDA, dtype) of a legacy type name or class: "torch.cuda.HalfTensor"."""
    name = value if isinstance(value, str) else getattr(value, "__module__", "") + "." + getattr(value, "__name__", "")
    for prefix, cuda in (("torch.cuda.", True), ("torch.", False)):
        rest = name[len(prefix):] if name.startswith(prefix) else None
        if rest and rest.endswith("Tensor") and rest[:-len("Tensor")] in _LEGACY_DTYPES:
            return cuda, _LEGACY_DTYPES[rest[:-len("Tensor")]]
    return None


# ---------------------------------------------------------------- special calls


def _cuda(func, args, kwargs):
    tensor, device = args[0], (args[1] if len(args) > 1 else kwargs.pop("device", None))
    return tensor.to(emulated_device("cuda" if device is None else device), **kwargs)


def _to(func, args, kwargs):
    args = (args[0],) + tuple(_device_argument(a) for a in args[1:])
    if "device" in kwargs:
        kwargs = dict(kwargs, device=_device_argument(kwargs["device"]))
    return func(*args, **kwargs)


def _type(func, args, kwargs):
    tensor = args[0]
    wanted = args[1] if len(args) > 1 else kwargs.get("dtype")
    if wanted is None:
        if isinstance(tensor, EmulatedTensor):
            return legacy_type_name(tensor.dtype, cuda=True)
        return func(*args, **kwargs)
    legacy = _legacy_type(wanted)
    if legacy is None:
        return func(*args, **kwargs)
    cuda, dtype = legacy
    target = emulated_device("cuda") if cuda else torch.device("cpu")
    if isinstance(tensor, EmulatedTensor) and cuda:
        target = torch.device(BACKEND, tensor._index)  # a dtype change stays on its device
    return tensor.to(target, dtype=dtype, non_blocking=bool(kwargs.get("non_blocking", False)))


def _pin_memory(func, args, kwargs):
    tensor = args[0]
    return tensor if isinstance(tensor, EmulatedTensor) else tensor.clone()


def _own_method(name: str):
    """Calls EmulatedTensor's own `name` (`numpy`, `tolist`) for an emulated receiver:
    the mode is handed the C function, which refuses tensor subclasses."""

    def call(func, args, kwargs):
        if isinstance(args[0], EmulatedTensor):
            return getattr(args[0], name)(*args[1:], **kwargs)
        return func(*args, **kwargs)

    return call


_original_set_default_device = torch.set_default_device
_original_get_default_device = torch.get_default_device


def set_default_device(device: Any) -> None:
    """`torch.set_default_device("cuda")`: PyTorch's own default-device mode sits below
    every other mode, so the emulator's mode adds the device to factories itself."""
    target = emulated_device(device) if device is not None else None
    state.default = None if target is None else torch.device("cuda", target.index)
    _original_set_default_device(None if target is not None else device)


def get_default_device() -> torch.device:
    return state.default if state.default is not None else _original_get_default_device()


_SPECIAL: Dict[Callable, Callable] = {
    torch.Tensor.cuda: _cuda,
    torch.Tensor.to: _to,
    torch.Tensor.type: _type,
    torch.Tensor.pin_memory: _pin_memory,
    torch.Tensor.numpy: _own_method("numpy"),
    torch.Tensor.tolist: _own_method("tolist"),
}


class EmulationMode(TorchFunctionMode):
    """Redirects CUDA device arguments of PyTorch calls to the emulated device."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        special = _SPECIAL.get(func)
        if special is not None:
            return special(func, args, kwargs)
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False
        if state.default is not None and kwargs.get("device") is None and func in _device_constructors():
            kwargs["device"] = state.default
        target = emulated_device(kwargs["device"]) if kwargs.get("device") is not None else None
        if target is None:
            return func(*args, **kwargs)
        if args and isinstance(args[0], torch.Tensor) and func.__name__.startswith("new_"):
            kwargs["device"] = target  # x.new_zeros(..., device=): C++ allocates on the device
            return func(*args, **kwargs)
        # A factory: made on the CPU, then moved, so that every factory PyTorch has works
        # without a kernel of its own for the emulated device.
        requires_grad = kwargs.pop("requires_grad", False)
        kwargs["device"] = torch.device("cpu")
        with torch.no_grad():
            result = func(*args, **kwargs)
            if isinstance(result, torch.Tensor) and not isinstance(result, EmulatedTensor):
                result = result.to(target)
        if requires_grad and isinstance(result, torch.Tensor):
            result.requires_grad_(True)
        return result
