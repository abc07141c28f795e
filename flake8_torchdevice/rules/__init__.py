"""The rule catalog: one module per family, every rule registered here."""

from __future__ import annotations

from typing import Dict, Iterable, List, Type

from .amp import CudaAmp
from .base import Rule
from .cuda import CudaCall, CudaLiteral, CudaOnlyApi, UncalledDeviceMethod
from .opinions import CudaOnlySelection, OptimizerBeforeMove
from .serialization import LoadWithoutMapLocation
from .tensors import DiscardedTo, FactoryWithoutDevice, UnregisteredTensorAttribute
from .wrappers import WrapBeforeMove

ALL_RULES: List[Type[Rule]] = [
    CudaCall,
    CudaLiteral,
    CudaOnlyApi,
    UncalledDeviceMethod,
    FactoryWithoutDevice,
    UnregisteredTensorAttribute,
    DiscardedTo,
    LoadWithoutMapLocation,
    WrapBeforeMove,
    CudaAmp,
    OptimizerBeforeMove,
    CudaOnlySelection,
]
RULES_BY_CODE: Dict[str, Type[Rule]] = {rule.code: rule for rule in ALL_RULES}
DEFAULT_CODES = frozenset(rule.code for rule in ALL_RULES if rule.default_enabled)


def _matches(code: str, prefixes: Iterable[str]) -> int:
    """Length of the longest prefix of `prefixes` that `code` starts with (0: none)."""
    return max((len(p) for p in prefixes if code.startswith(p)), default=0)


def select_codes(select: Iterable[str] = (), ignore: Iterable[str] = (),
                 extend_select: Iterable[str] = (), extra_codes: Iterable[str] = ()) -> frozenset:
    """Enabled codes for flake8-style `--select`/`--ignore`/`--extend-select` prefixes.

    As in flake8, the longer (more specific) matching prefix wins. Rules off by default
    (family 9) are enabled only by a prefix that reaches their family (`TDV9`, `TDV901`).
    `extra_codes` (the CLI's E999) are chosen among too, on by default.
    """
    select = [s.strip().upper() for s in select if s.strip()]
    ignore = [s.strip().upper() for s in ignore if s.strip()]
    extend_select = [s.strip().upper() for s in extend_select if s.strip()]
    default_on = {code: rule.default_enabled for code, rule in RULES_BY_CODE.items()}
    default_on.update((code, True) for code in extra_codes)
    enabled = set()
    for code, on in default_on.items():
        if select:
            chosen = _matches(code, select + extend_select)
        else:
            # chosen by default: any matching ignore prefix wins over that
            chosen = _matches(code, extend_select) or (1 if on else 0)
        if code in RULES_BY_CODE and not on and chosen <= len("TDV"):
            chosen = 0  # opinions run only when named (TDV9, TDV901), never by `--select=TDV`
        if chosen > _matches(code, ignore):
            enabled.add(code)
    return frozenset(enabled)
