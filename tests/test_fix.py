"""`fix`: exact input -> output pairs per fix, and the safety properties (layout,
comments, encodings, line endings, idempotence, files written atomically)."""

from __future__ import annotations

import os
import re
import textwrap

import pytest

from flake8_torchdevice.engine import Options, lint_source
from flake8_torchdevice.fix import FixError, fix_source, restore_line_endings

# What a program that needs CUDA raises with the GPUs hidden: a CPU build, a CUDA build.
CPU_ONLY_FAILURE = "Torch not compiled with CUDA enabled|No CUDA GPUs are available"


def fixed(code: str, **kwargs) -> str:
    """The fixed text of the dedented `code`; also checks a second run changes nothing."""
    result = fix_source(textwrap.dedent(code), "t.py", **kwargs)
    again = fix_source(result.text, "t.py", **kwargs)
    assert again.text == result.text and not again.fixed_findings, "a second fix changed something"
    return result.text


def same(code: str) -> str:
    return textwrap.dedent(code)


# ---------------------------------------------------------------- TDV301


def test_301_adds_cpu_when_no_device_in_scope():
    assert fixed("""\
        import torch
        state = torch.load('m.pt')
        """) == same("""\
        import torch
        state = torch.load('m.pt', map_location="cpu")
        """)


def test_301_uses_device_parameter_with_alias():
    assert fixed("""\
        import torch as th

        def restore(path, device):
            return th.load(path)
        """) == same("""\
        import torch as th

        def restore(path, device):
            return th.load(path, map_location=device)
        """)


def test_301_one_argument_per_line_with_trailing_comma_and_comment():
    assert fixed("""\
        import torch
        state = torch.load(
            'm.pt',
            weights_only=True,  # safe
        )
        """) == same("""\
        import torch
        state = torch.load(
            'm.pt',
            weights_only=True,  # safe
            map_location="cpu",
        )
        """)


def test_301_one_argument_per_line_without_trailing_comma_comment_stays():
    assert fixed("""\
        import torch
        state = torch.load(
            'm.pt',
            weights_only=True  # safe
        )
        """) == same("""\
        import torch
        state = torch.load(
            'm.pt',
            weights_only=True,  # safe
            map_location="cpu"
        )
        """)


def test_301_hanging_indent_is_continued():
    assert fixed("""\
        import torch
        state = torch.load('m.pt',
                           weights_only=True)
        """) == same("""\
        import torch
        state = torch.load('m.pt',
                           weights_only=True,
                           map_location="cpu")
        """)


def test_301_comment_inside_call_kept():
    assert fixed("""\
        import torch
        state = torch.load(  # the weights
            'm.pt'  # from disk
        )
        """) == same("""\
        import torch
        state = torch.load(  # the weights
            'm.pt',  # from disk
            map_location="cpu"
        )
        """)


@pytest.mark.parametrize("call, expected", [
    ("torch.load('m.pt', map_location=None)", 'torch.load(\'m.pt\', map_location="cpu")'),
    ("torch.load('m.pt', None)", 'torch.load(\'m.pt\', "cpu")'),
])
def test_301_none_location_replaced(call, expected):
    assert fixed(f"import torch\nstate = {call}\n") == f"import torch\nstate = {expected}\n"


def test_301_two_fixes_on_one_line():
    assert fixed("""\
        import torch
        a = torch.load('a.pt'); b = torch.load('b.pt')  # both
        """) == same("""\
        import torch
        a = torch.load('a.pt', map_location="cpu"); b = torch.load('b.pt', map_location="cpu")  # both
        """)


def test_301_device_values_in_scope():
    assert fixed("""\
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        class Net(torch.nn.Module):
            def __init__(self, dev):
                super().__init__()
                self.dev = dev

            def restore(self, path):
                return torch.load(path)

        def restore(path, x: torch.Tensor):
            return torch.load(path)

        def main(path):
            return torch.load(path)
        """) == same("""\
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        class Net(torch.nn.Module):
            def __init__(self, dev):
                super().__init__()
                self.dev = dev

            def restore(self, path):
                return torch.load(path, map_location=self.dev)

        def restore(path, x: torch.Tensor):
            return torch.load(path, map_location=x.device)

        def main(path):
            return torch.load(path, map_location=device)
        """)


def test_301_hard_coded_or_absent_devices_are_not_device_aware():
    # a CUDA literal, None, a parameter defaulting to None, an attribute set later in __init__
    assert fixed("""\
        import torch
        device = "cuda"

        def a(path):
            return torch.load(path)

        def b(path, device=None):
            return torch.load(path)

        class Net(torch.nn.Module):
            def __init__(self, path, device):
                self.state = torch.load(path)
                self.device = device
        """, options=Options(enabled=frozenset({"TDV301"}))) == same("""\
        import torch
        device = "cuda"

        def a(path):
            return torch.load(path, map_location="cpu")

        def b(path, device=None):
            return torch.load(path, map_location="cpu")

        class Net(torch.nn.Module):
            def __init__(self, path, device):
                self.state = torch.load(path, map_location=device)
                self.device = device
        """)


def test_noqa_is_not_fixed():
    code = "import torch\nstate = torch.load('m.pt')  # noqa: TDV301\n"
    result = fix_source(code, "t.py")
    assert result.text == code and not result.fixed_findings and not result.remaining_findings


def test_deselected_rule_is_not_fixed():
    code = "import torch\nstate = torch.load('m.pt')\n"
    result = fix_source(code, "t.py", Options(enabled=frozenset({"TDV101"})))
    assert result.text == code and not result.fixed_findings


# ---------------------------------------------------------------- bytes kept


def test_crlf_kept_and_lf_lines_of_a_mixed_file_kept():
    assert fix_source("import torch\r\nstate = torch.load('m.pt')\r\nx = 1\r\n", "t.py").text == (
        "import torch\r\nstate = torch.load('m.pt', map_location=\"cpu\")\r\nx = 1\r\n")
    # a mixed file: unchanged lines keep theirs, changed lines get the most common one
    assert fix_source("import torch\r\nstate = torch.load(\n  'm.pt')\nx = 1\r\n", "t.py").text == (
        "import torch\r\nstate = torch.load(\n  'm.pt',\r\n  map_location=\"cpu\")\r\nx = 1\r\n")


def test_restore_line_endings_new_lines_get_the_usual_ending():
    assert restore_line_endings("a\r\nb\r\nc", "a\nnew\nb\nc") == "a\r\nnew\r\nb\r\nc"
    assert restore_line_endings("a\rb\r", "a\nb\nz\n") == "a\rb\rz\r"


def test_bom_kept():
    assert fix_source("\ufeffimport torch\nstate = torch.load('m.pt')\n", "t.py").text == (
        "\ufeffimport torch\nstate = torch.load('m.pt', map_location=\"cpu\")\n")


def test_fixed_findings_and_what_remains():
    result = fix_source("import torch\nstate = torch.load('m.pt')\nx = torch.zeros(2).cuda()\n", "t.py")
    assert [(f.line, f.col, f.code) for f in result.fixed_findings] == [(2, 8, "TDV301")]
    remaining = [(f.line, f.col, f.code) for f in result.remaining_findings]
    assert remaining == [(f.line, f.col, f.code) for f in lint_source(result.text, "t.py")]
    assert "TDV301" not in {code for _, _, code in remaining}


def test_fixable_flag_on_findings():
    findings = lint_source("import torch\nstate = torch.load('m.pt')\nx = torch.zeros(2).cuda()\n", "t.py")
    assert {f.code: f.fixable for f in findings}["TDV301"] is True


def test_unparsable_output_applies_nothing(monkeypatch):
    import libcst as cst

    from flake8_torchdevice.rules.base import Fix
    from flake8_torchdevice.rules.serialization import LoadWithoutMapLocation

    def broken(self, node, message=None, fix=None, **context):
        # a fix whose output does not parse: `torch.load('m.pt')` -> `torch.load('m.pt') ) (`
        name = cst.Name("x")
        object.__setattr__(name, "value", "x ) (")  # past libcst's validation
        bad = Fix().replace(node, name)
        self._sink.append((node, self.code, message or self.message, bad))

    monkeypatch.setattr(LoadWithoutMapLocation, "report", broken)
    with pytest.raises(FixError, match="does not parse"):
        fix_source("import torch\nstate = torch.load('m.pt')\n", "t.py")


# ---------------------------------------------------------------- --add-device


@pytest.fixture
def cuda_to_device_rule():
    """A rule fixing `x.cuda()` to `x.to(<device>)` the way the fix API docs show,
    registered for the test only (the real TDV101 fix belongs to its rule)."""
    import libcst as cst

    from flake8_torchdevice.analysis import method_call
    from flake8_torchdevice.rules import ALL_RULES
    from flake8_torchdevice.rules.base import Fix, Rule, expression

    class CudaToDevice(Rule):
        code = "TDV990"
        name = "test-cuda-to-device"
        message = "test"
        triggers = r"\.cuda\b"

        def visit_Call(self, node: cst.Call) -> None:
            if method_call(node, "cuda") is None or node.args:
                return
            found = self.device_for_fix(node)
            if found is None:
                return self.report(node)
            device, added = found
            moved = node.with_changes(func=node.func.with_changes(attr=cst.Name("to")),
                                      args=[cst.Arg(expression(device))])
            self.report(node, fix=Fix().replace(node, moved).needs_added_device(added))

    ALL_RULES.append(CudaToDevice)
    yield Options(enabled=frozenset({"TDV990"}))
    ALL_RULES.remove(CudaToDevice)


def test_add_device_adds_one_selection_after_the_imports_with_the_alias(cuda_to_device_rule):
    code = same('''\
        """Doc."""
        from __future__ import annotations

        import torch as th  # the tensor library
        import numpy as np

        model = Net().cuda()


        def step(x, device=None):
            return x.cuda() + th.zeros(1).cuda()
        ''')
    without = fix_source(code, "t.py", cuda_to_device_rule)
    assert without.text == code and not without.fixed_findings
    assert all(not f.fixable for f in without.remaining_findings)
    assert fixed(code, options=cuda_to_device_rule, add_device=True) == same('''\
        """Doc."""
        from __future__ import annotations

        import torch as th  # the tensor library
        import numpy as np

        _device = th.device("cuda" if th.cuda.is_available() else "cpu")

        model = Net().to(_device)


        def step(x, device=None):
            return x.to(_device) + th.zeros(1).to(_device)
        ''')


def test_add_device_needs_torch_in_the_leading_imports(cuda_to_device_rule):
    code = "import numpy\nx = numpy.ones(1)\nimport torch\ny = torch.zeros(1).cuda()\n"
    result = fix_source(code, "t.py", cuda_to_device_rule, add_device=True)
    assert result.text == code and [(f.code, f.fixable) for f in result.remaining_findings] == [("TDV990", False)]


def test_device_in_scope_is_preferred_to_an_added_one(cuda_to_device_rule):
    assert fixed("""\
        import torch

        def step(x, dev):
            return x.cuda()
        """, options=cuda_to_device_rule, add_device=True) == same("""\
        import torch

        def step(x, dev):
            return x.to(dev)
        """)


# ---------------------------------------------------------------- TDV401


def test_401_move_goes_before_the_wrap_with_its_comment():
    # DistributedDataParallel: a move after the wrap is too late (DataParallel moved
    # after the wrap is correct and not reported, so it has nothing to fix).
    assert fixed("""\
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(device):
            model = Net()

            # wrap it
            model = DDP(model, device_ids=[device])  # all GPUs
            print("wrapped")
            model = model.to(device)  # then move
            return model
        """) == same("""\
        from torch.nn.parallel import DistributedDataParallel as DDP

        def main(device):
            model = Net()

            # wrap it
            model = model.to(device)  # then move
            model = DDP(model, device_ids=[device])  # all GPUs
            print("wrapped")
            return model
        """)


def test_401_ddp_with_other_target():
    assert fixed("""\
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = Net()
        ddp = DDP(model, device_ids=[rank])
        model.to(rank)
        """) == same("""\
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = Net()
        model.to(rank)
        ddp = DDP(model, device_ids=[rank])
        """)


@pytest.mark.parametrize("between", [
    "print(model)",  # uses the module
    "device = 'cpu'",  # binds a name the move uses
    "# the move\n",  # a comment above the move
    "if x:\n    pass\nelse:\n    device = 0",  # binds it in a block
])
def test_401_not_fixed_when_the_order_may_matter(between):
    code = ("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\n"
            f"ddp = DDP(model, device_ids=[0])\n{between}\nmodel.to(device)\n")
    result = fix_source(code, "t.py")
    assert result.text == code and [f.code for f in result.remaining_findings] == ["TDV401"]


def test_401_not_fixed_when_the_move_is_in_another_block_or_uses_the_wrapper():
    for code in (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\n"
        "ddp = DDP(model, device_ids=[0])\nif ok:\n    model.to(device)\n",
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\n"
        "ddp = DDP(model, device_ids=[0])\nmodel = model.to(ddp.device)\n",
    ):
        result = fix_source(code, "t.py")
        assert result.text == code and [f.code for f in result.remaining_findings] == ["TDV401"]


def test_401_a_move_of_the_wrapper_becomes_a_move_of_the_module():
    assert fixed("""\
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = Net()
        ddp = DDP(model, device_ids=[rank])
        ddp = ddp.float().to(device)  # to the GPU
        """) == same("""\
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = Net()
        model = model.float().to(device)  # to the GPU
        ddp = DDP(model, device_ids=[rank])
        """)


def test_401_module_built_in_place_gets_the_move_inside():
    assert fixed("""\
        from torch.nn.parallel import DistributedDataParallel

        class Trainer:
            def __init__(self, rank, device):
                self.model = DistributedDataParallel(Encoder(), device_ids=[rank],
                                                     output_device=rank)
                self.model.to(device)
        """) == same("""\
        from torch.nn.parallel import DistributedDataParallel

        class Trainer:
            def __init__(self, rank, device):
                self.model = DistributedDataParallel(Encoder().to(device), device_ids=[rank],
                                                     output_device=rank)
        """)


# ---------------------------------------------------------------- files

LOAD = b"import torch\nstate = torch.load('m.pt')\n"
LOADED = b"import torch\nstate = torch.load('m.pt', map_location=\"cpu\")\n"


def fix_path(path, diff=False):
    from flake8_torchdevice.fix import fix_file

    return fix_file(str(path), Options(), write=not diff)


def test_file_fixed_in_place_keeps_permissions_and_leaves_no_temporary(tmp_path):
    import os
    import stat

    path = tmp_path / "train.py"
    path.write_bytes(LOAD)
    os.chmod(path, 0o751)
    report = fix_path(path)
    assert report.result.changed and path.read_bytes() == LOADED
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751
    assert sorted(os.listdir(tmp_path)) == ["train.py"]


def test_symlink_is_followed_not_replaced(tmp_path):
    import os

    target = tmp_path / "real.py"
    target.write_bytes(LOAD)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    fix_path(link)
    assert os.path.islink(link) and os.readlink(link) == str(target)
    assert target.read_bytes() == LOADED


def test_latin1_coding_line_crlf_and_bom_kept_byte_for_byte(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\r\nimport torch\r\nname = '\xe9t\xe9'\r\n"
                      b"state = torch.load('m.pt')\r\n")
    fix_path(latin)
    assert latin.read_bytes() == (b"# -*- coding: latin-1 -*-\r\nimport torch\r\nname = '\xe9t\xe9'\r\n"
                                  b"state = torch.load('m.pt', map_location=\"cpu\")\r\n")
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + LOAD)
    fix_path(bom)
    assert bom.read_bytes() == b"\xef\xbb\xbf" + LOADED


def test_unparsable_file_reported_and_untouched(tmp_path):
    path = tmp_path / "broken.py"
    data = b"import torch\nstate = torch.load('m.pt'\n"
    path.write_bytes(data)
    report = fix_path(path)
    assert report.skipped.startswith("SyntaxError") and path.read_bytes() == data


def test_diff_writes_nothing(tmp_path):
    from flake8_torchdevice.fix import unified_diff

    path = tmp_path / "train.py"
    path.write_bytes(LOAD)
    report = fix_path(path, diff=True)
    assert path.read_bytes() == LOAD
    assert unified_diff("train.py", report.before, report.result.text) == (
        "--- train.py\n+++ train.py\n@@ -1,2 +1,2 @@\n import torch\n-state = torch.load('m.pt')\n"
        "+state = torch.load('m.pt', map_location=\"cpu\")\n")


def test_file_without_fixable_finding_is_not_rewritten(tmp_path):
    import os

    path = tmp_path / "clean.py"
    path.write_bytes(b"import torch\r\nx = torch.zeros(2).cuda()\r\n")
    before = os.stat(path).st_mtime_ns
    report = fix_path(path)
    assert not report.result.changed and os.stat(path).st_mtime_ns == before


def test_overlapping_fixes_the_inner_one_waits_for_the_next_round():
    # the outer fix rewrites the whole outer call, which holds the inner one: applied
    # first, the inner one in the next round, and both end fixed
    result = fix_source("import torch\nx = torch.load(torch.load('a.pt'))\n", "t.py")
    assert result.text == ("import torch\n"
                           "x = torch.load(torch.load('a.pt', map_location=\"cpu\"), map_location=\"cpu\")\n")
    assert [(f.line, f.col) for f in result.fixed_findings] == [(2, 4), (2, 15)]
    assert result.remaining_findings == []


def test_one_round_takes_only_fixes_that_do_not_overlap():
    from flake8_torchdevice.fix import _fix_round

    text, applied = _fix_round("import torch\nx = torch.load(torch.load('a.pt'))\n", "t.py", Options())
    assert text == "import torch\nx = torch.load(torch.load('a.pt'), map_location=\"cpu\")\n"
    assert [(f.line, f.col) for f in applied] == [(2, 4)]


# ---------------------------------------------------------------- TDV101, TDV102


def test_101_cuda_call_to_the_device_in_scope_keeps_keywords():
    assert fixed("""\
        import torch

        def step(model, batch, device):
            model.cuda()
            return model(batch.cuda(non_blocking=True))  # async copy
        """) == same("""\
        import torch

        def step(model, batch, device):
            model.to(device)
            return model(batch.to(device, non_blocking=True))  # async copy
        """)


def test_101_explicit_index_and_no_device_are_not_fixed():
    code = "import torch\n\ndef step(model, gpu):\n    model.cuda(gpu)\n    return model.cuda()\n"
    result = fix_source(code, "t.py")
    assert result.text == code and [f.fixable for f in result.remaining_findings] == [False, False]


def test_101_and_102_with_add_device_and_an_alias():
    assert fixed("""\
        import torch as th
        import torch.nn as nn

        def build():
            net = nn.Linear(2, 2).cuda()
            return net, th.zeros(2, device="cuda"), th.ones(2).to("cuda:1")
        """, add_device=True) == same("""\
        import torch as th
        import torch.nn as nn

        device = th.device("cuda" if th.cuda.is_available() else "cpu")

        def build():
            net = nn.Linear(2, 2).to(device)
            return net, th.zeros(2, device=device), th.ones(2).to("cuda:1")
        """)


def test_102_where_the_device_is_chosen_gets_the_selection_idiom_and_uses_follow_it():
    # round 1 turns the constant into a selection; round 2 uses it (nothing is added);
    # map_location has a fallback of its own, "cpu", taken in round 1
    assert fixed("""\
        import torch
        DEVICE = torch.device('cuda')
        torch.set_default_device("cuda")

        def run(x):
            return x.to("cuda"), torch.load("m.pt", map_location="cuda")
        """, add_device=True) == same("""\
        import torch
        DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        torch.set_default_device("cuda" if torch.cuda.is_available() else "cpu")

        def run(x):
            return x.to(DEVICE), torch.load("m.pt", map_location="cpu")
        """)


def test_only_one_finding_an_editors_quick_fix():
    code = "import torch\nDEVICE = torch.device('cuda')\nx = torch.ones(2).cuda()\n"
    findings = lint_source(code, "t.py", Options(add_device=True))
    cuda_call = next(f for f in findings if f.code == "TDV101")
    result = fix_source(code, "t.py", add_device=True, only=cuda_call)
    assert result.text == ("import torch\n\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n"
                           "DEVICE = torch.device('cuda')\nx = torch.ones(2).to(device)\n")


def test_104_query_without_call_is_called_and_guards_what_is_under_it():
    result = fix_source("""\
import torch
from torch.cuda import is_available

if torch.cuda.is_available:  # always true
    x = torch.ones(2).cuda()
ok = is_available or False
""", "t.py")
    assert result.text == """\
import torch
from torch.cuda import is_available

if torch.cuda.is_available():  # always true
    x = torch.ones(2).cuda()
ok = is_available() or False
"""
    assert [f.code for f in result.fixed_findings] == ["TDV104", "TDV104"]
    assert result.remaining_findings == []  # the .cuda() is guarded now


# ---------------------------------------------------------------- TDV201


def test_201_gets_the_device_of_the_tensor_parameter_it_meets():
    assert fixed("""\
        import torch as th
        import torch.nn as nn

        class Head(nn.Module):
            def forward(self, feats, x):
                mask = th.ones(x.shape[0])
                pad = th.zeros(
                    3,  # width
                    4,
                )
                return x * mask[:, None], th.cat([pad, feats])
        """) == same("""\
        import torch as th
        import torch.nn as nn

        class Head(nn.Module):
            def forward(self, feats, x):
                mask = th.ones(x.shape[0], device=x.device)
                pad = th.zeros(
                    3,  # width
                    4,
                    device=feats.device,
                )
                return x * mask[:, None], th.cat([pad, feats])
        """)


def test_201_mask_and_comparison_partners_and_a_device_parameter():
    assert fixed("""\
        import torch

        def masked(x: torch.Tensor):
            return torch.arange(8)[x > 0]

        def accuracy(logits, labels, device):
            correct = torch.zeros(1)
            correct += (logits.argmax(1) == labels.to(device)).sum()
            return correct

        def hits(images, labels, device):
            total = torch.zeros(1)
            total += (model(images.to(device)) == labels.to(device)).sum()
            return total
        """) == same("""\
        import torch

        def masked(x: torch.Tensor):
            return torch.arange(8, device=x.device)[x > 0]

        def accuracy(logits, labels, device):
            correct = torch.zeros(1, device=logits.device)
            correct += (logits.argmax(1) == labels.to(device)).sum()
            return correct

        def hits(images, labels, device):
            total = torch.zeros(1, device=device)
            total += (model(images.to(device)) == labels.to(device)).sum()
            return total
        """)


def test_201_meeting_a_local_in_a_loss_gets_the_first_input_s_device():
    """In forward or a loss the inputs are on the model's device; `noisy` is not yet
    bound where the noise is drawn, `x0` is."""
    assert fixed("""\
        import torch
        import torch.nn.functional as F

        def diffusion_loss(model, x0, steps):
            noise = torch.randn(x0.shape)
            noisy = x0 * 0.9 + noise * 0.1
            return F.mse_loss(model(noisy), noise)
        """) == same("""\
        import torch
        import torch.nn.functional as F

        def diffusion_loss(model, x0, steps):
            noise = torch.randn(x0.shape, device=x0.device)
            noisy = x0 * 0.9 + noise * 0.1
            return F.mse_loss(model(noisy), noise)
        """)


def test_201_not_fixed_when_what_it_meets_is_bound_later():
    """`h` does not exist yet where the factory stands: no fix rather than a NameError."""
    code = same("""\
        import torch

        def add_bias(x: torch.Tensor):
            bias = torch.zeros(4)
            h = x.to(target)
            return h + bias
        """)
    result = fix_source(code, "t.py")
    assert result.text == code
    assert [(f.code, f.line, f.fixable) for f in result.remaining_findings] == [("TDV201", 4, False)]


# ---------------------------------------------------------------- TDV501


def test_501_deprecated_amp_becomes_the_device_generic_api_with_an_alias():
    assert fixed("""\
        import torch as th
        from torch.cuda.amp import GradScaler, autocast

        device = "cuda" if th.cuda.is_available() else "cpu"
        scaler = GradScaler(
            init_scale=1024,  # small steps
        )
        with autocast(enabled=True):
            pass
        with th.cuda.amp.autocast(dtype=th.bfloat16):
            pass
        """) == same("""\
        import torch as th
        from torch.cuda.amp import GradScaler, autocast

        device = "cuda" if th.cuda.is_available() else "cpu"
        scaler = th.amp.GradScaler(
            th.device(device).type,
            init_scale=1024,  # small steps
        )
        with th.autocast(th.device(device).type, enabled=True):
            pass
        with th.autocast(th.device(device).type, dtype=th.bfloat16):
            pass
        """)


def test_501_literal_type_becomes_the_type_of_the_device_parameter():
    assert fixed("""\
        import torch

        def train_step(model, x, device):
            with torch.autocast("cuda"):
                return model(x)
        """) == same("""\
        import torch

        def train_step(model, x, device):
            with torch.autocast(torch.device(device).type):
                return model(x)
        """)


def test_501_with_add_device_uses_the_added_selection_and_check_announced_it():
    """With --add-device the deprecated API is fixable up front, like the .cuda() next to
    it: the fixes that add the selection and the one that uses it are counted together
    (PyTorch's DDP amp test: check said 2 fixable, fix fixed 4)."""
    code = textwrap.dedent("""\
        import torch
        from torch.cuda.amp import GradScaler

        def train(model):
            model = model.cuda()
            scaler = GradScaler()
            return scaler
        """)
    before = [f for f in lint_source(code, "t.py", Options(add_device=True))]
    assert [(f.line, f.col, f.code, f.fixable) for f in before] == [
        (5, 18, "TDV101", True), (6, 13, "TDV501", True)]
    result = fix_source(code, "t.py", add_device=True)
    assert sorted(f.code for f in result.fixed_findings) == ["TDV101", "TDV501"]
    assert result.text == same("""\
        import torch
        from torch.cuda.amp import GradScaler

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        def train(model):
            model = model.to(device)
            scaler = torch.amp.GradScaler(torch.device(device).type)
            return scaler
        """)
    # without the flag neither is offered: nothing in scope to name
    assert not any(f.fixable for f in lint_source(code, "t.py", Options()))


@pytest.mark.parametrize("code", [
    # positional autocast arguments mean something else in torch.autocast
    "import torch\ndevice = torch.device(name)\nwith torch.cuda.amp.autocast(True):\n    pass\n",
    # no device-aware value in scope
    "import torch\nscaler = torch.cuda.amp.GradScaler()\n",
    # the name torch is not imported: nothing to write the new API with
    "from torch.cuda.amp import GradScaler\n\ndef make(device):\n    return GradScaler()\n",
    # decorators run where the class is defined
    "import torch\ndevice = torch.device(name)\n"
    "class F(torch.autograd.Function):\n    @torch.cuda.amp.custom_fwd\n    def forward(ctx, x):\n        return x\n",
])
def test_501_not_fixed(code):
    result = fix_source(code, "t.py")
    assert result.text == code
    assert [f.code for f in result.remaining_findings] == ["TDV501"]


def test_501_fixed_code_runs_without_warnings_on_a_cpu_only_torch(tmp_path):
    """The deprecated API warns and switches itself off without CUDA; its fix runs
    autocast and the scaler for the CPU, warning-free (real torch, CUDA hidden)."""
    import subprocess
    import sys

    code = textwrap.dedent("""\
        import torch
        from torch.cuda.amp import GradScaler, autocast

        device = "cuda" if torch.cuda.is_available() else "cpu"
        scaler = GradScaler(enabled=True)
        with autocast(dtype=torch.bfloat16):
            y = torch.ones(2, 2) @ torch.ones(2, 2)
        assert y.dtype == torch.bfloat16, y.dtype
        """)
    script = tmp_path / "amp.py"
    script.write_text(fixed(code))
    env = {"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-W", "error", str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    script.write_text(code)  # and the original does warn there
    done = subprocess.run([sys.executable, "-W", "error", str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode != 0 and "Warning" in done.stderr


# ---------------------------------------------------------------- TDV103


def test_103_legacy_constructors_become_factories_with_dtype_and_device():
    assert fixed("""\
        import torch as th

        def make(x, device):
            a = th.cuda.FloatTensor([0.5, 1])
            b = th.cuda.LongTensor(2, 3)
            c = th.cuda.FloatTensor(
                8,  # slots
            )
            f = th.cuda.ByteTensor()
            e = x.type(th.cuda.HalfTensor)
            return a, b, c, e, f
        """) == same("""\
        import torch as th

        def make(x, device):
            a = th.tensor([0.5, 1], dtype=th.float32, device=device)
            b = th.empty(2, 3, dtype=th.int64, device=device)
            c = th.empty(
                8,  # slots
                dtype=th.float32,
                device=device,
            )
            f = th.empty(0, dtype=th.uint8, device=device)
            e = x.to(device, th.float16)
            return a, b, c, e, f
        """)


def test_103_with_add_device_and_from_import():
    assert fixed("""\
        import torch
        from torch.cuda import FloatTensor

        anchors = FloatTensor([[1, 2], [3, 4]])
        """, add_device=True) == same("""\
        import torch
        from torch.cuda import FloatTensor

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        anchors = torch.tensor([[1, 2], [3, 4]], dtype=torch.float32, device=device)
        """)


@pytest.mark.parametrize("line", [
    "t = torch.cuda.FloatTensor(x)",  # data, a size, a tensor or an array: unknown
    "t = torch.cuda.FloatTensor(x.size(), device=d)",
    "t = x.type(torch.cuda.FloatTensor, non_blocking=True)",
    "torch.set_default_tensor_type(torch.cuda.FloatTensor)",
])
def test_103_not_fixed(line):
    code = f"import torch\n\ndef f(x, device, d):\n    {line}\n"
    result = fix_source(code, "t.py")
    assert result.text == code
    assert [f.code for f in result.remaining_findings] == ["TDV103"]


def test_103_fixed_constructors_run_on_a_cpu_only_torch():
    """What the fix writes runs where the legacy CUDA types do not exist."""
    import torch

    device = torch.device("cpu")
    a = torch.tensor([0.5, 1], dtype=torch.float32, device=device)
    b = torch.empty(2, 3, dtype=torch.int64, device=device)
    e = torch.ones(2).to(device, torch.float16)
    assert (a.dtype, b.shape, e.dtype) == (torch.float32, (2, 3), torch.float16)
    # The legacy type itself: no such type on a CPU build; on a CUDA build whose GPUs
    # the suite hides (conftest.py), CUDA's lazy initialisation fails instead.
    with pytest.raises((TypeError, RuntimeError), match="not available|CUDA GPUs|NVIDIA driver"):
        torch.cuda.FloatTensor([0.5, 1])


# ---------------------------------------------------------------- the device a fix writes (issue 15)
# In this order: a tensor on the model's device (`x.device` of forward's input, `p.device`
# of an optimizer's parameters), the module's own parameters' device, a device variable in
# scope, and only then (with --add-device) the added selection.


def test_device_choice_1_a_tensor_on_the_model_s_device():
    """forward's first tensor input (`self.fc(x)`: a layer's input), an optimizer's `p`:
    preferred to adding a selection, even with --add-device."""
    assert fixed("""\
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                h = self.fc(x)
                return h * torch.ones(4).cuda()

        class Scaled(torch.optim.SGD):
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        p.mul_(torch.ones(1).cuda())
                return super().step(closure)
        """, add_device=True) == same("""\
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                h = self.fc(x)
                return h * torch.ones(4).to(x.device)

        class Scaled(torch.optim.SGD):
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        p.mul_(torch.ones(1).to(p.device))
                return super().step(closure)
        """)


def test_device_choice_1_201_the_first_parameter_known_to_be_a_tensor():
    """`steps` is a number (`range(steps)`), `mask` may be None, `x` goes to a layer: the
    noise, which meets no parameter, gets `x.device`, not `steps.device`."""
    assert fixed("""\
        from typing import Optional

        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, steps, mask: Optional[torch.Tensor] = None, *, x):
                noise = torch.randn(4)
                h = self.fc(x)
                for _ in range(steps):
                    h = self.fc(h)
                return h.masked_fill(mask, 0) + noise
        """) == same("""\
        from typing import Optional

        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, steps, mask: Optional[torch.Tensor] = None, *, x):
                noise = torch.randn(4, device=x.device)
                h = self.fc(x)
                for _ in range(steps):
                    h = self.fc(h)
                return h.masked_fill(mask, 0) + noise
        """)


def test_device_choice_2_the_module_s_parameters_when_no_tensor_is_in_scope():
    """`n` is a number, `images` is what is moved, forward moves its own input (so its
    inputs may arrive elsewhere): the device of the parameters the class builds. Not in
    `__init__` (the module is not moved yet), not in a class without parameters."""
    assert fixed("""\
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(4))

        class VAE(Block):
            def __init__(self):
                super().__init__()
                self.decoder = nn.Sequential(nn.ReLU(), nn.Linear(8, 4))

            def sample(self, n):
                z = torch.randn(n, 8)
                return self.decoder(z)

            def predict(self, images):
                return self(images.cuda())

            def forward(self, x):
                x = x.cuda()
                return self.decoder(x) + torch.zeros(4).cuda()

        class Wrapper(nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = Block()
                self.relu = nn.ReLU()

            def go(self, n):
                return self.inner.w * torch.arange(n).cuda()

        class Stateless(nn.Module):
            def __init__(self):
                super().__init__()
                self.relu = nn.ReLU()
                self.norm = nn.LayerNorm(4, elementwise_affine=False)

            def go(self, n):
                return torch.arange(n).cuda()
        """) == same("""\
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(4))

        class VAE(Block):
            def __init__(self):
                super().__init__()
                self.decoder = nn.Sequential(nn.ReLU(), nn.Linear(8, 4))

            def sample(self, n):
                z = torch.randn(n, 8, device=next(self.parameters()).device)
                return self.decoder(z)

            def predict(self, images):
                return self(images.to(next(self.parameters()).device))

            def forward(self, x):
                x = x.to(next(self.parameters()).device)
                return self.decoder(x) + torch.zeros(4).to(next(self.parameters()).device)

        class Wrapper(nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = Block()
                self.relu = nn.ReLU()

            def go(self, n):
                return self.inner.w * torch.arange(n).to(next(self.parameters()).device)

        class Stateless(nn.Module):
            def __init__(self):
                super().__init__()
                self.relu = nn.ReLU()
                self.norm = nn.LayerNorm(4, elementwise_affine=False)

            def go(self, n):
                return torch.arange(n).cuda()
        """)


def test_device_choice_3_a_device_variable_in_scope():
    """`self.device` of a module without parameters, `device` bound before the factory
    (not one bound after it), `args.device`; a tensor parameter of a plain function is
    not known to be on the model's device, and one the function moves is not there yet."""
    assert fixed("""\
        import torch
        import torch.nn as nn

        class Sampler(nn.Module):
            def __init__(self, net, device):
                super().__init__()
                self.net = net
                self.device = device

            def sample(self, n):
                z = torch.randn(n, 8)
                return self.net(z)

        def train(args, model, x: torch.Tensor, y):
            model.cuda()
            return model(x.cuda()), y.cuda(), args.device

        def run(args):
            device = args.device
            return torch.zeros(2).cuda()
        """) == same("""\
        import torch
        import torch.nn as nn

        class Sampler(nn.Module):
            def __init__(self, net, device):
                super().__init__()
                self.net = net
                self.device = device

            def sample(self, n):
                z = torch.randn(n, 8, device=self.device)
                return self.net(z)

        def train(args, model, x: torch.Tensor, y):
            model.cuda()
            return model(x.cuda()), y.cuda(), args.device

        def run(args):
            device = args.device
            return torch.zeros(2).to(device)
        """)


def test_device_choice_4_the_added_selection_only_when_nothing_is_in_scope():
    """With --add-device, `.cuda()` with nothing in scope gets the added selection; a
    factory without device= gets none (no fix, as before: `h` is bound after it)."""
    assert fixed("""\
        import torch

        def train(model, x: torch.Tensor, y):
            model.cuda()
            return model(x.cuda()), y.cuda()
        """, add_device=True) == same("""\
        import torch

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        def train(model, x: torch.Tensor, y):
            model.to(device)
            return model(x.to(device)), y.to(device)
        """)
    code = same("""\
        import torch

        def scale(x: torch.Tensor):
            w = torch.ones(3)
            h = x.to(target)
            return h * w
        """)
    result = fix_source(code, "t.py", add_device=True)
    assert result.text == code
    assert [(f.code, f.line, f.fixable) for f in result.remaining_findings] == [("TDV201", 4, False)]


def test_103_type_with_the_added_device_gets_the_selection():
    """`x.type(torch.cuda.HalfTensor)` with nothing in scope: the selection is added (the
    fix used to leave the placeholder name in the code)."""
    assert fixed("""\
        import torch

        def half(x):
            return x.type(torch.cuda.HalfTensor)
        """, add_device=True) == same("""\
        import torch

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        def half(x):
            return x.to(device, torch.float16)
        """)


def test_fixed_devices_run_on_a_cpu_only_torch_and_on_the_emulated_gpu(tmp_path):
    """Each choice in one program: it fails on a CPU-only torch; fixed, it runs there and
    on the emulated GPU (where every device mix raises), on the GPU throughout."""
    import subprocess
    import sys

    code = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                h = self.fc(x)
                return h + torch.ones(4).cuda()

            def sample(self, n):
                z = torch.randn(n, 4)
                return self.fc(z)


        class Scaled(torch.optim.SGD):
            @torch.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        p.mul_(torch.ones(1).cuda())
                return super().step(closure)


        def run(device):
            net = Net().to(device)
            opt = Scaled(net.parameters(), lr=0.1)
            x = torch.randn(2, 4).cuda()
            loss = net(x).sum() + net.sample(3).sum()
            loss.backward()
            opt.step()
            return loss.device


        model = Net().cuda()
        print(run("cuda" if torch.cuda.is_available() else "cpu"), model.sample(1).device)
        """)
    script = tmp_path / "train.py"
    script.write_text(code)
    env = {"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode != 0 and re.search(CPU_ONLY_FAILURE, done.stderr), done.stderr[-2000:]
    text = fixed(code, add_device=True)
    selection = '_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
    assert text == code.replace("import torch.nn as nn\n", "import torch.nn as nn\n\n" + selection).replace(
        "torch.ones(4).cuda()", "torch.ones(4).to(x.device)").replace(
        "torch.randn(n, 4)", "torch.randn(n, 4, device=next(self.parameters()).device)").replace(
        "torch.ones(1).cuda()", "torch.ones(1).to(p.device)").replace(
        "torch.randn(2, 4).cuda()", "torch.randn(2, 4).to(device)").replace("Net().cuda()", "Net().to(_device)")
    script.write_text(text)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert (done.returncode, done.stdout) == (0, "cpu cpu\n"), done.stderr[-2000:]
    done = subprocess.run([sys.executable, "-m", "flake8_torchdevice.emulate", str(script)], capture_output=True,
                          text=True, env={**env, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=300)
    assert (done.returncode, done.stdout) == (0, "cuda:0 cuda:0\n"), done.stderr[-2000:]


def test_a_trainers_init_tensor_gets_the_device_its_init_set():
    assert fixed("""\
        import torch
        class Agent:
            def __init__(self, n, device):
                self.device = device
                self.state = torch.zeros(n, 4, device=self.device)
                self.mask = torch.ones(n)
            def act(self, policy):
                return policy(self.state * self.mask.unsqueeze(1))
        """) == textwrap.dedent("""\
        import torch
        class Agent:
            def __init__(self, n, device):
                self.device = device
                self.state = torch.zeros(n, 4, device=self.device)
                self.mask = torch.ones(n, device=self.device)
            def act(self, policy):
                return policy(self.state * self.mask.unsqueeze(1))
        """)


def test_201_a_legacy_constructor_is_moved_and_runs_on_the_emulated_gpu(tmp_path):
    """`torch.Tensor([...], device="cuda")` raises ("legacy constructor expects device type:
    cpu"): the fix moves the new tensor where the input is. The original fails on the
    emulated GPU, the fixed program runs there."""
    import subprocess
    import sys

    code = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Policy(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                h = self.fc(x)
                return torch.max(h, torch.Tensor([1e-6])) * torch.FloatTensor(h.shape[0], 1).fill_(2.0)


        device = "cuda" if torch.cuda.is_available() else "cpu"
        print(Policy().to(device)(torch.randn(2, 4, device=device)).device)
        """)
    text = fixed(code)
    assert text == code.replace("torch.Tensor([1e-6])", "torch.Tensor([1e-6]).to(x.device)").replace(
        "torch.FloatTensor(h.shape[0], 1)", "torch.FloatTensor(h.shape[0], 1).to(x.device)")
    env = {"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path)}
    script = tmp_path / "policy.py"
    for program, expected in ((code, 1), (text, 0)):
        script.write_text(program)
        done = subprocess.run([sys.executable, "-m", "flake8_torchdevice.emulate", str(script)], capture_output=True,
                              text=True, env=env, timeout=300)
        assert done.returncode == expected, done.stderr[-2000:]
        if expected:
            assert "Expected all tensors to be on the same device" in done.stderr
        else:
            assert done.stdout == "cuda:0\n"
