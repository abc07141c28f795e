"""Checkpoints of the emulated device are GPU checkpoints.

`torch.save` writes an emulated tensor as the CPU tensor it holds, its storage tagged
`cuda:N` as a real GPU's is: a plain CPU run then fails to load it without
`map_location`, exactly as with a checkpoint from a GPU machine. While the emulator is
active, `torch.load` restores storages tagged `cuda...` (also after `map_location`
maps them there) onto the emulated device.
"""

from __future__ import annotations

import functools
from typing import Any, Dict

import torch
import torch._utils
import torch.serialization

from .backend import EmulatedTensor, saved_storages, state

# Storages being read by the current torch.load that belong on the emulated device (and,
# in `backend.saved_storages`, those being written by the current torch.save). Both are
# cleared when the call returns: a pointer is only meaningful while its tensors are alive.
_loading: Dict[int, int] = {}


def _tag(storage: Any):
    index = saved_storages.get(storage.data_ptr()) if storage.device.type == "cpu" else None
    return None if index is None else f"cuda:{index}"


def _restore(storage: Any, location: str):
    if not location.startswith("cuda"):
        return None
    index = int(location.split(":", 1)[1]) if ":" in location else 0
    if index >= state.devices:
        raise RuntimeError(f"Attempting to deserialize object on CUDA device {index} but "
                           f"torch.cuda.device_count() is {state.devices}. Please use torch.load with "
                           "map_location to map your storages to an existing device.")
    _loading[storage.data_ptr()] = index
    return storage


_original_rebuild = torch._utils._rebuild_tensor_v2


def _rebuild_tensor_v2(storage, *args, **kwargs):
    tensor = _original_rebuild(storage, *args, **kwargs)
    index = _loading.get(tensor.untyped_storage().data_ptr()) if tensor.untyped_storage().nbytes() else None
    if index is None:
        return tensor
    with torch.no_grad():
        moved = EmulatedTensor(tensor.detach(), index)
    return moved.requires_grad_(tensor.requires_grad)


# The weights-only unpickler allows rebuild functions by their module and name.
_rebuild_tensor_v2.__module__ = _original_rebuild.__module__
_rebuild_tensor_v2.__qualname__ = _original_rebuild.__qualname__


def _clearing(registry: Dict[int, int], function):
    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        finally:
            registry.clear()

    return call


def _storage_cuda(self, device=None, non_blocking=False):
    """`storage.cuda()`, as a `map_location` function calls it: the storage stays in host
    memory and its tensors are rebuilt on the emulated device."""
    index = state.current if device is None else torch.device("cuda", device).index if isinstance(device, int) \
        else torch.device(device).index or 0
    _loading[self.data_ptr()] = index
    return self


_ENTRY = (5, _tag, _restore)  # before the CPU tagger (10), which names every host storage "cpu"


def patches():
    """(object, attribute, replacement) for the session to apply."""
    return [
        (torch.serialization, "_package_registry", sorted(torch.serialization._package_registry + [_ENTRY])),
        (torch._utils, "_rebuild_tensor_v2", _rebuild_tensor_v2),
        (torch, "save", _clearing(saved_storages, torch.save)),
        (torch, "load", _clearing(_loading, torch.load)),
        (torch.UntypedStorage, "cuda", _storage_cuda),
    ]
