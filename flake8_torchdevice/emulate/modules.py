"""DataParallel on the emulated GPU.

`nn.DataParallel` scatters and replicates through CUDA's own communication kernels,
which a CPU build does not have. Its forward is replaced for the session by one that
keeps what a GPU checks (the module's parameters and buffers must be on
`device_ids[0]`, with PyTorch's own message) and what a single GPU does (inputs go to
`device_ids[0]`, the output to `output_device`). With several emulated GPUs the batch
is not split: the module runs once on `device_ids[0]` (docs/emulate.md). A GPU would
then also refuse parameters left on the other devices; the emulator never refuses more.

DistributedDataParallel needs nothing: its checks are Python and a one-process gloo
group runs on the emulated tensors.
"""

from __future__ import annotations

import gc
from itertools import chain
from typing import Any, List, Tuple

import torch
import torch.nn as nn

from .mode import emulated_device


def _moved(value: Any, device: torch.device) -> Any:
    """Tensors in (nested) tuples, lists and dicts moved to `device`, as scatter does."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_moved(v, device) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_moved(v, device) for v in value)
    if isinstance(value, dict):
        return type(value)((k, _moved(v, device)) for k, v in value.items())
    return value


def _forward(self: nn.DataParallel, *inputs: Any, **kwargs: Any) -> Any:
    if not self.device_ids:
        return self.module(*inputs, **kwargs)
    for tensor in chain(self.module.parameters(), self.module.buffers()):
        if tensor.device != self.src_device_obj:
            raise RuntimeError(f"module must have its parameters and buffers on device {self.src_device_obj} "
                               f"(device_ids[0]) but found one of them on device: {tensor.device}")
    device = emulated_device(self.src_device_obj)
    output = self.module(*_moved(inputs, device), **_moved(kwargs, device))
    if len(self.device_ids) == 1:
        return output
    return _moved(output, emulated_device(torch.device("cuda", self.output_device)))


_original_apply = nn.Module._apply


def _apply(self: nn.Module, fn: Any, recurse: bool = True) -> nn.Module:
    swapping = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        try:
            return _original_apply(self, fn, recurse)
        except RuntimeError as error:
            if "Couldn't swap" not in str(error):
                raise
        # a swap needs the parameter held by nothing else; an autograd graph left in a
        # reference cycle after `backward()` holds it until the collector runs
        gc.collect()
        try:
            return _original_apply(self, fn, recurse)  # moves and casts are idempotent
        except RuntimeError as error:
            if "Couldn't swap" not in str(error):
                raise
        torch.__future__.set_swap_module_params_on_conversion(False)
        return _original_apply(self, fn, recurse)  # (new Parameter objects: an optimizer loses them)
    finally:
        torch.__future__.set_swap_module_params_on_conversion(swapping)


def patches() -> List[Tuple[Any, str, Any]]:
    return [(nn.DataParallel, "forward", _forward), (nn.Module, "_apply", _apply)]
