"""The syntax layer's own shortcuts around libcst must answer as libcst does."""

from __future__ import annotations

import glob
import os

import libcst as cst
import pytest

import flake8_torchdevice
from flake8_torchdevice.analysis.syntax import children, flag_test
from flake8_torchdevice.rules import ALL_RULES

PACKAGE = os.path.dirname(flake8_torchdevice.__file__)


def _sources() -> list:
    examples = [example for rule in ALL_RULES for example in rule.VALID + rule.INVALID]
    # our own package: every statement and expression kind it uses, decorators, f-strings, ...
    files = sorted(glob.glob(os.path.join(PACKAGE, "**", "*.py"), recursive=True))
    return examples + [open(path, encoding="utf-8").read() for path in files]


@pytest.mark.parametrize("index", range(2))
def test_children_are_libcsts(index):
    """`children(node)` reads a node's fields where libcst's `node.children` rebuilds the
    node to find them: the same nodes, in the same order, for every node."""
    sources = _sources()[index::2]
    checked = 0

    class Compare(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal checked
            mine, libcsts = children(node), list(node.children)
            assert len(mine) == len(libcsts) and all(a is b for a, b in zip(mine, libcsts)), type(node).__name__
            checked += 1
            return True

    for source in sources:
        cst.parse_module(source).visit(Compare())
    assert checked > 10_000


@pytest.mark.parametrize("test, expected", [
    ("self.parallel", ("self.parallel", True)),
    ("not args.dp", ("args.dp", False)),
    ("not cfg['model']['no_dis']", ("cfg[model][no_dis]", False)),
    ("cfg['model'].get('no_dis', False)", ("cfg[model][no_dis]", True)),  # one key read two ways
    ("cfg[key]", None),  # a key read at run time names no flag
    ("cfg.get(key)", None),
    ("use(x)", None),
])
def test_a_flag_test_names_the_flag_however_it_is_read(test, expected):
    assert flag_test(cst.parse_expression(test)) == expected
