"""Every rule's own VALID/INVALID examples (they also appear in its docs)."""

from __future__ import annotations

import re

import pytest

from flake8_torchdevice.engine import Options, lint_source
from flake8_torchdevice.rules import ALL_RULES, DEFAULT_CODES

EXPECT_RE = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def codes_for(rule) -> frozenset:
    """Every default rule and the example's own: family 9's opinions (off by default) would
    report the remedies other rules recommend (TDV902 the selection idiom)."""
    return DEFAULT_CODES | {rule.code}


def expected(source: str):
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        match = EXPECT_RE.search(line)
        if match:
            found += [(number, code.strip()) for code in match.group(1).split(",") if code.strip()]
    return sorted(found)


def cases(kind: str):
    return [pytest.param(rule, source, id=f"{rule.code}-{kind}-{index}")
            for rule in ALL_RULES for index, source in enumerate(getattr(rule, kind))]


def test_every_rule_has_examples():
    for rule in ALL_RULES:
        assert rule.VALID, rule.code
        assert rule.INVALID, rule.code
        assert all(expected(source) for source in rule.INVALID), rule.code


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("rule, source", cases("VALID"))
def test_valid_example_is_clean(rule, source, fast):
    # Clean for every rule, not only its own: examples should not trip each other.
    assert lint_source(source, "example.py", Options(enabled=codes_for(rule)), fast=fast) == []


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("rule, source", cases("INVALID"))
def test_invalid_example_has_exactly_the_marked_findings(rule, source, fast):
    findings = lint_source(source, "example.py", Options(enabled=codes_for(rule)), fast=fast)
    assert sorted((f.line, f.code) for f in findings) == expected(source)
    assert rule.code in {f.code for f in findings}


@pytest.mark.parametrize("rule, source", cases("INVALID"))
def test_invalid_example_only_with_its_rule_enabled(rule, source):
    findings = lint_source(source, "example.py", Options(enabled=frozenset({rule.code})))
    own = [(line, code) for line, code in expected(source) if code == rule.code]
    assert sorted((f.line, f.code) for f in findings) == own
