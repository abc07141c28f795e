"""TDV501 cuda-amp: the deprecated torch.cuda.amp API anywhere, and a literal "cuda"
device type for autocast / GradScaler outside a CUDA guard."""

from __future__ import annotations

import pytest

from conftest import lint

ONLY = frozenset({"TDV501"})


def tdv501(code: str, **options):
    return lint(code, enabled=ONLY, **options)


REPORTED = {
    "torch.cuda.amp.autocast()": ("import torch\nwith torch.cuda.amp.autocast():\n    pass\n", [(2, 5)]),
    "from torch.cuda.amp import": (
        "from torch.cuda.amp import GradScaler, autocast\nscaler = GradScaler()\nwith autocast(enabled=amp):\n"
        "    pass\n", [(2, 9), (3, 5)]),
    "from torch.cuda import amp": ("from torch.cuda import amp\nscaler = amp.GradScaler()\n", [(2, 9)]),
    "import torch.cuda.amp as amp": ("import torch.cuda.amp as amp\nctx = amp.autocast()\n", [(2, 6)]),
    "aliased": ("from torch.cuda.amp import autocast as ac\ndef f():\n    with ac():\n        pass\n", [(3, 9)]),
    "custom_fwd decorator": (
        "import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n"
        "    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n    def forward(ctx, x):\n        return x\n",
        [(4, 5)]),
    "custom_bwd bare decorator": (
        "from torch.cuda.amp import custom_bwd\nclass F:\n    @custom_bwd\n    def backward(ctx, g):\n        return g\n",
        [(3, 5)]),
    "deprecated API under a guard": (
        "import torch\nif torch.cuda.is_available():\n    scaler = torch.cuda.amp.GradScaler()\n", [(3, 13)]),
    "deprecated API switched off": ("import torch\nwith torch.cuda.amp.autocast(enabled=False):\n    pass\n", [(2, 5)]),
    "deprecated API, not called": ("import torch\nScaler = torch.cuda.amp.GradScaler\n", [(2, 9)]),
    "torch.autocast('cuda')": ("import torch\nwith torch.autocast('cuda'):\n    pass\n", [(2, 20)]),
    "device_type keyword": ("import torch\nwith torch.autocast(device_type='cuda', dtype=torch.float16):\n    pass\n",
                            [(2, 32)]),
    "torch.amp.autocast": ("import torch\nwith torch.amp.autocast('cuda', enabled=use_amp):\n    pass\n", [(2, 24)]),
    "torch.amp.GradScaler('cuda')": ("import torch\nscaler = torch.amp.GradScaler('cuda')\n", [(2, 30)]),
    "GradScaler(device=...)": ("import torch\nscaler = torch.amp.GradScaler(device='cuda')\n", [(2, 37)]),
    "from torch import autocast": ("from torch import autocast\nwith autocast('cuda'):\n    pass\n", [(2, 14)]),
    "from torch.amp import GradScaler": ("from torch.amp import GradScaler\ns = GradScaler('cuda')\n", [(2, 15)]),
    "uncalled is_available is no guard": (
        "import torch\nif torch.cuda.is_available:\n    ctx = torch.autocast('cuda')\n", [(3, 25)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv501(code) == [(line, col, "TDV501") for line, col in expected]


NOT_REPORTED = {
    "device.type": "import torch\nwith torch.autocast(device.type):\n    pass\n",
    "device_type variable": "import torch\nwith torch.autocast(device_type=dev_type, dtype=torch.bfloat16):\n    pass\n",
    "selection": "import torch\nwith torch.autocast('cuda' if use_cuda else 'cpu'):\n    pass\n",
    "cpu": "import torch\nwith torch.autocast('cpu', dtype=torch.bfloat16):\n    pass\n",
    "scaler with device.type": "import torch\nscaler = torch.amp.GradScaler(device.type)\n",
    "scaler without a device": "import torch\nscaler = torch.amp.GradScaler(enabled=False)\n",
    "guarded by is_available": "import torch\nif torch.cuda.is_available():\n    ctx = torch.autocast('cuda')\n",
    "guarded by a flag": "import torch\nif args.cuda:\n    scaler = torch.amp.GradScaler('cuda')\n",
    "guarded by device type": "import torch\nif device.type == 'cuda':\n    ctx = torch.autocast('cuda')\n",
    "guarded ternary": "import torch\nctx = torch.autocast('cuda') if torch.cuda.is_available() else nullcontext()\n",
    "autocast switched off": "from torch.amp import autocast\n@autocast('cuda', enabled=False)\ndef f(x):\n    return x\n",
    "import alone": "from torch.cuda.amp import autocast\n",
    "another library's autocast": "from apex import amp\nmodel, opt = amp.initialize(model, opt)\nwith autocast('cuda'):\n    pass\n",
    "torch.cpu.amp": "import torch\nwith torch.cpu.amp.autocast():\n    pass\n",
    "local autocast": "def autocast(kind):\n    return kind\nwith autocast('cuda'):\n    pass\n",
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv501(code) == []


def test_messages_name_the_replacement():
    from flake8_torchdevice.engine import Options, lint_source
    source = ("from torch.cuda.amp import GradScaler\nimport torch\nscaler = GradScaler()\n"
              "with torch.autocast('cuda'):\n    pass\n")
    messages = [f.message for f in lint_source(source, "t.py", Options(enabled=ONLY))]
    assert messages == [
        "torch.cuda.amp.GradScaler is deprecated and CUDA-only (off on every other device); "
        "use torch.amp.GradScaler(device.type)",
        'torch.autocast("cuda") is off on every other device; use torch.autocast(device.type) '
        "with the device the model runs on"]


def test_a_decorator_is_told_its_replacement_with_the_type_named():
    # no device is in scope where a class is defined (torch-ngp's grid encoder)
    from flake8_torchdevice.engine import Options, lint_source
    source = ("import torch\nclass F(torch.autograd.Function):\n    @staticmethod\n"
              "    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n    def forward(ctx, x):\n        return x\n")
    assert [f.message for f in lint_source(source, "t.py", Options(enabled=ONLY))] == [
        "torch.cuda.amp.custom_fwd is deprecated and CUDA-only (off on every other device); "
        'use torch.amp.custom_fwd(device_type="cuda"), its replacement']


def test_literal_device_type_is_not_also_tdv102():
    assert lint("import torch\nwith torch.autocast('cuda'):\n    pass\n") == [(2, 20, "TDV501")]


# A type annotation is not a use (issue 15): the annotation names a type, nothing runs.
ANNOTATIONS = {
    "parameter": "import torch\nfrom typing import Optional\n"
                 "def fit(model, scaler: Optional[torch.cuda.amp.GradScaler] = None):\n    return scaler\n",
    "imported name in a parameter": "from torch.cuda.amp import GradScaler\ndef fit(scaler: GradScaler):\n"
                                    "    return scaler\n",
    "return annotation": "import torch\ndef make() -> torch.cuda.amp.GradScaler:\n    return make_scaler()\n",
    "dataclass field": "import torch\nfrom dataclasses import dataclass\nfrom typing import Optional\n@dataclass\n"
                       "class State:\n    scaler: Optional[torch.cuda.amp.GradScaler] = None\n",
    "variable annotation": "import torch\nscaler: torch.cuda.amp.GradScaler\n",
    "string annotation": "import torch\ndef fit(scaler: 'torch.cuda.amp.GradScaler' = None) -> 'torch.cuda.amp.autocast':\n"
                         "    return scaler\n",
    "string inside a subscript": "import torch\nfrom typing import Optional\n"
                                 "scaler: Optional['torch.cuda.amp.GradScaler'] = None\n",
}


@pytest.mark.parametrize("code", ANNOTATIONS.values(), ids=list(ANNOTATIONS))
def test_annotation_is_not_a_use(code):
    assert tdv501(code) == []


def test_annotated_assignment_still_reports_its_value():
    code = "import torch\nfrom typing import Optional\nscaler: Optional[torch.cuda.amp.GradScaler] = torch.cuda.amp.GradScaler()\n"
    assert tdv501(code) == [(3, 46, "TDV501")]


def test_annotation_of_a_parameter_does_not_hide_its_default():
    code = "import torch\ndef fit(scaler: torch.cuda.amp.GradScaler = torch.cuda.amp.GradScaler()):\n    return scaler\n"
    assert tdv501(code) == [(2, 44, "TDV501")]


# An import with an `except ImportError:` fallback resolves to the `try` arm, what runs
# first (issue 15, part 2).
IMPORT_FALLBACKS_NOT_REPORTED = {
    "another library first": "try:\n    from apex import amp\nexcept ImportError:\n    from torch.cuda import amp\n"
                             "scaler = amp.GradScaler()\n",
    "ModuleNotFoundError": "try:\n    from mylib.amp import GradScaler\nexcept ModuleNotFoundError:\n"
                           "    from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n",
    "tuple of errors": "try:\n    from mylib.amp import autocast\nexcept (ImportError, AttributeError):\n"
                       "    from torch.cuda.amp import autocast\nwith autocast():\n    pass\n",
    "in a function": "def fit():\n    try:\n        from mylib import autocast\n    except ImportError:\n"
                     "        from torch.cuda.amp import autocast\n    with autocast():\n        pass\n",
    "import module as": "try:\n    import mylib.amp as amp\nexcept ImportError:\n    import torch.cuda.amp as amp\n"
                        "scaler = amp.GradScaler()\n",
    # if/elif/else, a nested try with finally, a with block: every clause of the try arm counts
    "nested blocks of the try arm": (
        "try:\n    if X:\n        from mylib import amp\n    elif Y:\n        import mylib2 as amp\n    else:\n"
        "        pass\n    try:\n        import a\n    except ImportError:\n        import b\n    finally:\n"
        "        import c\n    with ctx:\n        import d\nexcept ImportError:\n    from torch.cuda import amp\n"
        "scaler = amp.GradScaler()\n"),
}


@pytest.mark.parametrize("code", IMPORT_FALLBACKS_NOT_REPORTED.values(), ids=list(IMPORT_FALLBACKS_NOT_REPORTED))
def test_import_fallback_resolves_to_the_try_arm(code):
    assert tdv501(code) == []


IMPORT_FALLBACKS_REPORTED = {
    "torch first, a stand-in after": (
        "try:\n    from torch.cuda.amp import autocast\nexcept ImportError:\n"
        "    from contextlib import nullcontext as autocast\nwith autocast():\n    pass\n", [(5, 5)]),
    "torch first, None after": (
        "try:\n    from torch.cuda.amp import GradScaler\nexcept ImportError:\n    GradScaler = None\n"
        "scaler = GradScaler()\n", [(5, 9)]),
    # only what the `try` arm imported keeps its binding: a name only the fallback binds is the fallback's
    "bound by the fallback alone": (
        "try:\n    import mylib\nexcept ImportError:\n    from torch.cuda import amp\nscaler = amp.GradScaler()\n",
        [(5, 9)]),
    # another handler than an import fallback binds as usual
    "other exception": (
        "try:\n    from mylib import amp\nexcept RuntimeError:\n    from torch.cuda import amp\n"
        "scaler = amp.GradScaler()\n", [(5, 9)]),
    # after the try statement, a rebinding counts again
    "rebound after the try": (
        "try:\n    from mylib import amp\nexcept ImportError:\n    pass\nfrom torch.cuda import amp\n"
        "scaler = amp.GradScaler()\n", [(6, 9)]),
}


@pytest.mark.parametrize("code, expected", IMPORT_FALLBACKS_REPORTED.values(), ids=list(IMPORT_FALLBACKS_REPORTED))
def test_import_fallback_reported(code, expected):
    assert tdv501(code) == [(line, col, "TDV501") for line, col in expected]


# Issue 15, part 4: mixed precision in the CUDA arm of a device dispatch.
CUDA_ARMS = {
    "device.type ==": "if device.type == 'cuda':",
    "self.device.type ==": "if self.device.type == \"cuda\":",
    "args.device ==": "if args.device == 'cuda':",
    "'cuda' in str(device)": "if 'cuda' in str(device):",
    "str(device).startswith": "if str(device).startswith('cuda'):",
    "args.device.startswith": "if args.device.startswith('cuda'):",
    "device_type variable": "if device_type == 'cuda':",
    "device == torch.device": "if device == torch.device('cuda'):",
    "all-CUDA membership": "if device in ('cuda', 'cuda:0'):",
    "accelerator == 'gpu'": "if accelerator == 'gpu':",
    "enum member": "if device_type is DeviceType.CUDA:",
    "combined with and": "if args.amp and device.type == 'cuda':",
    "is_available": "if torch.cuda.is_available():",
}
ARM_BODY = """\
import torch
from torch.amp import GradScaler
def setup(self, device, device_type, accelerator, args):
    {test}
        scaler = GradScaler("cuda")
        ctx = torch.amp.autocast("cuda")
        ctx = torch.autocast(device_type="cuda", dtype=torch.float16)
        dev = torch.device("cuda")
    else:
        scaler = GradScaler("cuda")
    return scaler, ctx, dev
"""


@pytest.mark.parametrize("test", CUDA_ARMS.values(), ids=list(CUDA_ARMS))
def test_cuda_arm_of_a_device_dispatch_is_not_reported(test):
    # the else arm runs without CUDA: reported there
    assert lint(ARM_BODY.format(test=test), enabled=frozenset({"TDV102", "TDV501"})) == [(10, 28, "TDV501")]


NEGATED_ARMS = {
    "device.type !=": "if device.type != 'cuda':",
    "'cuda' not in": "if 'cuda' not in str(device):",
    "enum is not": "if device_type is not DeviceType.CUDA:",
    "not is_available": "if not torch.cuda.is_available():",
}
NEGATED_BODY = """\
import torch
from torch.amp import GradScaler
def setup(device, device_type):
    {test}
        scaler = GradScaler("cuda")
    else:
        scaler = GradScaler("cuda")
        ctx = torch.autocast("cuda")
    return scaler, ctx
"""


@pytest.mark.parametrize("test", NEGATED_ARMS.values(), ids=list(NEGATED_ARMS))
def test_else_arm_of_a_negated_dispatch_is_not_reported(test):
    assert tdv501(NEGATED_BODY.format(test=test)) == [(5, 28, "TDV501")]


def test_code_after_an_early_return_for_other_devices_is_not_reported():
    code = ("import torch\ndef make_scaler(device):\n    if device.type != 'cuda':\n        return None\n"
            "    return torch.amp.GradScaler('cuda')\n")
    assert tdv501(code) == []


def test_match_on_the_device_type():
    code = ("import torch\ndef setup(device):\n    match device.type:\n        case 'cuda' | 'cuda:0':\n"
            "            scaler = torch.amp.GradScaler('cuda')\n        case DeviceType.CUDA:\n"
            "            scaler = torch.amp.GradScaler('cuda')\n        case 'cpu':\n"
            "            scaler = torch.amp.GradScaler('cuda')\n        case 'cuda' | 'mps':\n"
            "            scaler = torch.amp.GradScaler('cuda')\n        case _:\n"
            "            scaler = torch.amp.GradScaler('cuda')\n    return scaler\n")
    assert tdv501(code) == [(9, 42, "TDV501"), (11, 42, "TDV501"), (13, 42, "TDV501")]


def test_deprecated_api_in_a_cuda_arm_is_still_reported():
    code = "import torch\nif device.type == 'cuda':\n    scaler = torch.cuda.amp.GradScaler()\n"
    assert tdv501(code) == [(3, 13, "TDV501")]


ENABLED_ONLY_WITH_CUDA = {
    "enabled=device.type == 'cuda'": "scaler = torch.amp.GradScaler('cuda', enabled=device.type == 'cuda')\n",
    "enabled=is_available()": "ctx = torch.autocast('cuda', enabled=torch.cuda.is_available())\n",
    "enabled=amp and a CUDA test": "ctx = torch.autocast(device_type='cuda', enabled=args.amp and device.type == 'cuda')\n",
    "enabled=a local CUDA flag": "use_cuda = device.type == 'cuda'\nscaler = torch.amp.GradScaler('cuda', enabled=use_cuda)\n",
}


@pytest.mark.parametrize("line", ENABLED_ONLY_WITH_CUDA.values(), ids=list(ENABLED_ONLY_WITH_CUDA))
def test_enabled_only_with_cuda_is_not_reported(line):
    """Switched on only where CUDA is: off elsewhere, on purpose."""
    assert tdv501("import torch\n" + line) == []


def test_enabled_by_another_flag_is_reported():
    assert tdv501("import torch\nscaler = torch.amp.GradScaler('cuda', enabled=args.amp)\n") == [(2, 30, "TDV501")]
