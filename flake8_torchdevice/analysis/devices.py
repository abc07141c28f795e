"""Devices and moves: which names hold a device, which calls move something to one."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from .syntax import dotted_name, keyword, method_call, positional_args

_DEVICE_IDENTIFIER_RE = re.compile(r"^(device|dev|[a-z0-9_]*_device|[a-z0-9_]*_dev)$", re.I)


def is_device_name(identifier: str) -> bool:
    return bool(_DEVICE_IDENTIFIER_RE.match(identifier))


def is_device_move(node: cst.CSTNode) -> bool:
    """`x.to(device)`, `x.to("cpu")`, `x.cuda()`: a call that moves `x` to a device.

    `.to(memory_format=...)` and `.to(dtype=...)` alone do not move anything.
    """
    receiver = method_call(node, "to", "cuda")
    if receiver is None:
        return False
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    if node.func.attr.value == "to":
        return bool(positional_args(node)) or keyword(node, "device") is not None
    return True


def move_target(node: cst.CSTNode) -> Optional[str]:
    """For a device move `m.to(...)` / `m.cuda(...)`: the dotted name of `m`."""
    if not is_device_move(node):
        return None
    receiver = method_call(node, "to", "cuda")
    while True:  # m.float().cuda() / m.to(a).half()
        inner = method_call(receiver, "to", "cuda", "float", "half", "double", "train", "eval")
        if inner is None:
            break
        receiver = inner
    return dotted_name(receiver)

