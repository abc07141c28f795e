"""pytest plugin: `pytest --emulate-cuda` runs the session with the emulated GPU.

Registered through the `pytest11` entry point, so it loads wherever the package is
installed; it stays inert, and imports no torch, unless `--emulate-cuda` is given or a
test asks for the `emulated_cuda` fixture. Under `--emulate-cuda` the session's test
modules are imported with the emulator already active, so `skipif(not
torch.cuda.is_available())` lets the CUDA tests run.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

_SESSION_KEY = "_torchdevice_emulation"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("torchdevice", "emulated CUDA GPU (flake8-torchdevice)")
    group.addoption("--emulate-cuda", action="store_true", default=False,
                    help="run the tests with an emulated CUDA GPU: real numbers on the CPU, "
                         "PyTorch's device errors where a GPU raises them")
    group.addoption("--emulate-cuda-devices", type=int, default=1, metavar="N",
                    help="how many emulated GPUs torch.cuda.device_count() reports (default 1)")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: Any, parser: Any, args: Any) -> None:
    # Before the project's conftest.py files: they often ask torch.cuda at import time.
    options = early_config.known_args_namespace
    if getattr(options, "emulate_cuda", False):
        _start(early_config, getattr(options, "emulate_cuda_devices", 1))


def pytest_configure(config: Any) -> None:
    if config.getoption("emulate_cuda", default=False) and getattr(config, _SESSION_KEY, None) is None:
        _start(config, config.getoption("emulate_cuda_devices"))


def _start(config: Any, devices: int) -> None:
    from .session import EmulatedCuda

    session = EmulatedCuda(devices)
    session.__enter__()
    setattr(config, _SESSION_KEY, session)


def pytest_unconfigure(config: Any) -> None:
    session = getattr(config, _SESSION_KEY, None)
    if session is not None:
        session.__exit__(None, None, None)
        delattr(config, _SESSION_KEY)


def pytest_report_header(config: Any) -> Any:
    if getattr(config, _SESSION_KEY, None) is not None:
        return f"torchdevice: emulated CUDA GPUs: {config.getoption('emulate_cuda_devices')}"
    return None


@pytest.fixture
def emulated_cuda(request: Any) -> Iterator[Any]:
    """The emulated GPU for one test (the session's, when --emulate-cuda is on)."""
    session = getattr(request.config, _SESSION_KEY, None)
    if session is not None:
        yield session
        return
    from .session import EmulatedCuda

    with EmulatedCuda() as session:
        yield session
