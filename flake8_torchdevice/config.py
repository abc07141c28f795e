"""Options shared by the flake8 plugin and the other front ends (`check`, `fix`, the
language server), and where those read them from: the `[flake8]` section of
setup.cfg, tox.ini or .flake8, found as flake8 finds it, then the
`[tool.flake8-torchdevice]` table of pyproject.toml, which wins key by key.

`load_config(start_dir)` is the one entry point; `Config.options()` gives the
engine's `Options`.
"""

from __future__ import annotations

import configparser
import difflib
import os
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from .engine import Options
from .rules import ALL_RULES, RULES_BY_CODE, select_codes

CONFIG_FILES = ("setup.cfg", "tox.ini", ".flake8")
PYPROJECT = "pyproject.toml"
TOOL_TABLE = "flake8-torchdevice"
GUARD_NAMES_OPTION = "torchdevice-guard-names"
PARAM_DEFAULTS_OPTION = "torchdevice-check-param-defaults"
# Codes the command reports besides the rules': E999, a file Python cannot compile.
EXTRA_CODES = ("E999",)
# flake8's default `exclude`.
DEFAULT_EXCLUDE = (".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox", ".nox", ".eggs", "*.egg")
# Rule families whose findings a CUDA guard silences (never TDV2xx, TDV401: they
# are bugs on CUDA machines too).
GUARDED_FAMILIES = ("TDV1", "TDV3", "TDV5")

GUARD_NAMES_HELP = ("Extra names (flags like HAS_ACCEL, decorators like requires_accelerator) that "
                    "mean 'CUDA is present here': code they guard is not reported by "
                    + ", ".join(code for code in RULES_BY_CODE if code.startswith(GUARDED_FAMILIES))
                    + " (guards never silence TDV2xx or TDV401).")
PARAM_DEFAULTS_HELP = 'TDV102 also reports parameter defaults such as def f(device="cuda").'

# Keys of [tool.flake8-torchdevice]: list-of-strings keys and boolean keys.
LIST_KEYS = ("select", "ignore", "extend-select", "extend-ignore", "guard-names", "exclude", "extend-exclude")
BOOL_KEYS = ("check-param-defaults",)
CODE_KEYS = ("select", "ignore", "extend-select", "extend-ignore")
PATH_KEYS = ("exclude", "extend-exclude")
# [flake8] option -> our key (flake8's own options keep their names)
FLAKE8_KEYS = {GUARD_NAMES_OPTION: "guard-names", PARAM_DEFAULTS_OPTION: "check-param-defaults",
               **{key: key for key in CODE_KEYS + PATH_KEYS}}


class ConfigError(Exception):
    """A configuration or option that cannot be used; front ends print it and stop (exit 2)."""


def split_list(value: "str | Iterable[str] | None") -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.replace("\n", ",").split(",")
    return [item.strip() for item in value if item and item.strip()]


def is_true(value: "str | bool | None") -> bool:
    if isinstance(value, bool):
        return value
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def normalize_path(pattern: str, parent: str) -> str:
    """flake8's rule: a pattern with a slash (or `.`) is a path relative to `parent`."""
    if pattern == "." or os.sep in pattern or (os.altsep and os.altsep in pattern):
        pattern = os.path.abspath(os.path.join(parent, pattern))
    return pattern.rstrip(os.sep + (os.altsep or ""))


def reportable_codes() -> Tuple[str, ...]:
    return tuple(RULES_BY_CODE) + EXTRA_CODES


def check_codes(codes: Iterable[str], where: str) -> None:
    """Every code must be one this package reports, or a prefix of one (`TDV`, `TDV1`, `E9`)."""
    known = reportable_codes()
    for code in codes:
        if not any(k.startswith(code.upper()) for k in known):
            raise ConfigError(
                f"unknown code {code!r} in {where}: no rule has this code or prefix; "
                f"`flake8-torchdevice rules` lists them (besides {', '.join(EXTRA_CODES)} for files "
                "Python cannot compile)")


@dataclass(frozen=True)
class Config:
    """Settings from every source, the later ones winning key by key. A value of None
    means "not set"; `sources` names the files read."""

    values: Mapping[str, Any] = field(default_factory=dict)
    sources: Tuple[str, ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        value = self.values.get(key)
        return default if value is None else value

    def updated(self, values: Mapping[str, Any], source: Optional[str] = None) -> "Config":
        """These values on top (the command line's, say); None leaves a key as it is."""
        merged = dict(self.values)
        merged.update((key, value) for key, value in values.items() if value is not None)
        return replace(self, values=merged, sources=self.sources + ((source,) if source else ()))

    def enabled_codes(self) -> frozenset:
        """Every code to report, E999 included."""
        select = self.get("select")
        return select_codes(select or (), list(self.get("ignore", ())) + list(self.get("extend-ignore", ())),
                            self.get("extend-select", ()), extra_codes=EXTRA_CODES)

    def options(self) -> Options:
        return Options(
            enabled=self.enabled_codes() - set(EXTRA_CODES),
            guard_names=tuple(self.get("guard-names", ())),
            check_param_defaults=bool(self.get("check-param-defaults", False)),
        )

    def exclude(self) -> Tuple[str, ...]:
        return tuple(self.get("exclude", DEFAULT_EXCLUDE)) + tuple(self.get("extend-exclude", ()))


def _read_ini(path: str) -> Optional[configparser.RawConfigParser]:
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None  # as flake8: an unparsable file is not a config
    return parser


def find_flake8_config(start_dir: str) -> Optional[str]:
    """flake8 7's search: setup.cfg, tox.ini, .flake8 with a [flake8] section in
    `start_dir`, then in each parent up to the root, stopping below the home folder."""
    home = os.path.expanduser("~")
    try:
        home_key = _stat_key(home) if home != "~" else None
    except OSError:
        home_key = None
    path = os.path.abspath(start_dir)
    key = _stat_key(path)
    while True:
        for name in CONFIG_FILES:
            candidate = os.path.join(path, name)
            parser = _read_ini(candidate) if os.path.isfile(candidate) else None
            if parser is not None and (parser.has_section("flake8") or parser.has_section("flake8:local-plugins")):
                return candidate
        parent = os.path.dirname(path)
        parent_key = _stat_key(parent)
        if parent_key in (key, home_key):
            return None
        path, key = parent, parent_key


def find_pyproject(start_dir: str) -> Optional[str]:
    """The nearest pyproject.toml (the same folders flake8 searches) that has a
    [tool.flake8-torchdevice] table."""
    home = os.path.expanduser("~")
    path = os.path.abspath(start_dir)
    while True:
        candidate = os.path.join(path, PYPROJECT)
        if os.path.isfile(candidate) and TOOL_TABLE in _read_toml(candidate).get("tool", {}):
            return candidate
        parent = os.path.dirname(path)
        if parent == path or (home != "~" and os.path.abspath(parent) == os.path.abspath(home)):
            return None
        path = parent


def _stat_key(path: str) -> Tuple[int, int]:
    st = os.stat(path)
    return st.st_ino, st.st_dev


def _read_toml(path: str) -> Dict[str, Any]:
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            with open(path, encoding="utf-8", errors="replace") as handle:
                if f"tool.{TOOL_TABLE}" not in handle.read():
                    return {}
            raise ConfigError(f"{path}: reading [tool.{TOOL_TABLE}] needs Python 3.11 or the tomli "
                              "package (pip install tomli)") from None
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None


def flake8_section_values(path: str) -> Dict[str, Any]:
    """Our keys from the [flake8] section of `path`. Codes of other plugins (E, F, W)
    are kept: they decide whether E999 is reported, and select nothing else."""
    parser = _read_ini(path)
    if parser is None or not parser.has_section("flake8"):
        return {}
    parent = os.path.dirname(os.path.abspath(path))
    values: Dict[str, Any] = {}
    for option, raw in parser.items("flake8"):
        key = FLAKE8_KEYS.get(option.replace("_", "-"))
        if key is None:
            continue
        where = f"{option} in {path}"
        if key in BOOL_KEYS:
            if raw.strip().lower() not in ("1", "yes", "true", "on", "0", "no", "false", "off"):
                raise ConfigError(f"{where}: expected true or false, got {raw.strip()!r}")
            values[key] = is_true(raw)
            continue
        items = split_list(raw)
        if key in CODE_KEYS:
            check_codes([code for code in items if code.upper().startswith("TDV")], where)
        if key in PATH_KEYS:
            items = [normalize_path(item, parent) for item in items]
        values[key] = tuple(items)
    return values


def pyproject_values(path: str) -> Dict[str, Any]:
    """[tool.flake8-torchdevice] of `path`, checked: unknown keys and wrong types are errors."""
    table = _read_toml(path).get("tool", {}).get(TOOL_TABLE, {})
    where = f"[tool.{TOOL_TABLE}] in {path}"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table")
    parent = os.path.dirname(os.path.abspath(path))
    values: Dict[str, Any] = {}
    for key, value in table.items():
        if key in BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: {key} must be true or false, not {value!r}")
            values[key] = value
        elif key in LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ConfigError(f"{where}: {key} must be a list of strings, such as [\"TDV1\"], not {value!r}")
            items = [item.strip() for item in value if item.strip()]
            if key in CODE_KEYS:
                check_codes(items, f"{key} of {where}")
            if key in PATH_KEYS:
                items = [normalize_path(item, parent) for item in items]
            values[key] = tuple(items)
        else:
            close = difflib.get_close_matches(key, LIST_KEYS + BOOL_KEYS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{where}: unknown key {key!r}{hint}; known keys: "
                              + ", ".join(LIST_KEYS + BOOL_KEYS))
    return values


def load_config(start_dir: str = ".", explicit_path: Optional[str] = None, isolated: bool = False) -> Config:
    """The configuration that applies in `start_dir` (a project folder, usually the
    current directory, as for flake8).

    `explicit_path` (`--config`) replaces the search: a .toml file gives its
    [tool.flake8-torchdevice] table, any other file its [flake8] section.
    `isolated` ignores every file. Raises ConfigError.
    """
    config = Config()
    if isolated:
        return config
    if explicit_path is not None:
        if not os.path.isfile(explicit_path):
            raise ConfigError(f"the specified config file does not exist: {explicit_path}")
        if explicit_path.endswith(".toml"):
            if TOOL_TABLE not in _read_toml(explicit_path).get("tool", {}):
                raise ConfigError(f"{explicit_path} has no [tool.{TOOL_TABLE}] table")
            return config.updated(pyproject_values(explicit_path), explicit_path)
        return config.updated(flake8_section_values(explicit_path), explicit_path)
    flake8_file = find_flake8_config(start_dir)
    if flake8_file is not None:
        config = config.updated(flake8_section_values(flake8_file), flake8_file)
    pyproject = find_pyproject(start_dir)
    if pyproject is not None:
        config = config.updated(pyproject_values(pyproject), pyproject)
    return config


def extend_select_help() -> str:
    off = [rule.code for rule in ALL_RULES if not rule.default_enabled]
    if off:
        return "add codes or prefixes to the selection, e.g. " + ",".join(off) + " (off by default)"
    return "add codes or prefixes to the selection"
