"""Run a Python program with the emulated GPU, as `python` would run it.

    python -m flake8_torchdevice.emulate [--devices N] script.py [args...]
    python -m flake8_torchdevice.emulate [--devices N] -m module [args...]
    flake8-torchdevice emulate ...   (the same)

The program's own exit status and traceback come out unchanged; its `sys.argv` is what
it would be under `python`.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from types import TracebackType
from typing import List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))

USAGE = "%(prog)s [--devices N] (script.py | -m module) [args...]"


def parse(argv: Sequence[str], prog: str) -> argparse.Namespace:
    """The emulator's own options come first; everything from the script (or from
    `-m module`) on is the program's, options included (`-m pytest -q -x`)."""
    parser = argparse.ArgumentParser(prog=prog, usage=USAGE, description=(
        "Run a program with an emulated CUDA GPU: torch.cuda.is_available() is true, CUDA tensors "
        "live on the emulated device (real numbers, computed on the CPU), and mixing them with CPU "
        "tensors raises the error a GPU would raise."))
    parser.add_argument("--devices", type=int, default=1, metavar="N", help="emulated GPUs (default 1)")
    parser.add_argument("-m", dest="module", metavar="module", help="run a library module as a script")
    parser.add_argument("program", nargs="*", help="script.py [args...], or the module's args")
    own: List[str] = []
    rest = list(argv)
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        own.append(option)
        if option in ("--devices", "-m") and rest:
            own.append(rest.pop(0))
        if option == "-m" or option.startswith("-m") and len(option) > 2:
            break  # the module's arguments follow
    args = parser.parse_args(own)
    args.program = rest
    if args.module is None and not args.program:
        parser.error("give a script or -m module")
    if args.devices < 1:
        parser.error("--devices must be at least 1")
    return args


def main(argv: Optional[Sequence[str]] = None, prog: str = "python -m flake8_torchdevice.emulate") -> int:
    args = parse(sys.argv[1:] if argv is None else argv, prog)
    try:
        from .session import EmulatedCuda  # imports torch
    except ImportError as error:
        if "torch" not in str(error):
            raise
        print(f"{prog}: the emulated GPU runs on PyTorch, which this Python ({sys.executable}) cannot import; "
              "install the CPU build first: pip install torch==2.13.0 --index-url "
              "https://download.pytorch.org/whl/cpu", file=sys.stderr)
        return 2

    program: List[str] = list(args.program)
    try:
        with EmulatedCuda(args.devices):
            if args.module is not None:
                sys.argv = [args.module] + program
                runpy.run_module(args.module, run_name="__main__", alter_sys=True)
            else:
                script = program[0]
                sys.argv = program
                sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
                runpy.run_path(script, run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as error:  # noqa: B036 - reported as Python reports it, then exit 1
        traceback.print_exception(type(error), error, _program_frames(error.__traceback__))
        return 1
    return 0


def _program_frames(frames: Optional[TracebackType]) -> Optional[TracebackType]:
    """The traceback without this package's and runpy's frames: what `python script.py`
    would print (a GPU raises its device errors from C++, below the program's line)."""
    kept: List[TracebackType] = []
    while frames is not None:
        filename = frames.tb_frame.f_code.co_filename
        if not (filename.startswith(HERE) or "runpy" in filename or filename.endswith("flake8_torchdevice/cli.py")):
            kept.append(frames)
        frames = frames.tb_next
    for frame, following in zip(kept, kept[1:] + [None]):
        frame.tb_next = following
    return kept[0] if kept else None
