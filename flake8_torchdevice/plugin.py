"""The flake8 adapter: flake8 hands us its `ast` tree and the file's lines."""

from __future__ import annotations

import gc
import sys
from typing import Any, Iterator, Tuple

from . import __version__
from .config import GUARD_NAMES_HELP, GUARD_NAMES_OPTION, PARAM_DEFAULTS_HELP, PARAM_DEFAULTS_OPTION, split_list
from .engine import DEFAULT_OPTIONS, Options, SourceError, lint_source
from .rules import RULES_BY_CODE

# Python's cyclic garbage collector walks every object it tracks at each full collection
# (about 40 in a flake8 run over timm), and importing libcst and this package adds 17,000
# that live as long as the process (libcst's node classes and their methods, our tables):
# 0.4-0.5 s more CPU per run on timm, a fifth of what the plugin cost. `gc.freeze()`
# moves what is alive now into the permanent generation, which collections skip: the
# collector's tool for long-lived state (it also keeps forked `-j` workers from touching
# those pages). What flake8 loaded before this plugin is frozen with it: its modules and
# options, long-lived too.
gc.freeze()


class TorchDevicePlugin:
    name = "flake8-torchdevice"
    version = __version__
    options: Options = DEFAULT_OPTIONS

    def __init__(self, tree: Any, lines: list, filename: str = "<unknown>") -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, manager: Any) -> None:
        manager.add_option(f"--{GUARD_NAMES_OPTION}", default="", parse_from_config=True,
                           comma_separated_list=True, help=GUARD_NAMES_HELP)
        manager.add_option(f"--{PARAM_DEFAULTS_OPTION}", default=False, action="store_true",
                           parse_from_config=True, help=PARAM_DEFAULTS_HELP)
        manager.extend_default_ignore(["TDV9"])  # family 9 is opt-in

    @classmethod
    def parse_options(cls, options: Any) -> None:
        cls.options = Options(
            enabled=_enabled_codes(options),
            guard_names=tuple(split_list(getattr(options, "torchdevice_guard_names", ()))),
            check_param_defaults=bool(getattr(options, "torchdevice_check_param_defaults", False)),
        )

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        if not self.options.enabled:
            return
        try:
            findings = lint_source("".join(self.lines), self.filename, self.options, tree=self.tree)
        except SourceError as error:
            sys.stderr.write(f"flake8-torchdevice: skipped {self.filename}: {error.reason}\n")
            return
        except Exception as error:  # never take flake8 down with us
            sys.stderr.write(
                f"flake8-torchdevice: internal error on {self.filename}: {type(error).__name__}: {error}; "
                "the file was skipped, please report this bug with the file attached\n")
            return
        for finding in findings:
            yield finding.line, finding.col, finding.text, type(self)


def _enabled_codes(options: Any) -> frozenset:
    """The codes flake8 would show, so that deselected rules cost nothing."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)
        named = [p.strip().upper() for p in (*(getattr(options, "select", None) or ()),
                                             *(getattr(options, "extend_select", None) or ()))]
        return frozenset(
            code for code, rule in RULES_BY_CODE.items() if engine.decision_for(code) == Decision.Selected
            # family 9 only when named (TDV9, TDV901): `--select=TDV` means the default rules
            and (rule.default_enabled or any(len(p) > len("TDV") and code.startswith(p) for p in named)))
    except Exception:  # an older or newer flake8 without this API: run every default rule
        return DEFAULT_OPTIONS.enabled
