"""The fast path (skip files, stub functions) must not change a single finding.

`lint_source(..., fast=False)` parses and walks every file whole; `fast=True` is what
flake8 and the CLI run. Both must give the same findings in the same order at the
same positions, on real code (timm, PyTorch's own sources) and on every rule example.
"""

from __future__ import annotations

import ast
import glob
import importlib.util
import os
import re
import subprocess
import sys
import zipfile

import pytest

import flake8_torchdevice.engine as engine
from flake8_torchdevice.engine import Options, SourceError, lint_source
from flake8_torchdevice.rules import ALL_RULES, RULES_BY_CODE
from flake8_torchdevice.rules.base import trigger_union

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMM_CACHE = os.path.join(ROOT, "benchmarks", ".cache", "timm-1.0.31", "timm")
ALL_CODES = frozenset(RULES_BY_CODE)
# The fast path treats TDV201 apart from the text-triggered rules: check each side alone.
OPTION_SETS = {
    "all": Options(enabled=ALL_CODES, check_param_defaults=True),
    "tdv201-only": Options(enabled=frozenset({"TDV201"})),
    "without-tdv201": Options(enabled=ALL_CODES - {"TDV201"}, guard_names=("HAS_GPU",)),
}
ANY_TRIGGER = re.compile("|".join(rule.triggers for rule in ALL_RULES))


def outcome(source: str, options: Options, fast: bool, with_tree: bool = False):
    tree = ast.parse(source) if with_tree else None  # flake8 hands us its tree
    try:
        return lint_source(source, "sample.py", options, tree=tree, fast=fast)
    except SourceError as error:
        return ("skipped", error.reason)


def assert_same(source: str, options: Options, label: str) -> list:
    slow = outcome(source, options, fast=False)
    fast = outcome(source, options, fast=True, with_tree=True)
    if isinstance(slow, tuple) and fast == []:
        return []  # a file libcst cannot parse but with nothing to find: the fast path never parses it
    assert fast == slow, label
    return slow


def evenly(items: list, count: int) -> list:
    step = max(1, len(items) // count)
    return items[::step][:count]


def read(path: str) -> str:
    with open(path, encoding="utf-8") as source:
        return source.read()


@pytest.fixture(scope="module")
def timm_files(tmp_path_factory) -> list:
    root = TIMM_CACHE
    if not os.path.isdir(root):  # the benchmark's cache is missing: fetch timm like it does
        target = tmp_path_factory.mktemp("timm")
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "timm==1.0.31",
                               "-d", str(target), "-q"], capture_output=True)
        if done.returncode != 0:
            pytest.skip("cannot download timm 1.0.31")
        with zipfile.ZipFile(glob.glob(str(target / "timm-*.whl"))[0]) as wheel:
            wheel.extractall(target)
        root = str(target / "timm")
    files = sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True))
    assert len(files) > 250
    return files


def torch_files() -> list:
    """~60 files of PyTorch's installed sources that hold torch code (torch is not imported)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    root = list(spec.submodule_search_locations)[0]
    files = sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True))
    return evenly([f for f in files if os.path.getsize(f) < 200_000 and ANY_TRIGGER.search(read(f))], 60)


@pytest.mark.parametrize("options", list(OPTION_SETS), ids=list(OPTION_SETS))
def test_timm_sample_fast_equals_full(timm_files, options):
    # Every file for all rules; a fifth of them for the single-side option sets.
    files = timm_files if options == "all" else evenly(timm_files, 60)
    found = [f for path in files for f in assert_same(read(path), OPTION_SETS[options], path)]
    if options == "all":
        assert any(f.code == "TDV201" for f in found)  # timm exercises the rule


@pytest.mark.parametrize("options", list(OPTION_SETS), ids=list(OPTION_SETS))
def test_pytorch_sources_fast_equals_full(options):
    files = torch_files()
    if not files:
        pytest.skip("torch is not installed")
    assert len(files) >= 50
    found = [f for path in files for f in assert_same(read(path), OPTION_SETS[options], path)]
    if options != "tdv201-only":
        assert found  # PyTorch's own sources use CUDA directly: something must be found


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_rule_examples_fast_equals_full(rule):
    for example in rule.VALID + rule.INVALID:
        for name, options in OPTION_SETS.items():
            assert_same(example, options, f"{name}: {example}")


# Each case below defeats one shortcut if it were done carelessly; the expected codes
# make sure the case really finds something.
CASES = {
    # The factory word only in a docstring of one method; the real call in another.
    "docstring-word": ("""
import torch
from torch import nn

class Head(nn.Module):
    def extra(self, x):
        '''Returns a tensor of ones.'''
        return x

    def forward(self, x):
        return x + torch.ones(3)
""", ["TDV201"]),
    # "load" in comments of a trigger-free method; the real torch.load elsewhere.
    "load-word": ("""
import torch

class Loader:
    def describe(self):
        # load the weights lazily
        return "load"

    def restore(self, path):
        return torch.load(path)
""", ["TDV301"]),
    # Big module-level data is stubbed, but not when it uses a module-level tensor.
    "module-data": ("""
import torch

pad = torch.zeros(3)
w = torch.ones(3).to(dev)
TABLE = [
    pad,
    w,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
]
CONFIGS = {
    "a": dict(url="https://example.com/a.pth"),
    "b": dict(url="https://example.com/b.pth"),
    "c": dict(url="https://example.com/c.pth"),
    "d": dict(url="https://example.com/d.pth"),
    "e": dict(url="https://example.com/e.pth"),
    "f": dict(url="https://example.com/f.pth"),
    "g": dict(url="https://example.com/g.pth"),
    "h": dict(url="https://example.com/h.pth"),
    "i": dict(url="https://example.com/i.pth"),
}
x = torch.load("m.pt")
""", ["TDV201", "TDV301"]),
    # A big module-level dict of PyTorch's weight URLs is read by TDV301: it is not stubbed.
    "weight-urls": ("""
import torch.utils.model_zoo as model_zoo

model_urls = {
    "r18": "https://download.pytorch.org/models/r18.pth",
    "r34": "https://download.pytorch.org/models/r34.pth",
    "r50": "https://download.pytorch.org/models/r50.pth",
    "r101": "https://download.pytorch.org/models/r101.pth",
    "r152": "https://download.pytorch.org/models/r152.pth",
    "x50": "https://download.pytorch.org/models/x50.pth",
    "x101": "https://download.pytorch.org/models/x101.pth",
    "w50": "https://download.pytorch.org/models/w50.pth",
    "w101": "https://download.pytorch.org/models/w101.pth",
}
OTHER = "https://example.com/m.pth"


def resnet(arch, model):
    model.load_state_dict(model_zoo.load_url(model_urls[arch]))
    return model_zoo.load_url(OTHER)
""", ["TDV301"]),
    # A factory renamed on import: only the alias appears in the function.
    "alias": ("""
from torch import zeros as z
import torch.nn as nn

class Head(nn.Module):
    def forward(self, x):
        return x + z(3)
""", ["TDV201"]),
    # `__init__` calls a helper: the helper's factory is construction-time code, not reported.
    "init-helper": ("""
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self._setup()

    def _setup(self, x=None):
        self._w = x + torch.ones(3)

    def forward(self, x):
        return x + torch.zeros(3)
""", ["TDV201"]),
    # A trigger-free function that rebinds an imported name: the stub keeps it rebound.
    "rebinding-def": ("""
import torch as th

def th():
    return None

state = th.load("x.pt")
x = th.cuda()
""", ["TDV101"]),
    # device= or **kwargs: the call cannot be reported, but another rule's trigger is there.
    "device-keyword": ("""
import torch
import torch.nn as nn

class Head(nn.Module):
    def forward(self, x, **kw):
        y = torch.ones(3, **kw) + torch.zeros(3, device=x.device)
        return x.cuda() + y
""", ["TDV101"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_fast_path_cases(name):
    source, codes = CASES[name]
    found = assert_same(source, OPTION_SETS["all"], name)
    assert [f.code for f in found] == codes


def test_lines_left_out_are_mapped_back():
    """A stubbed function's lines are left out of what libcst parses; every reported
    line (start and end) is the file's, before, between and after them."""
    source = (
        "import torch\n"                      # 1
        "a = torch.load('a.pt')\n"            # 2
        "def plain(x):\n"                     # 3: stubbed, lines 4-9 left out
        '    """Doc.\n'
        "\n"
        '    more."""\n'
        "    y = x + 1\n"
        "\n"
        "    return y\n"
        "class Net:\n"                        # 10
        "    def helper(self):\n"             # 11: stubbed, 12-13 left out
        "        return 1\n"
        "        # done\n"
        "    def restore(self, path):\n"      # 14
        "        return torch.load(\n"        # 15
        "            path)\n"                 # 16
    )
    only = Options(enabled=frozenset({"TDV301"}))
    found = lint_source(source, "t.py", only, tree=ast.parse(source))
    assert [(f.line, f.col, f.end_line, f.end_col) for f in found] == [(2, 4, 2, 22), (15, 15, 16, 17)]
    assert found == lint_source(source, "t.py", only, fast=False)


# Module-level statements that a part boundary must not split: decorators, a statement
# after a multi-line string on its line, `a; b`, comments and blank lines between.
PARTS_SOURCE = (
    "import torch\n"                                   # 1
    "# a comment\n"                                    # 2
    "\n"
    "a = torch.load('a.pt')\n"                         # 4
    'doc = """x\n'                                     # 5
    "y\"\"\"; b = torch.load('b.pt')\n"                # 6
    "c = 1; d = torch.load('d.pt')\n"                  # 7
    "@decorate\n"                                      # 8
    "@decorate(\n"
    "    arg)\n"
    "def f(x):\n"                                      # 11
    "    return x.cuda()\n"                            # 12
    "\n"
    "\n"
    "class Net(torch.nn.Module):\n"                    # 15
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.t = torch.zeros(3)\n"                # 18
    "    def forward(self, x):\n"
    "        return x + self.t\n"
    "# trailing\n"
    "if True:\n"                                       # 22
    "    e = torch.load('e.pt')\n"                     # 23
    "else:\n"
    "    e = None\n"
)


@pytest.mark.parametrize("fast", [True, False])
def test_parts_give_the_findings_of_one_parse(monkeypatch, fast):
    """libcst parses a few module-level statements at a time (`_parse_in_parts`); one
    statement per part finds the same at the same lines and columns as one part."""
    options = Options(enabled=ALL_CODES)
    whole = lint_source(PARTS_SOURCE, "t.py", options, fast=fast)
    monkeypatch.setattr(engine, "_PART_CHARS", 1)
    assert lint_source(PARTS_SOURCE, "t.py", options, fast=fast) == whole
    assert [(f.line, f.col, f.code) for f in whole] == [
        (4, 4, "TDV301"), (6, 10, "TDV301"), (7, 11, "TDV301"), (12, 13, "TDV101"), (18, 8, "TDV202"),
        (23, 8, "TDV301")]


def test_a_parse_error_in_a_later_part_names_the_file_line(monkeypatch):
    real_parse = engine.parse_cst

    def failing(text):
        if "e.pt" in text:
            raise SourceError("libcst cannot parse this file: boom", 2, 4)
        return real_parse(text)
    monkeypatch.setattr(engine, "_PART_CHARS", 1)
    monkeypatch.setattr(engine, "parse_cst", failing)
    with pytest.raises(SourceError) as raised:
        lint_source(PARTS_SOURCE, "t.py", Options(enabled=ALL_CODES))
    assert (raised.value.line, raised.value.col) == (23, 4)


def _corpus(timm_files: list) -> list:
    texts = [read(path) for path in timm_files] + [read(path) for path in torch_files()]
    texts += [example for rule in ALL_RULES for example in rule.VALID + rule.INVALID]
    return texts + [source for source, _ in CASES.values()]


@pytest.mark.parametrize("rule", [r for r in ALL_RULES if r.trigger_words], ids=lambda r: r.code)
def test_every_trigger_match_holds_one_of_the_trigger_words(timm_files, rule):
    """The fast path runs a rule's trigger pattern only on text that holds one of its
    `trigger_words` (each of its `trigger_parts` on text holding one of the part's):
    each match on real code must hold one, or a function is stubbed that could hold a
    finding."""
    parts = rule.trigger_parts or ((rule.trigger_words, rule.triggers),)
    texts = _corpus(timm_files)
    matched = 0
    for words, part in parts:  # each part runs only on text holding one of its own words
        pattern = re.compile(part)
        for text in texts:
            for match in pattern.finditer(text):
                matched += 1
                # (a part without words runs on all text: TDV202's main part)
                assert not words or any(word in match.group(0) for word in words), (rule.code, match.group(0))
    assert matched  # the corpus exercises the pattern
    if rule.trigger_parts:
        assert (rule.triggers, rule.trigger_words) == trigger_union(rule.trigger_parts)


def test_a_class_without_bases_is_not_kept_whole():
    """TDV202 reports only modules: a class with no base (or only `object`) is judged
    method by method like any other code, and its plain attributes are not reported."""
    rule = RULES_BY_CODE["TDV202"]
    for head in ("class Loader:", "class Loader(object):"):
        tree = ast.parse(f"import torch\n{head}\n    def __init__(self):\n        self.mean = torch.zeros(3)\n")
        assert not rule.keeps_class(tree.body[1])
    tree = ast.parse("import torch\nclass Loader(Base):\n    def __init__(self):\n        self.mean = torch.zeros(3)\n")
    assert rule.keeps_class(tree.body[1])
