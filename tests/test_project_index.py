"""The project index: what other files of the project define adds knowledge to a file's rules.

Each test writes a small project under tmp_path and lints one file of it by path.
"""

from __future__ import annotations

import os
import subprocess
import sys
import ast
import textwrap

import pytest

from flake8_torchdevice.analysis import project
from flake8_torchdevice.engine import Options, lint_source
from flake8_torchdevice.rules import select_codes

ALL = Options(enabled=select_codes(extend_select=["TDV9"]))

BASE = """\
import torch.nn as nn


class Backbone(nn.Module):
    pass
"""

# A module whose base comes from another file: its plain tensor attribute is TDV202.
NET = """\
import torch
from {source} import Backbone


class Net(Backbone):
    def __init__(self):
        super().__init__()
        self.mask = torch.ones(3)

    def forward(self, x):
        return x * self.mask
"""


def write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def findings(path, options=ALL):
    project.clear_cache()
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    return [(f.line, f.col, f.code) for f in lint_source(source, str(path), options)]


@pytest.mark.parametrize("files, linted", [
    # from .base import Backbone, next to the file
    ({"models/__init__.py": "", "models/base.py": BASE, "models/net.py": NET.format(source=".base")},
     "models/net.py"),
    # absolute import of a package in a parent folder (research code run from the repository root)
    ({"lib/__init__.py": "", "lib/base.py": BASE, "lib/models/net.py": NET.format(source="lib.base")},
     "lib/models/net.py"),
    # re-exported by the package's __init__
    ({"nets/__init__.py": "from .base import Backbone\n", "nets/base.py": BASE,
      "train/net.py": NET.format(source="nets")}, "train/net.py"),
    # through a chain of bases in two files
    ({"pkg/__init__.py": "", "pkg/core.py": BASE,
      "pkg/base.py": "from .core import Backbone as Core\n\nclass Backbone(Core):\n    pass\n",
      "pkg/net.py": NET.format(source=".base")}, "pkg/net.py"),
    # a generic base, subscripted where it is derived from (`Operator[Tensor]`)
    ({"ops/__init__.py": "", "ops/core.py": "import typing\nimport torch.nn as nn\nT = typing.TypeVar('T')\n"
      "class Operator(typing.Generic[T], nn.Module):\n    pass\n",
      "ops/base.py": "from .core import Operator\n\nclass Backbone(Operator[int]):\n    pass\n",
      "ops/net.py": NET.format(source=".base")}, "ops/net.py"),
    # the other file's base is a module of a library models derive from (graph-neural-pde's
    # `ODEFunc(MessagePassing)`, held-out set 11): the same answer as for a base in the file
    ({"gnn/__init__.py": "", "gnn/base.py": "from torch_geometric.nn.conv import MessagePassing\n\n"
      "class Backbone(MessagePassing):\n    pass\n", "gnn/net.py": NET.format(source=".base")}, "gnn/net.py"),
    ({"pl/__init__.py": "", "pl/base.py": "import pytorch_lightning as pl\n\nclass Backbone(pl.LightningModule):\n"
      "    pass\n", "pl/net.py": NET.format(source=".base")}, "pl/net.py"),
])
def test_module_base_from_another_file(tmp_path, files, linted):
    write(tmp_path, files)
    assert findings(tmp_path / linted) == [(8, 8, "TDV202")]


def test_unknown_base_is_not_reported(tmp_path):
    # the base is not in the project (or not a module there): no knowledge, no finding
    write(tmp_path, {"models/__init__.py": "", "models/net.py": NET.format(source=".base")})
    assert findings(tmp_path / "models/net.py") == []
    write(tmp_path, {"models/base.py": "class Backbone:\n    pass\n"})
    assert findings(tmp_path / "models/net.py") == []


def test_text_without_a_file_has_no_project(tmp_path):
    write(tmp_path, {"models/__init__.py": "", "models/base.py": BASE})
    source = NET.format(source=".base")
    assert lint_source(source, "<stdin>", ALL) == []


def test_import_cycles_end(tmp_path):
    write(tmp_path, {
        "a.py": "from b import Backbone\n",
        "b.py": "from a import Backbone\n",
        "net.py": NET.format(source="a"),
    })
    assert findings(tmp_path / "net.py") == []


def test_function_returning_a_tensor_gives_its_kind(tmp_path):
    # `mask = make_mask(n)` is a tensor: its discarded move is TDV203
    write(tmp_path, {
        "utils.py": "import torch\n\ndef make_mask(n):\n    return torch.ones(n, n)\n",
        "train.py": "import torch\nfrom utils import make_mask\n\ndef run(n, device):\n"
                    "    mask = make_mask(n)\n    mask.to(device)\n    return mask\n",
    })
    assert findings(tmp_path / "train.py") == [(6, 4, "TDV203")]


@pytest.mark.parametrize("to_body, expected", [
    ("return Batch(*(t.to(device) for t in self))", [(9, 12, "TDV203")]),  # a moved copy: EGG's `Batch`
    ("self.x = self.x.to(device)\n        return self", []),  # moved in place, as a module is
])
def test_a_project_class_whose_to_returns_a_copy(tmp_path, to_body, expected):
    write(tmp_path, {
        "core/__init__.py": "",
        "core/batch.py": f"""class Batch:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __iter__(self):
        return iter((self.x, self.y))
    def to(self, device):
        {to_body}
""",
        "core/trainer.py": """from .batch import Batch


class Trainer:
    def train_epoch(self, game):
        for batch in self.train_data:
            if not isinstance(batch, Batch):
                batch = Batch(*batch)
            batch.to(self.device)
            game(*batch)
""",
    })
    assert findings(tmp_path / "core/trainer.py") == expected


def test_function_returning_a_module_is_not_a_tensor(tmp_path):
    write(tmp_path, {
        "models.py": BASE + "\n\ndef build():\n    return Backbone()\n",
        "train.py": "from models import build\n\ndef run(device):\n    net = build()\n    net.to(device)\n"
                    "    return net\n",
    })
    assert findings(tmp_path / "train.py") == []


def test_an_edited_file_is_read_again(tmp_path):
    write(tmp_path, {"models/__init__.py": "", "models/base.py": "class Backbone:\n    pass\n",
                     "models/net.py": NET.format(source=".base")})
    net = tmp_path / "models/net.py"
    with open(net, encoding="utf-8") as handle:
        source = handle.read()
    assert lint_source(source, str(net), ALL) == []
    write(tmp_path, {"models/base.py": BASE})  # a different size: the cached summary is stale
    assert [f.code for f in lint_source(source, str(net), ALL)] == ["TDV202"]


def test_summary_of_unparsable_file_is_empty():
    summary = project.summarise("class (:\n", "broken.py")
    assert summary.classes == {} and summary.returns == {}


def test_try_import_fallback_resolves_to_the_first_arm():
    summary = project.summarise(
        "try:\n    from .fast import Block\nexcept ImportError:\n    from .slow import Block\n", "m.py")
    assert summary.imports["Block"] == ".fast.Block"


def test_flake8_jobs_agree(tmp_path):
    files = {"models/__init__.py": "", "models/base.py": BASE}
    for i in range(6):
        files[f"models/net{i}.py"] = NET.format(source=".base")
    write(tmp_path, files)

    def run(jobs):
        done = subprocess.run([sys.executable, "-m", "flake8", "--select=TDV", f"-j{jobs}", "models"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=300,
                              env=dict(os.environ, PYTHONHASHSEED="3"))
        assert done.returncode == 1, done.stderr
        return sorted(done.stdout.splitlines())

    one = run(1)
    assert len(one) == 6 and all(": TDV202 " in line for line in one)
    assert run(2) == one


SAVER = """\
import torch


class EarlyStopping:
    def __call__(self, loss, model, path):
        self.save_checkpoint(model, path)

    def save_checkpoint(self, model, path):
        torch.save(model.state_dict(), path + "/checkpoint.pth")
"""

TRAIN = """\
import torch
from utils.tools import EarlyStopping


def train(model, path, other):
    stopper = EarlyStopping()
    for epoch in range(3):
        stopper(1.0, model, path)
    model.load_state_dict(torch.load(path + "/checkpoint.pth"))
    return torch.load(other + "/checkpoint.pth")
"""


def test_a_load_of_what_a_project_saver_wrote_is_a_round_trip(tmp_path):
    # Informer's early stopping saves the best weights, the training loop reloads them
    write(tmp_path, {"utils/__init__.py": "", "utils/tools.py": SAVER, "exp/train.py": TRAIN})
    assert findings(tmp_path / "exp/train.py") == [(10, 11, "TDV301")]


def test_a_helper_that_does_not_save_proves_nothing(tmp_path):
    write(tmp_path, {"utils/__init__.py": "", "utils/tools.py": SAVER.replace("torch.save", "print"),
                     "exp/train.py": TRAIN})
    assert findings(tmp_path / "exp/train.py") == [(9, 26, "TDV301"), (10, 11, "TDV301")]


def test_language_server_and_notebooks_see_the_project(tmp_path):
    pytest.importorskip("pygls")  # the language server's extra
    from flake8_torchdevice.lsp import lint_document
    from flake8_torchdevice.notebook import lint_notebook_text
    import json

    write(tmp_path, {"models/__init__.py": "", "models/base.py": BASE})
    source = NET.format(source="models.base")
    # the editor's unsaved text, at the path of the file being edited
    assert [f.code for f in lint_document(source, str(tmp_path / "net.py"), ALL)] == ["TDV202"]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
                           "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "explore.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    found = lint_notebook_text(path.read_text(encoding="utf-8"), str(path), ALL)
    assert [finding.code for _, finding in found] == ["TDV202"]


# TDV401: a module built by a project function that returns it moved, or by a project
# class that moves itself in `__init__`, is on its device before the wrap.
BUILDER = """\
def build_model(cfg, device):
    model = Net(cfg)
    return model.to(device)
"""
SELF_MOVING = """\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.to(device)


class Plain(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = nn.Linear(2, 2)
"""
WRAPS = """\
from torch.nn.parallel import DistributedDataParallel as DDP
from {source} import {names}


def main(cfg, rank):
{body}
"""
TDV401 = Options(enabled=frozenset({"TDV401"}))


@pytest.mark.parametrize("files, body, expected", [
    # moved by the builder, moved again after the wrap: not a move that comes too late
    ({"utils.py": BUILDER}, "    model = build_model(cfg, rank)\n    ddp = DDP(model, device_ids=[rank])\n"
     "    model.to(rank)\n    return ddp\n", []),
    ({"models.py": SELF_MOVING}, "    return DDP(Net(rank), device_ids=[rank])\n", []),
    ({"models.py": SELF_MOVING}, "    model = Net(rank)\n    ddp = DDP(model, device_ids=[rank])\n"
     "    model.to(rank)\n    return ddp\n", []),
    # the same class without its move is on the CPU when wrapped
    ({"models.py": SELF_MOVING}, "    return DDP(Plain(rank), device_ids=[rank])\n", [(6, 11, "TDV401")]),
    ({"models.py": SELF_MOVING}, "    model = Plain(rank)\n    ddp = DDP(model, device_ids=[rank])\n"
     "    model.to(rank)\n    return ddp\n", [(7, 10, "TDV401")]),
], ids=["function returning it moved", "class moving itself, built in place", "class moving itself, by name",
        "class that does not move itself", "class that does not move itself, moved after"])
def test_tdv401_sees_project_builders(tmp_path, files, body, expected):
    write(tmp_path, files)
    source, names = ("utils", "build_model") if "utils.py" in files else ("models", "Net, Plain")
    write(tmp_path, {"train.py": WRAPS.format(source=source, names=names, body=body)})
    assert findings(tmp_path / "train.py", TDV401) == expected


# TDV401: a sub-module wrapped in `__init__` is reported when a file of the project
# builds the model and runs it before moving it.
WRAPPING_MODEL = """\
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.DataParallel(Encoder())

    def forward(self, x):
        return self.enc(x)
"""


@pytest.mark.parametrize("train, expected", [
    ("from models import Model\n\n\ndef main(x):\n    model = Model()\n    return model(x)\n", [(7, 19, "TDV401")]),
    ("from .models import Model\n\n\ndef main(x):\n    model = Model()\n    return model(x)\n", [(7, 19, "TDV401")]),
    ("import models\n\nmodel = models.Model().eval()\nout = model(x)\n", [(7, 19, "TDV401")]),
    ("from models import Model\n\n\ndef main(x, device):\n    model = Model()\n    model.to(device)\n"
     "    return model(x)\n", []),
    ("from models import Model\n\n\ndef main(x):\n    model = Model()\n    return train(model, x)\n", []),
    # another class of the same name, not the one linted
    ("class Model:\n    pass\n\n\nmodel = Model()\nout = model(x)\n", []),
], ids=["imported by name", "relative import", "module attribute", "moved before the run", "handed to a helper",
        "another class of that name"])
def test_tdv401_sub_module_judged_by_the_project_files_that_build_the_model(tmp_path, train, expected):
    write(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/models.py": WRAPPING_MODEL,
                     "pkg/train.py": train})
    assert findings(tmp_path / "pkg" / "models.py", TDV401) == expected


def test_tdv401_sub_module_without_a_project_is_not_reported(tmp_path):
    write(tmp_path, {"models.py": WRAPPING_MODEL})
    assert findings(tmp_path / "models.py", TDV401) == []


def test_tdv401_wrapper_returned_to_a_project_file_that_runs_it(tmp_path):
    maker = "import torch.nn as nn\n\n\ndef make_model():\n    return nn.DataParallel(Net())\n"
    runs = "from models import make_model\n\nnet = make_model()\nout = net(x)\n"
    moves = "from models import make_model\n\nnet = make_model()\nnet.cuda()\nout = net(x)\n"
    write(tmp_path, {"setup.py": "", "models.py": maker, "train.py": runs})
    assert findings(tmp_path / "models.py", TDV401) == [(5, 11, "TDV401")]
    write(tmp_path, {"train.py": moves})
    os.utime(tmp_path / "train.py", ns=(1, 1))  # a new version, whatever the clock's resolution
    assert findings(tmp_path / "models.py", TDV401) == []


# Transfer-Learning-Library's multi-source example: the dataset class's classmethod says it
# returns a tensor, and the labels it makes are then moved and dropped.
DATASET = """\
import torch
class OfficeHome:
    @classmethod
    def get_category(cls, labels, n) -> torch.Tensor:
        return labels % n
    @classmethod
    def get_name(cls, labels, n):
        return str(n)
"""
TRAIN_LABELS = """\
from data.officehome import OfficeHome
def step(labels, device):
    category = OfficeHome.get_category(labels, 5)
    category.to(device)
    name = OfficeHome.get_name(labels, 5)
    name.to(device)
    return category, name
"""


def test_a_method_of_an_imported_class_annotated_to_return_a_tensor(tmp_path):
    write(tmp_path, {"data/__init__.py": "", "data/officehome.py": DATASET, "train.py": TRAIN_LABELS})
    assert findings(tmp_path / "train.py") == [(4, 4, "TDV203")]


def test_a_static_method_of_a_class_a_package_re_exports(tmp_path):
    # pygod's GADNR detector: `GADNRBase.process_graph(data)`, a static method of a class that
    # `pygod/nn/__init__.py` re-exports, returns `(dict, torch.tensor(...))`; the tensor's move
    # is then dropped
    base = ("import torch\nclass GADNRBase:\n    @staticmethod\n    def process_graph(data):\n"
            "        counts = torch.tensor([len(n) for n in data])\n        return {}, counts\n")
    detector = ("from ..nn import GADNRBase\nclass GADNR:\n    def process_graph(self, data):\n"
                "        self.neighbors, self.counts = GADNRBase.process_graph(data)\n"
                "        self.counts.to(self.device)\n")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/nn/__init__.py": "from .gadnr import GADNRBase\n",
                     "pkg/nn/gadnr.py": base, "pkg/detector/__init__.py": "", "pkg/detector/gadnr.py": detector})
    assert findings(tmp_path / "pkg" / "detector" / "gadnr.py") == [(5, 8, "TDV203")]


# A trainer that moves its model in one method, and builds a CPU input in another
TRAINER = """\
import torch
class Trainer:
    def build(self, model, device):
        self.model = model
        self.model.to(device)
    def predict(self, n):
        x = torch.zeros(n, 3)
        return self.model(x)
"""


def test_an_attribute_another_method_moved_is_on_the_device(tmp_path):
    write(tmp_path, {"trainer.py": TRAINER})
    assert findings(tmp_path / "trainer.py") == [(7, 12, "TDV201")]
    write(tmp_path, {"trainer.py": TRAINER.replace("self.model.to(device)", "self.model.to('cpu')")})
    assert findings(tmp_path / "trainer.py") == []


# nerf-pytorch: run_nerf.py sets a CUDA default tensor type for the whole run; the helpers it
# imports make their factories' tensors there, although they do not import run_nerf.py
HELPERS = """\
import torch
def sample_pdf(cdf, n):
    u = torch.rand(list(cdf.shape[:-1]) + [n])
    return torch.searchsorted(cdf, u)
"""
RUN = """\
import torch
from helpers import sample_pdf
if __name__ == "__main__":
    torch.set_default_tensor_type("torch.cuda.FloatTensor")
"""


def test_a_default_device_set_by_another_file_of_the_project(tmp_path):
    write(tmp_path, {"pyproject.toml": "", "helpers.py": HELPERS, "run.py": RUN})
    assert findings(tmp_path / "helpers.py") == []
    write(tmp_path, {"run.py": RUN.replace("torch.cuda.FloatTensor", "torch.FloatTensor")})
    assert findings(tmp_path / "helpers.py") == [(3, 8, "TDV201")]


def test_a_default_device_set_by_a_file_that_does_not_import_this_one(tmp_path):
    # pyro: an example script sets a CUDA default; the library's own stats module is not its
    write(tmp_path, {"pyproject.toml": "", "helpers.py": HELPERS,
                     "example.py": RUN.replace("from helpers import sample_pdf", "import helpers_other")})
    assert findings(tmp_path / "helpers.py") == [(3, 8, "TDV201")]


def test_names_from_chained_star_imports(tmp_path):
    """CompenNet's scripts: `main.py` star-imports `train.py`, which star-imports `utils.py`,
    whose reader returns a tensor made by a method only tensors have."""
    write(tmp_path, {
        "utils.py": "import torch\n\ndef read_images(folder, loader):\n    for imgs in loader:\n"
                    "        return imgs.permute((0, 3, 1, 2)).float().div(255)\n",
        "train.py": "from utils import *\nimport torch.nn as nn\n",
        "main.py": "from train import *\n\ndef run(folder, loader, device):\n"
                   "    valid = read_images(folder, loader)\n    valid.to(device)\n    return valid\n",
        "nets.py": BASE,
        "net.py": NET.format(source="nets").replace("from nets import Backbone", "from nets import *"),
    })
    assert findings(tmp_path / "main.py") == [(5, 4, "TDV203")]
    assert findings(tmp_path / "net.py") == [(8, 8, "TDV202")]


def test_star_imports_that_bring_nothing_known(tmp_path):
    write(tmp_path, {
        "a.py": "from b import *\n",
        "b.py": "from a import *\n\ndef build():\n    return make()\n",
        "models.py": BASE + "\n\ndef get_model():\n    return Backbone()\n",
        "main.py": "from a import *\nfrom models import *\n\ndef run(device):\n    net = get_model()\n"
                   "    net.to(device)\n    t = build()\n    t.to(device)\n    n = len([1])\n    return net, t, n\n",
    })
    assert findings(tmp_path / "main.py") == []


# What the eighth round taught (held-out set 10), each from a shape of bug seen in research code.

SCHEDULE = """\
import torch


def linear_schedule(start, end, n):
    return torch.linspace(start, end, n)


def gaussian(side):
    g = torch.exp(-torch.arange(side) ** 2)
    g = g / g.sum()
    return g


def noise_levels(config):
    if config.kind == "geometric":
        sigmas = torch.tensor(config.values).float()
    else:
        sigmas = torch.from_numpy(config.array).float()
        if sigmas.numel() == 1:
            sigmas = torch.unsqueeze(sigmas, 0)
    return sigmas
"""

USES_SCHEDULE = """\
import torch
import torch.nn as nn
from .schedules import {name}


class Diffusion(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.net = nn.Linear(n, n)
        self.beta = {name}({args})

    def forward(self, t):
        return self.net(t) * self.beta[0] + torch.randn(1, device=t.device)
"""


@pytest.mark.parametrize("name, args", [
    ("linear_schedule", "0.1, 0.2, n"),  # returns a factory's tensor
    ("gaussian", "n"),  # `g = g / g.sum()`: arithmetic on itself keeps what g held
    ("noise_levels", "None"),  # `torch.unsqueeze(sigmas, 0)` is a call of torch, not a method of `torch`
])
def test_attribute_from_a_project_function_that_returns_a_tensor(tmp_path, name, args):
    """DDPM's `self.beta = _get_linear_beta_schedule(...)`, SCOT's `self.hsfilter =
    geometry.gaussian2d(7)`: made in another function, kept as a plain attribute; the fast
    path keeps the class although its text names no factory (the file must name one
    somewhere: a file without any is not parsed)."""
    write(tmp_path, {"diff/__init__.py": "", "diff/schedules.py": SCHEDULE,
                     "diff/model.py": USES_SCHEDULE.format(name=name, args=args)})
    assert findings(tmp_path / "diff/model.py") == [(10, 8, "TDV202")]
    source = (tmp_path / "diff/model.py").read_text()
    full = lint_source(source, str(tmp_path / "diff/model.py"), ALL, fast=False)
    assert [(f.line, f.col, f.code) for f in full] == [(10, 8, "TDV202")]


def test_attribute_from_a_function_returning_a_module_is_not_reported(tmp_path):
    write(tmp_path, {"diff/__init__.py": "",
                     "diff/schedules.py": "import torch.nn as nn\ndef linear_schedule(a, b, n):\n"
                                          "    return nn.Linear(a, b)\n",
                     "diff/model.py": USES_SCHEDULE.format(name="linear_schedule", args="1, 2, n")})
    assert findings(tmp_path / "diff/model.py") == []


def test_torch_function_brought_by_a_star_import(tmp_path):
    """PyTorch-RL's `from utils import *`, where utils has `zeros = torch.zeros`: `zeros(n)`
    is a factory, its bare `.to()` is discarded."""
    write(tmp_path, {"utils/__init__.py": "from utils.tools import *\n",
                     "utils/tools.py": "import torch\nzeros = torch.zeros\nfrom torch import ones\n",
                     "core/cg.py": "from utils import *\n\n\ndef solve(b):\n    x = zeros(b.size())\n"
                                   "    if b.is_cuda:\n        x.to(b.get_device())\n    return x\n"})
    assert findings(tmp_path / "core/cg.py") == [(7, 8, "TDV203")]
    write(tmp_path, {"utils/tools.py": "import torch\nzeros = lambda n: [0] * n\n"})
    assert findings(tmp_path / "core/cg.py") == []


@pytest.mark.parametrize("body, expected", [
    ("    mask = torch.tril(torch.ones(n, n))\n    masked = mask[None, None] == 0\n    return masked\n", ["torch.tril"]),
    ("    return -torch.eye(n) * 2\n", ["torch.eye"]),
    ("    return 2 * torch.eye(n)\n", ["torch.eye"]),
    ("    k = n // 2\n    return k + 1\n", [""]),  # numbers: what they are stays unknown
])
def test_a_function_returning_arithmetic_on_a_tensor_returns_that_tensor(body, expected):
    summary = project.summarise(f"import torch\ndef make(n):\n{body}", "masks.py")
    assert [summary.qualify(callee) for callee in summary.returns["make"]] == expected


def test_an_object_whose_base_in_another_file_keeps_its_device_computes_there(tmp_path):
    """MP_PyTorch's DMP and omnisafe's adapters: the base class of another file keeps the
    device the object was told (`self._device = device`) and uses it; a method of the
    subclass that mixes a new CPU tensor with what it is handed mixes devices."""
    write(tmp_path, {"agents/__init__.py": "",
                     "agents/base.py": "import torch\n\n\nclass Base:\n    def __init__(self, device):\n"
                                       "        self._device: torch.device = device\n\n"
                                       "    def put(self, x):\n        return x.to(self._device)\n",
                     "agents/dmp.py": "import torch\nfrom .base import Base\n\n\nclass DMP(Base):\n"
                                      "    def integrate(self, goal, forcing):\n"
                                      "        pos = torch.zeros(forcing.shape[0], 3)\n"
                                      "        pos[0] = goal\n        return pos + forcing\n"})
    assert findings(tmp_path / "agents/dmp.py") == [(7, 14, "TDV201")]
    # a base that keeps the device but never uses it says nothing of where the object computes
    write(tmp_path, {"agents/base.py": "import torch\n\n\nclass Base:\n    def __init__(self, device):\n"
                                       "        self._device: torch.device = device\n"})
    assert findings(tmp_path / "agents/dmp.py") == []


def test_parameters_a_function_computes_on_together():
    # `FileSummary.shared_devices`: followed through bindings, `device=` and torch functions,
    # not through numbers or host copies; long chains of bindings are answered in line order
    code = textwrap.dedent("""\
        import torch
        def radius_graph(pos, cell, n_atoms, scale):
            device = pos.device
            offsets = torch.cumsum(n_atoms, dim=0) - n_atoms
            pairs = torch.arange(len(n_atoms), device=device) - offsets
            k = int(scale.item())
            return pairs * k, cell.cpu() + pos.cpu()
        def chained(a, b):
            x0 = a + b
        """) + "".join(f"    x{i + 1} = x{i} + x{i}\n" for i in range(3000)) + "    return x3000 * b\n"
    summary = project.summarise_tree(ast.parse(code), "graph.py")
    assert summary.shared_devices == {"radius_graph": {0: {2}, 2: {0}}, "chained": {0: {1}, 1: {0}}}
