"""TDV902 cuda-only-selection (off by default): `"cuda" if torch.cuda.is_available() else "cpu"`."""

from __future__ import annotations

import pytest

from conftest import lint

ONLY = frozenset({"TDV902"})


def tdv902(code: str, **options):
    return lint(code, enabled=ONLY, **options)


REPORTED = {
    "string": ("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n", [(2, 9)]),
    "in torch.device": ("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
                        [(2, 22)]),
    "cuda:0": ("import torch as th\nd = th.device('cuda:0' if th.cuda.is_available() else 'cpu')\n", [(2, 14)]),
    "negated": ("import torch\nd = 'cpu' if not torch.cuda.is_available() else 'cuda'\n", [(2, 4)]),
    "device_count": ("import torch\nd = 'cuda' if torch.cuda.device_count() > 0 else 'cpu'\n", [(2, 4)]),
    "device objects (ddim, score_sde)": (
        "import torch\ndevice = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')\n",
        [(2, 9)]),
    "device objects, negated": (
        "import torch as th\nd = th.device('cpu') if not th.cuda.is_available() else th.device('cuda:0')\n",
        [(2, 4)]),
    "in a function": ("import torch\ndef get_device():\n    return 'cuda' if torch.cuda.is_available() else 'cpu'\n",
                      [(3, 11)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv902(code) == [(line, col, "TDV902") for line, col in expected]


NOT_REPORTED = {
    "user flag": "import torch\nd = torch.device('cuda' if args.cuda else 'cpu')\n",
    "accelerator": "import torch\nd = torch.accelerator.current_accelerator() or torch.device('cpu')\n",
    "cuda or mps": "import torch\nd = 'cuda' if torch.cuda.is_available() else 'mps'\n",
    "not a device choice": "import torch\nname = 'fast' if torch.cuda.is_available() else 'slow'\n",
    "uncalled is_available": "import torch\nd = 'cuda' if torch.cuda.is_available else 'cpu'\n",
    "device objects, cuda or mps": (
        "import torch\nd = torch.device('cuda') if torch.cuda.is_available() else torch.device('mps')\n"),
    "three-way selection": ("import torch\nd = 'cuda' if torch.cuda.is_available() else "
                            "('mps' if torch.backends.mps.is_available() else 'cpu')\n"),
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv902(code) == []


def test_off_by_default_and_not_tdv102():
    code = "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    assert lint(code) == []


def test_family_9_runs_only_when_named():
    from flake8_torchdevice.rules import select_codes
    assert "TDV902" not in select_codes(select=["TDV"])
    assert "TDV902" not in select_codes()
    assert {"TDV901", "TDV902"} <= select_codes(select=["TDV9"])
    assert {"TDV901", "TDV902"} <= select_codes(extend_select=["TDV9"])
    assert "TDV902" in select_codes(select=["TDV"], extend_select=["TDV902"])
    assert "TDV902" not in select_codes(extend_select=["TDV9"], ignore=["TDV902"])


def test_flake8_shows_family_9_only_when_named(tmp_path):
    from conftest import run_module
    (tmp_path / "d.py").write_text("import torch\nd = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    assert run_module("flake8", ["--select=TDV", "d.py"], cwd=str(tmp_path)).stdout == ""
    for args in (["--extend-select=TDV9"], ["--select=TDV9"], ["--select=TDV", "--extend-select=TDV902"]):
        result = run_module("flake8", [*args, "d.py"], cwd=str(tmp_path))
        assert result.stdout.startswith("d.py:2:5: TDV902 "), args
