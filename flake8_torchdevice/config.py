"""Options shared by the flake8 plugin and the standalone command, and where they are
read from: the usual `[flake8]` section of setup.cfg, tox.ini or .flake8."""

from __future__ import annotations

import configparser
import os
from typing import Dict, Iterable, List

CONFIG_FILES = ("setup.cfg", "tox.ini", ".flake8")
GUARD_NAMES_OPTION = "torchdevice-guard-names"
PARAM_DEFAULTS_OPTION = "torchdevice-check-param-defaults"
GUARD_NAMES_HELP = ("Extra names (flags like HAS_ACCEL, decorators like requires_accelerator) that "
                    "mean 'CUDA is present here': code they guard is not reported by TDV1xx.")
PARAM_DEFAULTS_HELP = 'TDV102 also reports parameter defaults such as def f(device="cuda").'


def split_list(value: "str | Iterable[str] | None") -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.replace("\n", ",").split(",")
    return [item.strip() for item in value if item and item.strip()]


def read_flake8_section(directory: str = ".") -> Dict[str, str]:
    """The `[flake8]` section of the first config file in `directory` that has one."""
    for name in CONFIG_FILES:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section("flake8"):
            return {key.replace("_", "-"): value for key, value in parser.items("flake8")}
    return {}


def is_true(value: "str | bool | None") -> bool:
    if isinstance(value, bool):
        return value
    return (value or "").strip().lower() in ("1", "true", "yes", "on")
