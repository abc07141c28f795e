"""Fuzzing the engine: whatever text it gets, `lint_source` either returns findings
or raises SourceError, never anything else.

Two sources of text:
- valid Python programs generated from the grammar by hypothesmith, alone and
  spliced into fixture-like snippets (a generated program rarely holds a trigger
  word, so alone it mostly tests that the engine stops at its first regex);
- fixture-like snippets (every rule example and every fixture's bad.py and good.py)
  mutated: lines deleted, duplicated, moved, re-indented or inserted from other
  snippets, tokens swapped, odd characters inserted.

For each text, checked properties:
- only SourceError escapes, with a one-line reason;
- every finding lies inside the file: 1 <= line <= number of lines,
  0 <= col <= length of that line;
- the fast path (what flake8 and the CLI run) agrees with a full parse; the fast
  path may return [] where libcst cannot parse the file (it never parses a file, or
  a function, that cannot hold a finding), and when it fails, the full parse fails too;
- the result depends only on the text: a second run, and a run on the tree flake8
  would hand over, give the same.

Examples per CI run (derandomized, hypothesis' database off, so every run checks
the same texts): 300 generated programs + 300 spliced into snippets + 1,000 mutated
snippets = 1,600 texts, plus the 60-odd snippets themselves with LF, CRLF and CR
line endings; each text is linted five times. About 40 s on one core here.
"""

from __future__ import annotations

import ast
import glob
import os
import re

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_torchdevice.engine import Finding, Options, SourceError, lint_source
from flake8_torchdevice.rules import ALL_RULES, RULES_BY_CODE

# ast.parse of generated code warns ("'int' object is not callable", bad escapes)
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALL_ON = Options(enabled=frozenset(RULES_BY_CODE), check_param_defaults=True)
GENERATED_EXAMPLES = 300
MUTATED_EXAMPLES = 1000


def fuzz(examples: int) -> settings:
    # derandomize: the same texts on every run, so CI cannot fail at random
    return settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                    print_blob=True, suppress_health_check=list(HealthCheck))


def _snippets() -> list:
    texts = [example for rule in ALL_RULES for example in rule.VALID + rule.INVALID]
    for path in sorted(glob.glob(os.path.join(ROOT, "fixtures", "*", "*.py"))):
        with open(path, encoding="utf-8") as file:
            texts.append(file.read())
    return [re.sub(r"#\s*expect:.*", "", text) for text in texts]


SNIPPETS = _snippets()
POOL_LINES = sorted({line for text in SNIPPETS for line in text.splitlines() if line.strip()})
ODD_TEXT = ["(", ")", "[", "]", "{", "}", ":", ",", ".", "'", '"', '"""', "\\", "#", "\t", "\x0c",
            "\r", "\r\n", "\n", " ", "\x00", "\ufeff", "\u2028", "\x85", "é", "𝔘", "lambda", "await ",
            "f'{", "torch.cuda", ".cuda()", "device=", "if torch.cuda.is_available():\n", " and ", "@"]
TOKEN = re.compile(r"\w+|[^\w\s]")


def _lines(source: str) -> list:
    """The file's lines as Python counts them (\\r\\n, \\r and \\n end a line)."""
    return source.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def outcome(source: str, fast: bool, tree=None):
    try:
        findings = lint_source(source, "fuzz.py", ALL_ON, tree=tree, fast=fast)
    except SourceError as error:
        assert error.reason and "\n" not in error.reason, repr(error.reason)
        return ("skipped", error.reason)
    assert all(isinstance(f, Finding) for f in findings)
    assert findings == sorted(findings), "findings are not sorted by position"
    lines = _lines(source)
    for f in findings:
        assert 1 <= f.line <= len(lines), (f, len(lines))
        assert 0 <= f.col <= len(lines[f.line - 1]), (f, lines[f.line - 1])
        assert re.fullmatch(r"TDV\d{3}", f.code) and f.message, f
    return findings


def check(source: str) -> None:
    slow = outcome(source, fast=False)
    fast = outcome(source, fast=True)
    if isinstance(slow, list):
        assert fast == slow, "the fast path disagrees with a full parse"
    # When only the full parse fails, libcst failed on code the fast path stubbed.
    if isinstance(fast, tuple):
        assert isinstance(slow, tuple), f"only the fast path fails: {fast[1]}"
    assert outcome(source, fast=True) == fast, "a second run differs"
    assert outcome(source, fast=False) == slow, "a second full run differs"
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    assert outcome(source, fast=True, tree=tree) == fast, "flake8's tree changes the result"


@fuzz(GENERATED_EXAMPLES)
@given(hypothesmith.from_grammar())
def test_generated_programs(source):
    check(source)


def splice(snippet: str, program: str, where: int) -> str:
    """`program` inside `snippet` before line `where`, indented like that line."""
    lines = snippet.splitlines(keepends=True) or ["\n"]
    at = where % (len(lines) + 1)
    near = lines[min(at, len(lines) - 1)]
    indent = near[: len(near) - len(near.lstrip(" \t"))]
    lines[at:at] = [indent + line for line in program.splitlines(keepends=True)] + ["\n"]
    return "".join(lines)


@fuzz(GENERATED_EXAMPLES)
@given(hypothesmith.from_grammar(), st.sampled_from(SNIPPETS), st.integers(0, 500))
def test_generated_programs_in_snippets(program, snippet, where):
    check(splice(snippet, program, where))


@st.composite
def mutated(draw) -> str:
    lines = draw(st.sampled_from(SNIPPETS)).splitlines(keepends=True) or ["\n"]
    for _ in range(draw(st.integers(1, 4))):
        # line edits keep the syntax more often than token edits: drawn more often
        kind = draw(st.sampled_from(["delete", "duplicate", "move", "insert"] * 2 + ["indent", "swap", "odd"]))
        at = draw(st.integers(0, len(lines) - 1))
        if kind == "delete" and len(lines) > 1:
            del lines[at]
        elif kind == "duplicate":
            lines.insert(at, lines[at])
        elif kind == "move":
            lines.insert(draw(st.integers(0, len(lines) - 1)), lines.pop(at))
        elif kind == "insert":
            indent = draw(st.sampled_from(["", "    ", "        ", "\t"]))
            lines.insert(at, indent + draw(st.sampled_from(POOL_LINES)).lstrip() + "\n")
        elif kind == "indent":
            lines[at] = draw(st.sampled_from(["    ", " ", "\t"])) + lines[at]
        elif kind == "swap":
            tokens = list(TOKEN.finditer(lines[at]))
            if len(tokens) >= 2:
                a, b = sorted(draw(st.lists(st.sampled_from(tokens), min_size=2, max_size=2, unique_by=id)),
                              key=lambda m: m.start())
                line = lines[at]
                lines[at] = (line[:a.start()] + b.group() + line[a.end():b.start()] + a.group()
                             + line[b.end():])
        else:
            line = lines[at]
            pos = draw(st.integers(0, len(line)))
            lines[at] = line[:pos] + draw(st.sampled_from(ODD_TEXT)) + line[pos:]
    return "".join(lines)


@fuzz(MUTATED_EXAMPLES)
@given(mutated())
def test_mutated_snippets(source):
    check(source)


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_unmutated_snippets(index):
    """The starting points themselves, each also with CRLF and lone-CR line endings."""
    source = SNIPPETS[index]
    check(source)
    check(source.replace("\n", "\r\n"))
    check(source.replace("\n", "\r"))
    lf = outcome(source, fast=True)
    assert outcome(source.replace("\n", "\r\n"), fast=True) == lf
    assert outcome(source.replace("\n", "\r"), fast=True) == lf
