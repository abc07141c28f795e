"""An emulated CUDA device for CPU-only machines.

While it is active, a program believes a GPU is present: `torch.cuda.is_available()`
is true, `"cuda"`, `torch.device("cuda:1")`, `.cuda()`, `Module.cuda()`, `device=` on
factories and `map_location="cuda"` all put tensors on the emulated device, and the
numbers are real (every operator runs on the CPU). PyTorch still sees two devices, so
mixing an emulated tensor with a CPU tensor raises the error a GPU would raise
("Expected all tensors to be on the same device ..."), and nothing a GPU accepts is
refused (CPU 0-dim tensors and Python scalars, CPU index tensors, `.item()`, copies).

How: the emulated device is PyTorch's PrivateUse1 backend, registered from Python
under the name `emucuda` (`backend.py`). Its tensors are wrapper tensors
(`EmulatedTensor`) that hold a CPU tensor; `__torch_dispatch__` checks the devices of
each operator's arguments the way CUDA kernels do, then runs the operator on the held
CPU tensors. Python code sees `cuda` (`tensor.device`, `tensor.is_cuda`); a
`TorchFunctionMode` (`mode.py`) turns `cuda` device arguments into the emulated device,
and `cuda_api.py` answers `torch.cuda`'s questions and makes pinned memory plain host memory;
`serialization.py` tags checkpoints as a GPU's, and `modules.py` keeps Parameter objects
through `model.cuda()` and DataParallel's checks. `docs/emulate.md` lists what is
emulated and what is not.

Entry points: `emulate_cuda()` (a context manager), `python -m flake8_torchdevice.emulate`
/ `flake8-torchdevice emulate` (run a script or module), and the pytest plugin
(`pytest --emulate-cuda`, fixture `emulated_cuda`). Importing this package does not
import torch: the linter's environments need not have it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["emulate_cuda", "EmulatedCuda", "active"]


def __getattr__(name: str) -> Any:
    # torch is imported on first use, never when the package is imported.
    if name in __all__:
        from . import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
