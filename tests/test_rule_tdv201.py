"""TDV201 factory-without-device (reported at the start of the factory call)."""

from __future__ import annotations

import pytest

from conftest import lint, lint_in_project
from flake8_torchdevice.engine import Options, lint_source
from flake8_torchdevice.rules import select_codes

ONLY = frozenset({"TDV201"})
HEAD = "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"


def tdv201(code: str, **options):
    return lint(code, enabled=ONLY, **options)


def forward(body: str) -> str:
    """A module whose forward(self, x) has `body` (lines 5 on, 8 spaces of indent)."""
    return HEAD + "".join(f"        {line}\n" for line in body.splitlines())


REPORTED = {
    # yolov5's AutoShape: a CPU dummy stands in for the model's parameters, and its device
    # decides where the input goes
    "its device sends the input to the CPU": (
        forward("p = next(self.model.parameters()) if self.pt else torch.zeros(1)\n"
                "return self.model(x.to(p.device))"), [(5, 58)]),
    # PyTorch-GAN's WGAN-div: the seed gradient of autograd.grad, made on the CPU, for outputs of
    # images cast to a CUDA type chosen where CUDA is there
    "seed gradient of autograd.grad next to outputs on the device": (
        "import torch\nfrom torch import autograd\nfrom torch.autograd import Variable\n"
        "cuda = torch.cuda.is_available()\nTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
        "for imgs, _ in loader:\n    x = Variable(imgs.type(Tensor), requires_grad=True)\n    d = D(x)\n"
        "    g = autograd.grad(d, x, torch.ones(x.size(0), 1), create_graph=True)[0]\n", [(9, 28)]),
    # bindsnet's neurons: reset_ puts a CPU tensor in place of the buffer module.to() moved
    "stored in place of a buffer after the module was built": (
        "import torch\nclass N(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.n = n\n        self.register_buffer('v', torch.zeros(n))\n"
        "    def forward(self, x):\n        return x + self.v\n"
        "    def reset_(self):\n        self.v = torch.zeros(self.n)\n", [(10, 17)]),
    "combined with the input": (forward("return x + torch.zeros(3)"), [(5, 19)]),
    "torch as th, from torch import nn": (
        "import torch as th\nfrom torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        mask = th.ones(x.shape[0])\n        return x * mask\n", [(5, 15)]),
    "from torch import zeros, cat": (
        "from torch import zeros, cat\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        pad = zeros(x.shape[0], 1)\n        return cat([x, pad], 1)\n", [(5, 14)]),
    "import inside the method": (forward("import torch as tt\nreturn x * tt.rand(3)"), [(6, 19)]),
    "returned": (forward("return torch.arange(x.shape[1])"), [(5, 15)]),
    "yielded": (forward("yield x + torch.ones(3)"), [(5, 18)]),
    "augmented assignment": (forward("total = x.sum()\ntotal += torch.ones(1)\nreturn total"), [(6, 17)]),
    "comprehension": (forward("return [x + torch.ones(3) for _ in range(2)]"), [(5, 20)]),
    "lambda closing over the input": (forward("f = lambda: x + torch.ones(3)\nreturn f()"), [(5, 24)]),
    "non-scalar torch.tensor": (forward("return x + torch.tensor([1.0, 2.0])"), [(5, 19)]),
    "full": (forward("return x + torch.full((3,), 1.0)"), [(5, 19)]),
    "argument of a tensor method": (forward("mask = torch.ones(x.shape)\nreturn x.masked_fill(mask.bool(), 0)"),
                                    [(5, 15)]),
    "index tensor also used in arithmetic": (forward("idx = torch.arange(x.shape[0])\nreturn x[idx] + idx"),
                                             [(5, 14)]),
    "filled then returned": (forward("out = torch.zeros(x.shape[0], 4)\nout[:, 0] = x.sum(1)\nreturn out"),
                             [(5, 14)]),
    "used before the move": (forward("z = torch.zeros(3)\ny = x + z\nz = z.to(x.device)\nreturn y"), [(5, 12)]),
    "rebound from its old value, then meets a device tensor": (
        "import torch\ndef blur(image, sigma):\n    sigma = torch.tensor([sigma], device=image.device)\n"
        "    host = sigma.cpu()\n    host = torch.tensor([host.item(), 1.0])\n"
        "    return sigma * host\n", [(5, 11)]),
    # pytorch-yolo-v3's loss: a loss module built and called in one expression
    "inline-built loss module called at once": (
        "import torch\nimport torch.nn as nn\ndef detection_loss(target, output):\n"
        "    labels = torch.zeros(target.shape[0])\n    return nn.CrossEntropyLoss()(output, labels.long())\n",
        [(4, 13)]),
    # Swin V2: clamp's tensor bounds must be on the input's device, even 0-dim ones
    "0-dim clamp bound": (forward("return torch.clamp(x, max=torch.tensor(2.0))"), [(5, 34)]),
    "0-dim clamp bound through a torch op": (
        forward("return torch.clamp(x, max=torch.log(torch.tensor(100.0)))"), [(5, 44)]),
    "0-dim bound of the clamp method": (forward("return x.clamp(torch.tensor(0.0), 1.0)"), [(5, 23)]),
    "loss function": (
        "import torch\ndef loss_fn(pred, target):\n    weight = torch.ones(pred.shape[1])\n"
        "    return (weight * (pred - target) ** 2).mean()\n", [(3, 13)]),
    "loss class": (
        "import torch\nclass FocalLoss:\n    def __call__(self, pred, target):\n"
        "        return pred - target + torch.zeros(3)\n", [(4, 31)]),
    "combined with a device tensor anywhere": (
        "import torch\ndef main():\n    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "    w = torch.ones(3, device=device)\n    b = torch.zeros(3)\n    return w * b\n", [(5, 8)]),
    "combined with a moved tensor in a script function": (
        "import torch\ndef run(model, device):\n    x = torch.randn(4, 3).to(device)\n    noise = torch.randn(4, 3)\n"
        "    return x + noise\n", [(4, 12)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


NOT_REPORTED = {
    # libreyolo's DINOv2 copy: the pruning index goes to transformers' prune_linear_layer with
    # the layer, which moves it where the layer's weight is; a function handed a sub-module
    # and a tensor may do that, so a module method's fallback stays silent
    "an index handed to a function beside a sub-module (rewired in place)": (
        "import torch\nfrom torch import nn\nfrom transformers.pytorch_utils import prune_linear_layer\n"
        "def find_heads(heads, n):\n    mask = torch.ones(n)\n    return heads, torch.arange(len(mask))[mask.eq(1)]\n"
        "class Attention(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.query = nn.Linear(4, 4)\n    def prune_heads(self, heads):\n"
        "        heads, index = find_heads(heads, 2)\n        self.query = prune_linear_layer(self.query, index)\n"),
    "an index handed to a function rewiring a part of a sub-module": (
        "import torch\nfrom torch import nn\nfrom transformers.pytorch_utils import prune_linear_layer\n"
        "class Attention(nn.Module):\n    def __init__(self, inner):\n        super().__init__()\n"
        "        self.attention = inner\n    def prune_heads(self, n):\n        index = torch.arange(n)\n"
        "        self.attention.query = prune_linear_layer(self.attention.query, index)\n"),
    "a mask handed to a function beside a sub-module": (
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(3, 3, 1)\n    def sparsify(self, n):\n"
        "        apply_mask(self.conv, torch.ones(n))\n"),
    # GPT-SoVITS' prefill: lengths read as slice bounds; the second comprehension's `i` counts,
    # whatever the first one's `i` held (each comprehension has its own)
    "lengths used as slice bounds by a comprehension's counter": (
        "import torch\nimport torch.nn as nn\nclass Emb(nn.Module):\n    def prefill(self, x):\n"
        "        lens = torch.tensor([i.shape[0] for i in x.unbind()])\n"
        "        parts = [self.pe[i, : lens[i], :] for i in range(lens.size(0))]\n"
        "        return x * torch.nested.nested_tensor(parts)\n"),
    # trlx's hypothesis test: named like a loss, but a test, on whatever device it sets up
    "a test named like a loss function": (
        "import torch\ndef test_ilql_loss_runs(batch_size, seq_len):\n    heads = Heads(4)\n"
        "    qs = heads(torch.randn(batch_size, seq_len))\n    return qs + torch.randn(batch_size, seq_len)\n"),
    "its device only compared or printed": (
        forward("p = torch.zeros(1)\nprint(p.device)\nreturn x if p.device == x.device else x.cpu()")),
    "seed gradient of autograd.grad for outputs of a CPU type": (
        "import torch\nfrom torch import autograd\nTensor = torch.FloatTensor\n"
        "for imgs, _ in loader:\n    x = imgs.type(Tensor).requires_grad_(True)\n    d = D(x)\n"
        "    g = autograd.grad(d, x, torch.ones(x.size(0), 1), create_graph=True)[0]\n"),
    "a buffer set while the module is built": (
        "import torch\nclass N(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.register_buffer('v', torch.zeros(n))\n        self.reset_parameters()\n"
        "    def reset_parameters(self):\n        self.v = torch.ones(3)\n"),
    "a plain attribute set in a method (TDV202's business)": (
        "import torch\nclass N(torch.nn.Module):\n    def reset(self):\n        self.v = torch.zeros(3)\n"),
    "device= given": forward("return x + torch.zeros(3, device=x.device)"),
    "**kwargs": HEAD.replace("(self, x)", "(self, x, **kw)") + "        return x + torch.zeros(3, **kw)\n",
    "moved on the same line": forward("return x + torch.zeros(3).to(x.device)"),
    "moved later before use": forward("m = torch.zeros(3)\nm = m.to(x.device)\nreturn x + m"),
    "moved with type_as": forward("m = torch.zeros(3).type_as(x)\nreturn x + m"),
    "moved with to(tensor)": forward("eye = torch.eye(3)\neye = eye.to(x)\nreturn x @ eye"),
    "_like and new_": forward("return x + torch.zeros_like(x) + x.new_zeros(3) + x.new_ones(3) + torch.ones_like(x)"),
    "0-dim tensors": forward("return x * torch.tensor(2.0) + torch.tensor(-1) - torch.tensor(float(self.s))"),
    "index only": forward("return x[torch.arange(x.shape[0])]"),
    "index through a name": forward("idx = torch.arange(x.shape[0])\nreturn x[idx]"),
    "randperm index": forward("return x[torch.randperm(x.size(0))]"),
    "turned into Python": forward("n = torch.ones(3).sum().item()\nreturn x * n"),
    "if test": forward("if torch.zeros(1).item() > 0:\n    pass\nreturn x"),
    "register_buffer in forward": forward("self.register_buffer('scale', torch.ones(3))\nreturn x"),
    "register_buffer and Parameter in __init__": (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.register_buffer('scale', torch.ones(3))\n"
        "        self.w = nn.Parameter(torch.randn(3))\n"),
    "__init__": (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, x):\n"
        "        super().__init__()\n        self.t = x + torch.ones(3)\n"),
    "init-time method by name": (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def _init_weights(self, m):\n"
        "        m.weight.data = m.weight + torch.zeros(3)\n"),
    "method __init__ uses": (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.apply(self.helper)\n    def helper(self, m):\n        return m + torch.zeros(3)\n"),
    "reset_parameters": (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def reset_parameters(self, w):\n"
        "        w.data = w + torch.zeros(3)\n"),
    "staticmethod": (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    @staticmethod\n    def make(x):\n"
        "        return x + torch.ones(3)\n"),
    "Dataset.__getitem__": (
        "import torch\nclass D(torch.utils.data.Dataset):\n    def __getitem__(self, i):\n        return torch.zeros(3)\n"),
    "collate_fn": "import torch\ndef collate_fn(batch):\n    return torch.stack(batch) + torch.zeros(3)\n",
    "transform": "import torch\nclass ToTensor:\n    def __call__(self, img):\n        return img + torch.zeros(3)\n",
    "not a module": "import torch\nclass Helper:\n    def compute(self, x):\n        return x + torch.ones(3)\n",
    "script code": "import torch\nx = torch.randn(4, 3)\ny = x + torch.ones(3)\n",
    "rebound torch": forward("torch = fake\nreturn x + torch.zeros(3)"),
    "not torch's zeros": "import numpy as np\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
                         "        return x + np.zeros(3)\n",
    "CUDA guards do not matter, device still given": forward(
        "if torch.cuda.is_available():\n    return x + torch.zeros(3, device=x.device)\nreturn x"),
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv201(code) == []


def test_guard_does_not_hide_tdv201():
    # The mismatch happens exactly when CUDA is present: guards change nothing.
    code = forward("if torch.cuda.is_available():\n    return x + torch.zeros(3)\nreturn x")
    assert tdv201(code) == [(6, 23, "TDV201")]


def test_remedy_names_a_device_value_in_scope():
    from flake8_torchdevice.engine import Options, lint_source

    [finding] = lint_source(forward("return x + torch.zeros(3)"), "t.py", Options(enabled=ONLY))
    assert finding.message.startswith("torch.zeros() without device=")
    assert "device=x.device" in finding.message and "x.new_zeros(...)" in finding.message


def test_nested_function_in_forward():
    code = forward("def helper():\n    return x + torch.ones(3)\nreturn helper()")
    assert tdv201(code) == [(6, 23, "TDV201")]


# ------------------------------------------------------------------ beyond modules (issue 8, part 2)

HELPERS_REPORTED = {
    # random-fourier-features' positional encoding: the coefficients meet torch.unsqueeze(v, -1)
    "coefficients meet a torch function of the tensor parameter": (
        "import torch\nfrom torch import Tensor\ndef encode(v: Tensor, sigma: float, m: int):\n"
        "    j = torch.arange(m)\n    coeffs = 2 * sigma ** (j / m)\n    return coeffs * torch.unsqueeze(v, -1)\n",
        [(4, 8)]),
    # pfhedge's P&L: the costs are a list of floats, made a CPU tensor, and meet a slice of the prices
    "a list parameter made a tensor meets a slice of a tensor parameter": (
        "from typing import List, Optional\nimport torch\nfrom torch import Tensor\n"
        "def pl(spot: Tensor, unit: Tensor, cost: Optional[List[float]] = None):\n"
        "    out = unit.sum()\n    if cost is not None:\n        c = torch.tensor(cost).unsqueeze(0)\n"
        "        out -= (spot[..., 1:] * unit.diff(dim=-1).abs() * c).sum()\n    return out\n", [(7, 12)]),
    # whisper's pad_or_trim: a CPU index for a method of the tensor argument
    "argument of a method of a tensor parameter": (
        "import torch\ndef trim(audio: torch.Tensor, n: int):\n    return audio.index_select(0, torch.arange(n))\n",
        [(3, 33)]),
    "torch op with the tensor parameter as a positional argument": (
        "import torch\ndef floor(x: torch.Tensor):\n    return torch.maximum(x, torch.zeros(3))\n", [(3, 28)]),
    # yolov5's val.py: empty-image placeholders starred next to a device tensor
    "starred into a tuple next to a device tensor": (
        "import torch\ndef stats(pred, device):\n    correct = torch.zeros(3, device=device)\n"
        "    return (correct, *torch.zeros((3, 0)))\n", [(4, 22)]),
    "accumulator added to with a device value": (
        "import torch\ndef evaluate(model, loader, device):\n    correct = torch.zeros(1)\n"
        "    for images, labels in loader:\n        images, labels = images.to(device), labels.to(device)\n"
        "        predictions = model(images).argmax(dim=1)\n        correct = correct + (predictions == labels).sum()\n"
        "    return correct\n", [(3, 14)]),
    "accumulator with +=": (
        "import torch\ndef evaluate(model, loader, device):\n    correct = torch.zeros(1)\n"
        "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
        "        correct += (model(x).argmax(1) == y).sum()\n    return correct\n", [(3, 14)]),
    "plain helper cats with its tensor argument": (
        "import torch\ndef prepend_start_token(x):\n    start = torch.zeros(x.size(0), 1, x.size(2))\n"
        "    return torch.cat([start, x], dim=1)\n", [(3, 12)]),
    "plain helper with an annotated tensor": (
        "import torch\ndef shift(x: torch.Tensor):\n    return x + torch.ones(3)\n", [(3, 15)]),
    "plain helper compares": (
        "from torch import Tensor\nimport torch\ndef first_match(x: Tensor):\n    return x == torch.arange(3)\n",
        [(4, 16)]),
    "CPU tensor indexed by a mask from the input": (
        "import torch\ndef lookup(x: torch.Tensor):\n    table = torch.arange(10)\n    return table[x > 0]\n",
        [(3, 12)]),
    # issue 15: a parameter's use shows it holds a tensor
    "parameter concatenated by torch.cat": (
        "import torch\ndef pad_value(value, n):\n    return torch.cat([torch.zeros(n, 1), value], dim=1)\n",
        [(3, 22)]),
    "mask sized like the input, applied to it": (
        "import torch\ndef apply_mask(x):\n    mask = torch.zeros(*x.shape)\n    return x * mask\n", [(3, 11)]),
    "parameter given to F.softmax, then weighted": (
        "import torch\nimport torch.nn.functional as F\ndef weighted(scores, n):\n"
        "    probs = F.softmax(scores, dim=-1)\n    return scores * torch.linspace(0, 1, n)\n", [(5, 20)]),
    # issue 15, set 3: what a function computes from its tensor inputs lives where they live
    "added to a covariance computed from the input (k-diffusion's fid)": (
        "import torch\ndef fid(x, eps=1e-8):\n    x_cov = torch.cov(x.T)\n"
        "    eps_eye = torch.eye(x_cov.shape[0]) * eps\n    return x_cov + eps_eye\n", [(4, 14)]),
    "concatenated with the centred input (pyro's autocorrelation)": (
        "import torch\ndef autocorrelation(input: torch.Tensor, n):\n    centered = input - input.mean(dim=-1, keepdim=True)\n"
        "    pad = torch.zeros(n)\n    return torch.cat([centered, pad], dim=-1)\n", [(4, 10)]),
    "concatenated with an item of the input batch in forward (neuralforecast)": (
        forward("y = x['insample_y']\ny = y.unsqueeze(-1)\npad = torch.zeros(3, 1)\nreturn torch.cat([y, pad], dim=1)"),
        [(7, 14)]),
    # torchrl's TensorSpec.is_in: a method of a class that is no module receives tensors too
    "method of a plain class compares its tensor argument": (
        "import torch\nclass Spec:\n    def is_in(self, val: torch.Tensor) -> bool:\n"
        "        return bool((val >= torch.zeros(3)).all())\n", [(4, 28)]),
    # speechbrain's compute_periodic_features: a method of the new tensor takes a device tensor
    "method of the new tensor given a tensor computed from the input": (
        "import torch\ndef periodic(frames: torch.Tensor, lags: torch.Tensor):\n    periods = lags.unsqueeze(-1)\n"
        "    idx = torch.arange(frames.size(-1)).view(1, 1, -1)\n    return idx.remainder(periods)\n", [(4, 10)]),
    "type(x.type()) is not a move to x's device": (
        forward("m = torch.ones(3).type(x.type())\nreturn x * m"), [(5, 12)]),
}


@pytest.mark.parametrize("code, expected", HELPERS_REPORTED.values(), ids=list(HELPERS_REPORTED))
def test_helpers_reported(code, expected):
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


HELPERS_NOT_REPORTED = {
    "a list parameter made a tensor meets the host copy of a tensor parameter": (
        "from typing import List\nimport torch\nfrom torch import Tensor\n"
        "def pl(spot: Tensor, cost: List[float]):\n    c = torch.tensor(cost)\n"
        "    return spot.cpu()[..., 1:] * c\n"),
    "a parameter that may be a tensor made a tensor": (
        "import torch\nfrom torch import Tensor\ndef pl(spot: Tensor, cost):\n    c = torch.tensor(cost)\n"
        "    return spot * c\n"),
    # nothing shows that x is a tensor: a number divided by a tensor is fine anywhere
    "operand of unknown kind": "import torch\ndef normalise(x, n):\n    return x / torch.arange(1, n + 1)\n",
    "sized like an argument, combined with nothing": (
        "import torch\ndef blank_like(x):\n    return torch.zeros(*x.shape)\n"),
    "collate_fn stacks on the CPU on purpose": (
        "import torch\ndef collate_fn(batch):\n    xs = torch.zeros(len(batch), 3)\n"
        "    return torch.cat([xs, torch.stack(batch)])\n"),
    "else arm of a GPU flag": forward(
        "if self.gpu_mode:\n    noise = torch.rand(x.size()).cuda()\nelse:\n    noise = torch.rand(x.size())\n"
        "return x + noise"),
    "written into a slice of a device tensor (copy_ crosses devices)": (
        "import torch\ndef gains(shape, device):\n    gain = torch.ones(7, device=device)\n"
        "    gain[2:6] = torch.tensor(shape)[[3, 2, 3, 2]]\n    return gain\n"),
    "a tensor parameter rebound to a new CPU tensor (timm's onnx export)": (
        "import torch\nfrom typing import Optional\ndef export(model, example: Optional[torch.Tensor] = None):\n"
        "    if example is None:\n        example = torch.randn(1, 3)\n    return torch.cat([example, example])\n"),
    "index computed from a dtype conversion, not a move (timm's MultiLabelTarget)": (
        "import torch\nclass Target:\n    def __call__(self, values):\n        values = values.to(torch.float32)\n"
        "        result = torch.zeros(5)\n        result[values.long()] = 1.0\n        return result\n"),
    "copied by new_tensor": forward("return x * x.new_tensor(torch.rand(3, 1))"),
    "parameter of unknown kind": "import torch\ndef shift(a):\n    return a + torch.ones(3)\n",
    "data pipeline helper": "import torch\ndef transform(img: torch.Tensor):\n    return img + torch.zeros(3)\n",
    "only its shape is read": "import torch\ndef make_mask(x: torch.Tensor):\n    return torch.ones(x.size(0))\n",
    "index only": "import torch\ndef pick(x: torch.Tensor):\n    return x[torch.arange(3)]\n",
    "0-dim scalar": "import torch\ndef scale(x: torch.Tensor):\n    return x * torch.tensor(2.0)\n",
    "moved before use": (
        "import torch\ndef pad(x: torch.Tensor):\n    z = torch.zeros(3)\n    z = z.to(x.device)\n    return x + z\n"),
    # kornia's Gaussian blur: the statement that makes the host copy reads the old value
    "rebound from a list of its old value, only compared with a number": (
        "import torch\ndef blur(image, sigma):\n    sigma = torch.tensor([sigma], device=image.device)\n"
        "    host = sigma\n    if not isinstance(host, torch.Tensor):\n        host = torch.tensor([host])\n"
        "    return image * sigma, bool((host > 0).all())\n"),
    "broadcast_tensors keeps each tensor on its device (stylegan2-ada's constant)": (
        "import torch\ndef constant(value, shape, device):\n    t = torch.as_tensor(value, device=device)\n"
        "    t, _ = torch.broadcast_tensors(t, torch.empty(shape))\n    return t\n"),
    # mmsegmentation's head tests: CUDA in one arm, the CPU in the other
    "method of a module moved under a guard, CPU data in the else arm": (
        "import torch\ndef test_head(head, x: torch.Tensor):\n    emb = torch.rand(3, 4)\n"
        "    if torch.cuda.is_available():\n        head = head.cuda()\n        data = [x.cuda(), emb.cuda()]\n"
        "    else:\n        data = [x, emb]\n    return head.loss(data)\n"),
    # torch.nested: sizes for a private op live on the CPU by design
    "argument of a private torch op": (
        "import torch\ndef view(ts: torch.Tensor, device):\n    buffer = ts.reshape(-1).to(device=device)\n"
        "    sizes = torch.tensor([t.shape for t in ts])\n    return torch._nested_view_from_buffer(buffer, sizes)\n"),
    "copied into a tensor parameter": (
        "import torch\ndef reset(x: torch.Tensor):\n    x.copy_(torch.zeros(3))\n    return x\n"),
    "0-dim tensor clamped itself": forward("return x * torch.clamp(torch.tensor(2.0), max=1.0)"),
    "computed from tensors made here, through a call (BasicSR's calculate_weights_indices)": (
        "import torch\ndef weights_for(x, scale, width):\n    u = torch.linspace(1, 8, 8) / scale\n"
        "    w = kernel(u)\n    w = w / width\n    return w + torch.linspace(0, 1, 8)\n"),
    "computed from the input's size only": (
        "import torch\ndef grid(x: torch.Tensor):\n    n = x.shape[0] * 2\n    steps = torch.arange(n)\n"
        "    return steps + torch.ones(n)\n"),
    "computed from a host copy of the input": (
        "import torch\ndef stats(x: torch.Tensor):\n    h = x.cpu() * 2\n    return h + torch.ones(3)\n"),
    # nerf-pytorch: the script makes CUDA the default tensor type, factories follow it
    "the file sets the default tensor type": (
        "import torch\ndef render(raw: torch.Tensor):\n    return raw + torch.ones(3)\n"
        "if __name__ == '__main__':\n    torch.set_default_tensor_type('torch.cuda.FloatTensor')\n"),
    "__call__ of a transform class (detr's Normalize)": (
        "import torch\nclass Normalize:\n    def __call__(self, image: torch.Tensor, boxes: torch.Tensor):\n"
        "        return image, boxes / torch.tensor([4.0, 3.0, 4.0, 3.0])\n"),
    # stable-diffusion's meshgrid(self, h, w): parameters of a module's method that are sizes
    "a method of the new tensor given sizes": (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def grid(self, h, w):\n"
        "        y = torch.arange(0, h).view(h, 1, 1).repeat(1, w, 1)\n        return torch.cat([y, y], dim=-1)\n"),
    "a tensor parameter cast to a CPU tensor type first (dino's to_one_hot)": (
        "import torch\ndef to_one_hot(y: torch.Tensor, n: int):\n    y = y.type(torch.LongTensor).view(-1, 1)\n"
        "    return torch.zeros(y.size(0), n).scatter_(1, y, 1)\n"),
    # stable-diffusion's and BasicSR's imresize: the input copied into a CPU buffer first
    "the input copied into a CPU tensor the function made": (
        "import torch\ndef imresize(img: torch.Tensor, n: int):\n    buf = torch.FloatTensor(3, n)\n"
        "    buf.narrow(1, 0, n).copy_(img)\n    idx = torch.arange(n - 1, -1, -1).long()\n"
        "    return img.index_select(1, idx) + buf\n"),
    "accumulator of CPU values": (
        "import torch\ndef count(values):\n    total = torch.zeros(1)\n    for v in values:\n        total += v\n"
        "    return total\n"),
    "accumulator of Python numbers from the device": (
        "import torch\ndef evaluate(model, loader, device):\n    correct = torch.zeros(1)\n"
        "    for x, y in loader:\n        x = x.to(device)\n        correct += (model(x).argmax(1) == y.to(device)).sum().item()\n"
        "    return correct\n"),
}


@pytest.mark.parametrize("code", HELPERS_NOT_REPORTED.values(), ids=list(HELPERS_NOT_REPORTED))
def test_helpers_not_reported(code):
    assert tdv201(code) == []


def test_host_side_work_on_values_moved_to_the_cpu():
    """`usable.cpu()` is on the CPU: new CPU tensors mixed with it are host-side work on
    purpose (a polynomial's companion matrix solved on the host)."""
    code = (
        "import torch\n\n\n"
        "def roots(basis: torch.Tensor, device):\n"
        "    cs = polynomial(basis.to(device))\n"
        "    usable = torch.isfinite(cs).all(1) & (cs[:, -1] != 0)\n"
        "    companion = torch.zeros(3, 10, 10, dtype=torch.float64)\n"
        "    host_usable = usable.cpu() & torch.isfinite(companion).flatten(1).all(1)\n"
        "    companion = torch.where(host_usable[:, None, None], companion, torch.eye(10, dtype=torch.float64))\n"
        "    return torch.linalg.eigvals(companion)\n"
    )
    assert tdv201(code) == []
    # the same mix with the device tensor itself is the bug
    assert tdv201(code.replace("usable.cpu()", "usable")) == [(7, 16, "TDV201"), (9, 67, "TDV201")]


# Issue 15, part 6: a factory handed to a helper of the project that returns its argument moved.
MOVERS = {
    "try_gpu": ("def try_gpu(x):\n    if torch.cuda.is_available():\n        return x.cuda()\n    return x\n"),
    "to_device": "def to_device(t, device):\n    return t.to(device)\n",
    "to_cuda": "def to_cuda(t):\n    return t.cuda()\n",
    "to(device) after an assignment": "def to_device(t, device):\n    t = t.float()\n    return t.to(device, non_blocking=True)\n",
}
MOVER_CALLS = {
    "try_gpu": "return x + try_gpu(torch.zeros(3))",
    "to_device": "return x + to_device(torch.arange(x.shape[0]), x.device)",
    "to_cuda": "m = to_cuda(torch.ones(2))\nreturn x * m",
    "to(device) after an assignment": "return x * to_device(torch.ones(2), x.device)",
}


def _with_helper(helper: str, body: str) -> str:
    return "import torch\nimport torch.nn as nn\n" + helper + "class M(nn.Module):\n    def forward(self, x):\n" + \
        "".join(f"        {line}\n" for line in body.splitlines())


@pytest.mark.parametrize("name", list(MOVERS))
def test_factory_moved_by_a_helper_of_the_file(name):
    assert tdv201(_with_helper(MOVERS[name], MOVER_CALLS[name])) == []


def test_factory_moved_by_a_method_of_the_class():
    code = ("import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def _dev(self, t):\n"
            "        return t.to(self.device)\n    def forward(self, x):\n        return x + self._dev(torch.zeros(3))\n")
    assert tdv201(code) == []


NOT_MOVERS = {
    # returns its argument as it is
    "identity": ("def keep(t):\n    return t\n", "return x + keep(torch.zeros(3))", [(7, 24)]),
    # moves something else than its first parameter
    "moves another parameter": ("def put(device, t):\n    return device.cuda()\n",
                                "return x + put(x.device, torch.zeros(3))", [(7, 33)]),
    # the factory is not the moved (first) argument
    "factory as a later argument": ("def to_device(t, other):\n    return t.to(other)\n",
                                    "return x + to_device(x, torch.zeros(3))", [(7, 32)]),
}


@pytest.mark.parametrize("name", list(NOT_MOVERS))
def test_helpers_that_move_nothing_of_the_factory(name):
    helper, body, expected = NOT_MOVERS[name]
    assert tdv201(_with_helper(helper, body)) == [(line, col, "TDV201") for line, col in expected]


def test_helper_passed_as_a_parameter_is_not_the_files_mover():
    code = ("import torch\nimport torch.nn as nn\ndef to_cuda(t):\n    return t.cuda()\n"
            "class M(nn.Module):\n    def forward(self, x, to_cuda):\n        return x + to_cuda(torch.zeros(3))\n")
    assert tdv201(code) == [(7, 27, "TDV201")]


def test_type_of_another_tensor_is_still_no_move_next_to_a_mover():
    """rules.md (TDV201): `t.type(x.type())` goes to the current CUDA device, not x's."""
    code = _with_helper(MOVERS["to_cuda"], "return to_cuda(x) * torch.ones(3).type(x.type())")
    assert tdv201(code) == [(7, 28, "TDV201")]


def test_imported_mover_of_the_project(tmp_path):
    files = {
        "utils.py": ("def to_device(t, device):\n    return t.to(device)\n"
                     "def describe(t):\n    return str(t)\n"),
        "model.py": ("import torch\nimport torch.nn as nn\nfrom utils import to_device, describe\nclass M(nn.Module):\n"
                     "    def forward(self, x):\n        y = x + to_device(torch.zeros(3), x.device)\n"
                     "        return y + describe(torch.ones(3))\n"),
    }
    assert lint_in_project(tmp_path, files, "model.py", ONLY) == [(7, 28, "TDV201")]


# What the model's origins know beyond one expression (issue 15): each case is the shape
# of a real fix commit, written anew.
ORIGINS_REPORTED = {
    # a local derived from the input reads its size too: still the input's data
    "derived value that also reads a size": (
        "import torch\ndef mix(x: torch.Tensor):\n    h = x.view(x.size(0), -1)\n"
        "    return torch.cat([h, torch.zeros(3, 4)], 1)\n", [(4, 25)]),
    # torchmetrics' contingency matrix: tuple-unpacked results of a torch op on the input
    "tuple-unpacked results of a torch op on the input": (
        "import torch\ndef count(preds: torch.Tensor):\n    values, idx = torch.unique(preds, return_inverse=True)\n"
        "    return torch.sparse_coo_tensor(torch.stack((idx, idx)), torch.ones(idx.size(0)))\n", [(4, 60)]),
    # timm's drop_block: meshgrid of aranges, a `.to(x.dtype)` that is no move, then the input's noise
    "tuple target and a dtype-only .to()": (
        "import torch\ndef drop(x: torch.Tensor):\n    w, h = torch.meshgrid(torch.arange(4), torch.arange(5))\n"
        "    mask = (w > 1).to(x.dtype)\n    noise = torch.rand_like(x)\n    return x * (mask + noise)\n",
        [(3, 26), (3, 43)]),  # (w is made of both: each must be given the device)
    # opacus: a new tensor kept as an attribute of a tensor argument
    "stored as an attribute of a tensor argument": (
        "import torch\ndef _create_or_accumulate(param: torch.Tensor, g: torch.Tensor):\n"
        "    param.grad_sample = torch.zeros(g.shape)\n", [(3, 24)]),
    # gpytorch: a function nested in a helper closes over the helper's tensors (jaxtyping annotations)
    "nested in a helper, jaxtyping annotations": (
        "import torch\nfrom torch import Tensor\nfrom jaxtyping import Float\n"
        "def scatter(X: Float[Tensor, 'n d'], idx: Float[Tensor, 'k']):\n    n = X.shape[-2]\n"
        "    def reduce(sub: Float[Tensor, 'k']):\n        res = torch.zeros(n)\n"
        "        return torch.scatter_reduce(res, -1, idx, sub, reduce='sum')\n"
        "    return torch.vmap(reduce)(X)\n", [(7, 14)]),
    # asteroid: the partner is computed by a function of the file that returns a torch op's result
    "partner from a file function returning a torch op": (
        "import torch\ndef trace(x):\n    return torch.diagonal(x, dim1=-2, dim2=-1).sum(-1)\n"
        "def condition(x, eps=1e-6):\n    scale = eps * trace(x)[..., None, None] / x.shape[-1]\n"
        "    return x + torch.eye(x.shape[-1]) * scale\n", [(6, 15)]),
    # segment-anything: torchvision's ops need their tensors on one device
    "torchvision op beside a moved tensor": (
        "import torch\nfrom torchvision.ops.boxes import batched_nms\n"
        "def dedupe(boxes, scores):\n    scores = scores.to(boxes.device)\n"
        "    return batched_nms(boxes.float(), scores, torch.zeros(len(boxes)), 0.7)\n", [(5, 46)]),
    # captum: told the device, never reads it, returns a CPU tensor
    "device parameter ignored, CPU tensor returned": (
        "import torch\nclass T(torch.nn.Module):\n    def get_scale(self, m, device):\n"
        "        mat = torch.tensor([[m, 0.0], [0.0, m]])\n        return mat\n", [(4, 14)]),
}


@pytest.mark.parametrize("code, expected", ORIGINS_REPORTED.values(), ids=list(ORIGINS_REPORTED))
def test_origins_reported(code, expected):
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


ORIGINS_NOT_REPORTED = {
    "size only": "import torch\ndef mix(x: torch.Tensor):\n    n = x.shape[0] * 2\n    return x.sum() + n + torch.zeros(3).sum().item()\n",
    "host copy of the input": (
        "import torch\ndef stats(x: torch.Tensor):\n    h = x.cpu().view(-1)\n    return torch.cat([h, torch.zeros(3)])\n"),
    "device parameter used": (
        "import torch\ndef evaluate(model, loader, device):\n    correct = torch.zeros(1)\n"
        "    for x, y in loader:\n        correct += (model(x.to(device)).argmax(1) == y.to(device)).sum().item()\n"
        "    return correct\n"),
    "device parameter moved to at the end": (
        "import torch\ndef grid(n, device):\n    g = torch.arange(n)\n    return g.to(device)\n"),
    "attribute of something not known as a tensor": (
        "import torch\ndef init_state(state, n):\n    state.buffer = torch.zeros(n)\n"),
    "Tuple annotation is a container, not a tensor": (
        "import torch\nfrom typing import Tuple\nfrom torch import Tensor\n"
        "def split(xs: Tuple[Tensor, ...]):\n    xs.extra = torch.zeros(3)\n"),
    "torchvision op with no device tensor": (
        "import torch\nfrom torchvision.ops import batched_nms\n"
        "def dedupe(boxes, scores):\n    return batched_nms(boxes, scores, torch.zeros(len(boxes)), 0.7)\n"),
    "a file function of unknown result": (
        "import torch\ndef load_stats(path):\n    return read(path)\n"
        "def condition(x, path):\n    scale = load_stats(path)\n    return scale + torch.eye(3)\n"),
    # PyTorch's test utilities: a builder-named function of untyped inputs builds test data
    "builder-named function without tensor annotations": (
        "import torch\ndef get_sparse_data(pattern):\n    idx = torch.stack(torch.where(pattern != 0))\n"
        "    crow = torch.zeros(pattern.shape[0] + 1)\n    return (crow, idx[1])\n"),
    "nested in a builder method": (
        "import torch\nclass B:\n    def build_grid(self, x: torch.Tensor):\n"
        "        def inner(n):\n            return torch.arange(n)\n        return inner(3)\n"),
}


@pytest.mark.parametrize("code", ORIGINS_NOT_REPORTED.values(), ids=list(ORIGINS_NOT_REPORTED))
def test_origins_not_reported(code):
    assert tdv201(code) == []


def test_remedy_names_the_tensor_it_meets():
    """DRAGAN's gradient penalty: the noise meets `alpha`, on the device; the module `D`, the
    first parameter, has no `.device` to name."""
    code = (
        "import numpy as np\nimport torch\ncuda = torch.cuda.is_available()\n"
        "Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
        "def compute_gradient_penalty(D, X):\n    alpha = Tensor(np.random.random(size=X.shape))\n"
        "    return alpha * X + ((1 - alpha) * (X + 0.5 * X.std() * torch.rand(X.size())))\n"
    )
    from flake8_torchdevice.engine import Options, lint_source

    assert tdv201(code) == [(7, 59, "TDV201")]
    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    assert finding.message.endswith("pass device=alpha.device")


def test_remedy_names_no_parameter_that_is_not_shown_a_tensor():
    """peft's test: the partner is a network's output, and pytest's `tmp_path` has no device."""
    code = (
        "import torch\nclass TestTied:\n    def test_tied(self, model, config, tmp_path):\n"
        "        peft = wrap(model, config)\n        out = peft.model.head(1 / peft.model.embed(torch.tensor([[0, 1]])))\n"
        "        assert torch.allclose(torch.diag(out[0]), torch.tensor([768] * 2).float())\n")
    from flake8_torchdevice.engine import Options, lint_source

    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    assert (finding.line, finding.col) == (6, 50)
    assert finding.message.endswith("pass device=<tensor>.device of a tensor already on the right device")


@pytest.mark.parametrize("code, device, twin", [
    # a trainer keeps its device on self; `batch` (the first parameter) is a tuple, not a tensor
    ("import torch\nclass Trainer:\n    def __init__(self, model, device):\n        self.device = device\n"
     "        self.model = model.to(device)\n    def step(self, batch):\n        x, y = batch\n"
     "        x = x.to(self.device)\n        mask = torch.ones(x.shape[0])\n        return self.model(x) * mask\n",
     "self.device", False),
    # forward's input tensor: its device, and its `new_*` twin
    (HEAD + "        return x * torch.ones(x.shape[0])\n", "x.device", True),
])
def test_remedy_names_the_device_the_fix_writes(code, device, twin):
    """The message and `fix` name the same device: a user who follows either gets the same code."""
    from flake8_torchdevice.engine import Options, lint_source
    from flake8_torchdevice.fix import fix_source

    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    expected = f"pass device={device}" + (f" or use {device[:-len('.device')]}.new_ones(...)" if twin else "")
    assert finding.message.endswith(expected)
    assert f"torch.ones(x.shape[0], device={device})" in fix_source(code, "t.py", Options(enabled=ONLY)).text


def test_plain_functions_of_a_data_pipeline_file_are_cpu_work():
    """timm's naflex_transforms.patchify_image: a transform module's helper returns CPU
    coordinates beside the patches of the image it was given; the same helper in a model
    file returns them beside a tensor that may be on the GPU."""
    from flake8_torchdevice.engine import Options, lint_source

    code = (
        "import torch\ndef patchify(img: torch.Tensor, n: int, flat: bool = True):\n"
        "    patches = img.reshape(-1, n) if flat else img.reshape(n, -1)\n"
        "    coord = torch.arange(n)\n    return patches, coord\n"
    )
    assert lint_source(code, "timm/data/naflex_transforms.py", Options(enabled=ONLY)) == []
    assert [(f.line, f.code) for f in lint_source(code, "timm/models/vit.py", Options(enabled=ONLY))] == [
        (4, "TDV201")]


# What the fifth round taught, each from a shape of bug seen in research code.
ROUND5_REPORTED = {
    # a one-hot helper: the index comes from the caller, so it lives where the caller's tensors do
    "index of scatter_ from the caller's labels": (
        "import torch\ndef one_hot(labels, n):\n    out = torch.zeros(len(labels), n)\n"
        "    return out.scatter_(1, labels.unsqueeze(1), 1.0)\n", [(3, 10)]),
    "mask of masked_fill from forward's input": (forward("keep = torch.ones(4, 4)\nreturn keep.masked_fill(x.bool(), 0)"),
                                                 [(5, 15)]),
    "cat with a local computed from the caller's graph": (
        "import torch\ndef add_edge(graph, u, v):\n    edges = graph.edge_index.clone()\n"
        "    return torch.cat([edges, torch.tensor([[u], [v]])], dim=1)\n", [(4, 29)]),
    "made in one arm, the other arm follows the input": (
        "import torch\ndef precision(prec, scale):\n    if prec.ndim == 4:\n        ident = torch.eye(prec.shape[-1])\n"
        "    else:\n        ident = torch.ones_like(prec)\n    return scale * ident + prec\n", [(4, 16)]),
    "kept on self in forward, then fed to a layer": (
        forward("self.h = torch.zeros(x.shape[0], 8)\nreturn self.rnn(x, self.h)"), [(5, 17)]),
    "a lazy module's initialize_parameters runs with the input": (
        "import torch\nimport torch.nn as nn\nfrom torch.nn.modules.lazy import LazyModuleMixin\n"
        "class Blur(LazyModuleMixin, nn.Module):\n    def initialize_parameters(self, x):\n"
        "        ones = torch.ones(x.shape)\n        self.weights = self.blur(ones)\n", [(6, 15)]),
    "a loss of a moved tensor and a new one": (
        "import torch\ndef train_step(model, criterion, images, device):\n    preds = model(images.to(device))\n"
        "    target = torch.ones(preds.shape[0])\n    return criterion(preds, target)\n", [(4, 13)]),
    "raised to a parameter's power in a method without tensor inputs": (
        "import torch\nimport torch.nn as nn\nclass R(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.decay = nn.Parameter(torch.ones(n), requires_grad=False)\n"
        "    def mask(self, length):\n        steps = torch.arange(length)\n"
        "        return self.decay[:, None] ** steps\n", [(8, 16)]),
    # smee's index broadcast: the loop walks the caller's topologies; their indices live with them
    "offset added to items of the caller's collection": (
        "import torch\ndef broadcast(system):\n    out = []\n"
        "    for topology, n in zip(system.topologies, system.counts):\n"
        "        offset = torch.arange(n) * topology.size\n        idxs = topology.idxs\n"
        "        out.append(offset[:, None, None] + idxs[None, :, :])\n    return out\n", [(5, 17)]),
}


@pytest.mark.parametrize("code, expected", ROUND5_REPORTED.values(), ids=list(ROUND5_REPORTED))
def test_round5_reported(code, expected):
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


ROUND5_NOT_REPORTED = {
    "scatter_ index made here": (
        "import torch\ndef eye_like(n):\n    idx = torch.arange(n)\n    out = torch.zeros(n, n)\n"
        "    return out.scatter_(1, idx[:, None], 1.0)\n"),
    # Informer's batch step: a helper that moves the inputs it wants on the device itself
    "a helper that moves some inputs keeps the others on the host": (
        "import torch\ndef step(batch_x, batch_y, device):\n    batch_x = batch_x.float().to(device)\n"
        "    batch_y = batch_y.float()\n    pad = torch.zeros(batch_y.shape[0], 2)\n"
        "    return batch_x, torch.cat([batch_y, pad], 1).to(device)\n"),
    "a loss of tensors nobody moved": (
        "import torch\ndef evaluate(criterion, preds):\n    target = torch.ones(preds.shape[0])\n"
        "    return criterion(preds, target)\n"),
    # vit-pytorch's sin-cos embedding: two new tensors that meet each other, sized by parameters
    "factories sized by parameters meet each other": (
        "import torch\ndef posemb(h, w):\n"
        "    y, x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')\n    return x + y\n"),
    # PyTorch's masked reductions: a constructor told the device copies its parts there
    "handed to a torch constructor told the device": (
        "import torch\ndef csr(values, col, n, device):\n    crow = torch.tensor([0, n])\n"
        "    return torch.sparse_csr_tensor(crow, col, values, device=device) + values\n"),
    "the other arm's value of the name, inside that arm": (
        "import torch\ndef f(x, first):\n    if first:\n        t = torch.tensor([0, 1])\n"
        "    else:\n        t = x.clone()\n        n = t[-1] + x\n    return x.new_zeros(3)\n"),
    "kept on self, then replaced before use": forward("self.h = torch.zeros(3)\nself.h = x.new_zeros(3)\nreturn x + self.h"),
    "an attribute that is a parameter on one path only": (
        "import torch\nimport torch.nn as nn\nclass R(nn.Module):\n    def __init__(self, t, learn):\n"
        "        super().__init__()\n        if learn:\n            self.w = nn.Parameter(t)\n        else:\n"
        "            self.w = t\n    def scale(self, n):\n        return torch.arange(n) * self.w\n"),
}


@pytest.mark.parametrize("code", ROUND5_NOT_REPORTED.values(), ids=list(ROUND5_NOT_REPORTED))
def test_round5_not_reported(code):
    assert tdv201(code) == []


# What the sixth round taught (held-out set 8), each from a shape of bug seen in research code.
ROUND6_REPORTED = {
    # a default that an arm may replace: the way around the arm keeps the CPU tensor
    "a default replaced on one path only": (
        forward("y = torch.zeros(1, 1, 1)\nif x.dim() > 3:\n    y = x.mean(0)\nreturn self.conv(x) + y"),
        [(5, 12)]),
    "a default replaced in an elif chain without else": (
        forward("y = torch.zeros(1)\nif x.dim() == 2:\n    y = x.sum(1)\nelif x.dim() == 3:\n    y = x.sum(2)\n"
                "return x + y"), [(5, 12)]),
    # a module's own method, whatever its name: it runs on its inputs as forward does
    "a module method named get_*": (
        "import torch\nimport torch.nn as nn\nclass Q(nn.Module):\n    def get_td_error(self, x, w):\n"
        "        loss = (self.net(x) - x).pow(2).mean(1)\n        return torch.tensor([0.5, 2.0]) * loss\n", [(6, 15)]),
    "grad set beside the module's own parameters": (
        "import torch\nimport torch.nn as nn\nclass A(nn.Module):\n    def add_gradients(self, grads):\n"
        "        for g, p in zip(grads, self.parameters()):\n            if p.grad is None:\n"
        "                p.grad = torch.zeros(g.shape)\n", [(7, 25)]),
    # a helper's model has its parameters wherever the caller put it
    "grad set beside the parameters of a model handed in": (
        "import torch\ndef zero_grads(model):\n    for p in model.parameters():\n"
        "        p.grad = torch.zeros(p.shape)\n", [(4, 17)]),
    # an in-place method returns the tensor itself
    "an in-place method's result used later": (
        forward("mask = torch.ones(4, 4).triu_(1).bool()\nreturn x.masked_fill(mask, 0)"), [(5, 15)]),
    # `dim=` is a tensor's keyword (numpy says axis=): what it is called on is a tensor
    "a helper's locals known as tensors by dim=": (
        "import torch\ndef cum_var(x):\n    x_cum = x.cumsum(dim=1)\n    denom = torch.arange(1, x.shape[1] + 1)\n"
        "    return x_cum / denom\n", [(4, 12)]),
    "the second operand of a binary torch op": (
        "import torch\ndef step(x):\n    return torch.heaviside(x, torch.tensor([1.0]))\n", [(3, 30)]),
    # a class's arithmetic computes on its data; an input replaced on one path is kept on the other
    "arithmetic dunder of a tensor-like class": (
        "import torch\nclass TT:\n    def __add__(self, other):\n        if not isinstance(other, TT):\n"
        "            other = TT.full(other)\n        core = other.cores[0]\n"
        "        return torch.cat([core, torch.zeros(2, 3)], dim=0)\n", [(7, 32)]),
    "an index cast to long stays where the caller's labels are": (
        "import torch\nimport torch.nn as nn\nclass B(nn.Module):\n    def one_hot(self, labels, n):\n"
        "        out = torch.zeros([labels.size(0), n])\n"
        "        out.scatter_(dim=1, index=labels.type(dtype=torch.long), value=1)\n        return out\n",
        [(5, 14)]),
    # a trainer that moved its model in another method feeds it a new CPU tensor
    "fed to a model another method moved": (
        "import torch\nclass Trainer:\n    def build(self, model, device):\n        self.model = model\n"
        "        self.model.to(device)\n    def predict(self, n):\n        x = torch.zeros(n, 3)\n"
        "        return self.model(x)\n", [(7, 12)]),
}


@pytest.mark.parametrize("code, expected", ROUND6_REPORTED.values(), ids=list(ROUND6_REPORTED))
def test_round6_reported(code, expected):
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


ROUND6_NOT_REPORTED = {
    "replaced on every path": forward("if x.dim() > 3:\n    y = torch.zeros(1)\n    y = x.mean(0)\nelse:\n"
                                      "    y = x.sum(0)\nreturn x + y"),
    "replaced in both arms after it was made": forward("y = torch.zeros(1)\nif x.dim() > 3:\n    y = x.mean(0)\n"
                                                       "else:\n    y = x.sum(0)\nreturn x + y"),
    # the arm moves the tensor itself (a CUDA guard): the other way is the CPU on purpose
    "moved in a guarded arm": forward("y = torch.zeros(1)\nif x.is_cuda:\n    y = y.cuda()\nreturn y"),
    "numpy's axis= says nothing": (
        "import torch\ndef cum(x):\n    c = x.cumsum(axis=1)\n    return c / torch.arange(1, 4)\n"),
    "a trainer that moves its model to the CPU": (
        "import torch\nclass Trainer:\n    def build(self, model):\n        self.model = model\n"
        "        self.model.to('cpu')\n    def predict(self, n):\n        x = torch.zeros(n, 3)\n"
        "        return self.model(x)\n"),
    # PyTorch's numpy emulation: a sampling function whose only parameter is a shape
    "a sampling function of a size": (
        "import torch\ndef random_sample(size=None):\n    values = torch.empty(size).uniform_()\n"
        "    return as_array(values)\n"),
    # ultralytics' RT-DETR decoder: a traced count handed to `repeat` is a size
    "a device count handed to repeat": forward(
        "k = x.argmax(-1).max()\nind = torch.arange(4).unsqueeze(-1).repeat(1, k).view(-1)\nreturn x[:, ind]"),
    # the input rebound on every way through the `if` is no longer the caller's
    "an input replaced in both arms": (
        "import torch\ndef pad(x, flag):\n    if flag:\n        x = [0.0]\n    else:\n        x = [1.0]\n"
        "    return torch.cat([x, torch.zeros(1)])\n"),
    "a transform's __call__ is data work": (
        "import torch\nclass Pad:\n    def __call__(self, img):\n        return torch.cat([img, torch.zeros(1, 3)])\n"),
}


@pytest.mark.parametrize("code", ROUND6_NOT_REPORTED.values(), ids=list(ROUND6_NOT_REPORTED))
def test_round6_not_reported(code):
    assert tdv201(code) == []


def test_the_message_names_no_local_bound_after_the_factory():
    # the CPU default meets `emb`, which forward binds later: the message names the input
    from flake8_torchdevice.engine import Options, lint_source

    code = forward("y = torch.zeros(1, 1)\nemb = self.emb(x)\nreturn emb + y")
    found = lint_source(code, "m.py", Options(enabled=ONLY))
    assert [(f.line, f.col) for f in found] == [(5, 12)]
    assert "device=x.device" in found[0].text and "emb.device" not in found[0].text


# The seventh round: a CPU tensor that a function fills, element by element, with what it
# computes from the caller's tensors and hands back (torchxrayvision's op_norm, DomiKnowS'
# losses): the results come back on the CPU wherever the inputs were.
ROUND7_REPORTED = {
    "filled from a tensor input and returned by a helper": (
        "import torch\ndef op_norm(outputs: torch.Tensor, th):\n    out = torch.zeros(outputs.shape)\n"
        "    for i in range(len(outputs)):\n        out[i] = outputs[i] / (th[i] * 2)\n    return out\n",
        [(3, 10)]),
    "filled from forward's input and returned by a module's method": (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def _scores(self, x):\n"
        "        s = torch.empty(len(x))\n        for i in range(len(x)):\n            s[i] = (x[i].unsqueeze(0) @ self.w).sum()\n"
        "        return s\n", [(5, 12)]),
    # icefall's correlation limiter: a custom autograd op computes on the tensors it saved
    "a custom autograd op's backward": (
        "import torch\nclass Limiter(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n        return x\n    @staticmethod\n    def backward(ctx, grad):\n"
        "        (x,) = ctx.saved_tensors\n        X = x.detach().reshape(-1, x.shape[-1])\n"
        "        r = torch.randn(32, X.shape[1])\n        return grad + torch.matmul(r, X.t()).sum()\n",
        [(11, 12)]),
}


ROUND7_NOT_REPORTED = {
    # host-side results on purpose: numbers, or values moved to the CPU first
    "filled with numbers from the input": (
        "import torch\ndef stats(x: torch.Tensor):\n    out = torch.zeros(len(x))\n    for i in range(len(x)):\n"
        "        out[i] = x[i].sum().item()\n    return out\n"),
    "filled with values moved to the CPU": (
        "import torch\ndef stats(x: torch.Tensor):\n    out = torch.zeros(len(x))\n    for i in range(len(x)):\n"
        "        out[i] = x[i].sum().cpu()\n    return out\n"),
    "filled from values of unknown kind": (
        "import torch\ndef stats(rows):\n    out = torch.zeros(len(rows))\n    for i in range(len(rows)):\n"
        "        out[i] = rows[i] * 2\n    return out\n"),
    "filled and kept, not returned": (
        "import torch\ndef stats(x: torch.Tensor, log):\n    out = torch.zeros(len(x))\n    for i in range(len(x)):\n"
        "        out[i] = x[i].sum()\n    log.append(out)\n"),
    "a custom autograd op's numbers and placed tensors": (
        "from torch.autograd import Function\nimport torch\nclass Scale(Function):\n    @staticmethod\n"
        "    def forward(ctx, x, s):\n        ctx.s = torch.tensor(2.0)\n        return x * ctx.s\n"
        "    @staticmethod\n    def backward(ctx, grad):\n"
        "        return grad * torch.ones(grad.shape, device=grad.device), None\n"),
    "a dataset's item filled from its arrays": (
        "import torch\nclass Pairs(torch.utils.data.Dataset):\n    def __getitem__(self, i):\n"
        "        out = torch.zeros(3)\n        out[0] = self.x[i]\n        return out\n"),
}


ROUND7_REPORTED.update({
    # what one function filled says nothing of a same-named local of the next one (a table
    # keyed by a frame's id() once leaked across functions whose frames reused the address)
    "filled in one function, not in the next": (
        "import torch\ndef shift(t: torch.Tensor):\n    m = torch.eye(4)\n    m[:, 3] = t\n    return m\n"
        "def scale(s):\n    m = torch.eye(4)\n    m[:, 0] = s\n    return m\n", [(3, 8)]),
    # fairchem's get_pbc_distances: named like a getter, it computes on the caller's tensors, and
    # sends one input where another is (which says nothing of the CPU)
    "a get_ function computing on its inputs, aligning one with another": (
        "import torch\ndef get_distances(pos, cell, offsets, neighbors):\n"
        "    neighbors = neighbors.to(cell.device)\n    vec = pos[0] - pos[1] + offsets.float().bmm(cell)\n"
        "    d = vec.norm(dim=-1)\n    idx = torch.arange(len(d))[d != 0]\n    return d[idx]\n", [(6, 10)]),
    # NEASQC's trainer: predictions of moved inputs, through `torch.max` (not Python's max)
    "an accumulator of what torch.max picks from a model's outputs": (
        "import torch\nclass Trainer:\n    def predict(self):\n        found = torch.tensor([])\n"
        "        for inputs, labels in self.loader:\n            inputs = inputs.to(self.device)\n"
        "            _, preds = torch.max(self.model(inputs), 1)\n"
        "            found = torch.cat((found, preds.float()))\n        return found.cpu().numpy()\n", [(4, 16)]),
})


ROUND7_NOT_REPORTED.update({
    "Python's max of moved values is a number": (
        "import torch\ndef best(a, b, device):\n    a = a.to(device)\n    m = max(a.item(), b)\n"
        "    return torch.tensor([m]) * 2\n"),
    "a factory writing into out=": (
        "import torch\ndef get_mask(lengths):\n    n = int(torch.max(lengths).item())\n"
        "    ids = torch.arange(0, n, out=torch.cuda.LongTensor(n))\n    return ids < lengths.unsqueeze(1)\n"),
    "an empty placeholder handed to a custom op": (
        "import torch\nclass Op(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        si = torch.empty([0])\n        return kernel(x, si)\n"),
    # YOLOv2's region loss: targets built on the CPU on purpose, moved by the caller
    "a build_ function filling targets from its inputs": (
        "import torch\ndef build_targets(pred_boxes, target, n):\n    tx = torch.zeros(n, 4)\n"
        "    for b in range(n):\n        cur = pred_boxes[b].unsqueeze(0)\n        tx[b] = target[b] * cur.sum()\n"
        "    return tx\n"),
    # Informer's experiment: the batch is moved to the object's device, its other parts stay
    "a method that moves some inputs to the object's device": (
        "import torch\nclass Exp:\n    def _process_one_batch(self, batch_x, batch_y):\n"
        "        batch_x = batch_x.float().to(self.device)\n        batch_y = batch_y.float()\n"
        "        dec = torch.ones([batch_y.shape[0], 4, batch_y.shape[-1]]).float()\n"
        "        dec = torch.cat([batch_y[:, :2, :], dec], dim=1).float().to(self.device)\n"
        "        return self.model(batch_x, dec)\n"),
    "a get_ function building from sizes": (
        "import torch\ndef get_grid(h, w):\n    ys = torch.arange(h)\n    return ys[:, None] + torch.arange(w)\n"),
})


@pytest.mark.parametrize("code, expected", ROUND7_REPORTED.values(), ids=list(ROUND7_REPORTED))
def test_round7_reported(code, expected):
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


@pytest.mark.parametrize("code", ROUND7_NOT_REPORTED.values(), ids=list(ROUND7_NOT_REPORTED))
def test_round7_not_reported(code):
    assert tdv201(code) == []


# What the eighth round taught (held-out set 10): a module's static helper (ffjord's `_reparam(mu, logvar)`;
# not `_grid(n)`, which takes no tensor), a class method of a class that is no module (liegroups), and two CPU
# factories joined into one name before they meet the input (GMVAE's `y_ + torch.eye(k)`: both are reported).
ROUND8_CASES = {
    "static_helper": ("""
        import torch
        import torch.nn as nn
        class VAE(nn.Module):
            def __init__(self):
                super().__init__()
                self.mu = nn.Linear(4, 2)
            @staticmethod
            def _reparam(mu, logvar):
                eps = torch.randn(mu.size())
                return mu + eps * torch.exp(logvar / 2)
            @staticmethod
            def _grid(n):
                return torch.arange(n)
            def forward(self, x):
                mu = self.mu(x)
                return self._reparam(mu, mu) + self._grid(2)[0]
""", [(10, 14, "TDV201")]),
    "classmethod_helper": ("""
        import torch
        class SE2:
            dof = 3
            @classmethod
            def left_jacobian(cls, xi):
                jac = torch.zeros((xi.shape[0], cls.dof, cls.dof))
                small = xi.norm(dim=1) < 1e-6
                jac[small] = xi[small].unsqueeze(-1) * 0.5
                return jac
            @classmethod
            def from_config(cls, n):
                return torch.arange(n)
""", [(7, 14, "TDV201")]),
    "companions": ("""
        import torch
        import torch.nn as nn
        class GMVAE(nn.Module):
            def __init__(self, k):
                super().__init__()
                self.k = k
                self.qz = nn.Linear(8, 8)
            def forward(self, x):
                y_ = torch.zeros([x.shape[0], self.k])
                y = y_ + torch.eye(self.k)
                return self.qz(torch.cat([x, y], 1))
""", [(10, 13, "TDV201"), (11, 17, "TDV201")]),
}


@pytest.mark.parametrize("code, expected", ROUND8_CASES.values(), ids=list(ROUND8_CASES))
def test_round8_tdv201_shapes(code, expected):
    assert lint(code, enabled=select_codes()) == expected


HELPER_RETURNS = """
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.lin = nn.Linear(n, n)
    def forward(self, latent):
        feats, node_mask, edge_mask = self._prepare_input(latent)
        out = self.lin(feats)
        {use}
    def _prepare_input(self, latent):
        node_mask = torch.zeros(2, latent.shape[0], self.n)
        edge_mask = torch.zeros(2, latent.shape[0], self.n)
        return latent * 2, node_mask, edge_mask
"""


@pytest.mark.parametrize("use, expected", [
    ("return out * edge_mask", [(15, 20, "TDV201")]),  # the second mask meets the layer's output
    ("return out * edge_mask.to(out.device)", []),  # moved where it is used
    ("return out[edge_mask.long()]", []),  # a CPU index is allowed
    ("return out, node_mask.shape", []),  # only its size is read
])
def test_what_a_helper_method_returns_is_judged_where_it_is_used(use, expected):
    """lgn-autoencoder's `_prepare_input` (held-out set 10) returns masks made on the CPU to
    `forward`, which multiplies them with what its layers computed on the model's device;
    the fast path keeps `forward`, which names no factory, because it uses the helper."""
    assert lint(HELPER_RETURNS.replace("{use}", use), enabled=select_codes()) == expected


def test_a_cache_built_once_in_forward_is_also_tdv202s():
    """spikingjelly's `Dropout2d` (held-out set 10): the mask made on the CPU fails on the first
    GPU forward (TDV201); with `device=x.device` it would still keep the first call's device
    (TDV202), so `fix` leaves it to the user (register a buffer and give it the device)."""
    from flake8_torchdevice.engine import Options, lint_source

    code = forward("if self.mask is None:\n    self.mask = torch.ones(3)\nreturn x * self.mask")
    assert lint(code, enabled=frozenset({"TDV201", "TDV202"})) == [(6, 12, "TDV202"), (6, 24, "TDV201")]
    assert not any(f.fixable for f in lint_source(code, "t.py", Options(enabled=ONLY)))


def test_a_module_level_alias_of_a_factory_is_the_factory():
    """PyTorch-RL's utils: `zeros = torch.zeros` at the module's level, then `zeros(n)` in forward."""
    code = ("import torch\nimport torch.nn as nn\nzeros = torch.zeros\nclass M(nn.Module):\n"
            "    def forward(self, x):\n        return x + zeros(3)\n")
    assert tdv201(code) == [(6, 19, "TDV201")]
    assert tdv201(code.replace("zeros = torch.zeros", "zeros = lambda n: [0.0] * n")) == []


def test_bins_of_a_cpu_only_histogram_and_the_remedy_in_a_custom_op():
    """PyTorch's ONNX verification: `torch.histogram` runs on the CPU only, its bins belong
    there; a custom autograd op's `ctx` has no `.device`, its gradient has."""
    from flake8_torchdevice.engine import Options, lint_source

    code = ("import torch\nclass Info:\n    @classmethod\n    def from_tensors(cls, expected, actual):\n"
            "        diff = (expected - actual).abs()\n        bins = torch.tensor([0.0, 1e-3, 1.0])\n"
            "        return torch.histogram(diff.float(), bins=bins)\n")
    assert tdv201(code) == []
    op = ("import torch\nclass Op(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, grad):\n"
          "        return grad * torch.ones(3)\n")
    [finding] = lint_source(op, "t.py", Options(enabled=ONLY))
    assert (finding.line, finding.col) == (5, 22)
    assert finding.message.endswith("pass device=grad.device or use grad.new_ones(...)")


SMOOTHED = """\
import torch
import torch.nn.functional as F
def smooth(labels, n, eps):
    uniform = torch.full((labels.size(0), n), eps / n)
    return uniform + {other}
"""


@pytest.mark.parametrize("other, expected", [
    # either operand of a product shows the tensor, the number beside it shows nothing
    ("(1 - eps) * F.one_hot(labels, n)", [(4, 14, "TDV201")]),
    ("F.one_hot(labels, n) * (1 - eps)", [(4, 14, "TDV201")]),
    ("eps * labels.unsqueeze(1)", [(4, 14, "TDV201")]),
    ("(1 - eps) * n", []),  # numbers only
    ("eps * scale", []),  # parameters not known to be tensors
    ("len('%s' % labels)", []),  # string formatting computes nothing on a device
])
def test_a_partner_computed_from_an_input_with_a_number(other, expected):
    """A helper adds its CPU tensor to `(1 - eps) * F.one_hot(labels, n)`: the product lives
    where `labels` lives, whichever side of the operator the number is on."""
    assert tdv201(SMOOTHED.format(other=other)) == expected


EVALUATION = """\
import torch
def evaluate(model, loader, device):
    model.to(device)
    preds = []
    for x, y in loader:
        x = x.to(device)
        preds.append({item})
    labels = torch.tensor([0, 1, 1])
    return (torch.cat(preds).argmax(1) == labels).float().mean()
"""


@pytest.mark.parametrize("item, expected", [
    ("model(x)", [(8, 13, "TDV201")]),  # a list of the model's outputs sits on its device
    ("model(x).cpu()", []),  # copied to the host on purpose
    ("model(x).detach().cpu()", []),
    ("len(x)", []),  # numbers
])
def test_a_list_of_device_results_joined_by_torch(item, expected):
    """An evaluation loop collects the model's outputs in a list, joins them with `torch.cat`
    and compares them with labels made on the CPU: a list is where what was appended is."""
    assert tdv201(EVALUATION.format(item=item)) == expected


def test_a_cpu_index_for_gather_of_a_device_tensor():
    """A DQN step: `q.gather(1, idx)` needs `idx` where `q` is, and `gather` shows that `q`,
    the policy's output on the moved state, is a tensor."""
    code = ("import torch\ndef step(policy, state, actions, device):\n    s = torch.as_tensor(state).to(device)\n"
            "    q = policy(s)\n    a = torch.tensor([[1], [0]])\n    return q.gather(1, a)\n")
    assert tdv201(code) == [(5, 8, "TDV201")]
    assert tdv201(code.replace("q = policy(s)", "q = policy(state)")) == []  # nothing shown on a device
    assert tdv201(code.replace("[[1], [0]])", "[[1], [0]], device=device)")) == []


def test_a_part_of_a_moved_model_given_a_cpu_tensor_beside_a_device_one():
    """`model.rnn(out, hidden)` of a model moved to the device: the initial state made on the CPU
    meets the layer's device input; a method that copies across devices does not."""
    code = ("import torch\ndef run(model, x, device):\n    model = model.to(device)\n    out = model(x.to(device))\n"
            "    hidden = torch.zeros(2, 4, 8)\n    return model.rnn(out, hidden)\n")
    assert tdv201(code) == [(5, 13, "TDV201")]
    assert tdv201(code.replace("model.rnn(out, hidden)", "model.rnn(hidden)")) == []  # nothing beside it
    assert tdv201(code.replace("model.rnn(out, hidden)", "out.copy_(hidden)")) == []


def test_an_attribute_the_method_put_on_the_device():
    """A CLIP loss keeps `self.labels = torch.arange(n, device=...)` in forward and hands a CPU
    tensor to `F.cross_entropy` beside it (held-out set 11): attributes a method binds to a
    device tensor are on the device for the rest of that method."""
    code = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nclass ClipLoss(nn.Module):\n"
            "    def forward(self, logits):\n        self.labels = torch.arange(logits.shape[0], device=logits.device)\n"
            "        debug = F.cross_entropy(torch.zeros(*logits.shape), self.labels)\n"
            "        return F.cross_entropy(logits, self.labels)\n")
    assert tdv201(code) == [(7, 32, "TDV201")]
    # with the labels made on the CPU too, both are forward's CPU tensors
    assert tdv201(code.replace(", device=logits.device", "")) == [(6, 22, "TDV201"), (7, 32, "TDV201")]


def test_torch_scatter_takes_its_source_as_a_tensor():
    """A voxelizer's helper scatters the caller's features into a grid made on the CPU: torch_scatter's
    reductions need `src`, `index` and `out` on one device, and take `src` only as a tensor."""
    code = ("import torch\nfrom torch_scatter import segment_coo as scatter\nclass Voxelizer:\n"
            "    def voxelize(self, features, index):\n        voxels = torch.zeros(features.shape[0], 8)\n"
            "        scatter(features, index, voxels, reduce='mean')\n        return voxels\n")
    assert tdv201(code) == [(5, 17, "TDV201")]
    assert tdv201(code.replace("torch.zeros(features.shape[0], 8)", "features.new_zeros(features.shape[0], 8)")) == []


TRAINER = """\
import torch
import torch.nn as nn
class Algo{base}:
    def __init__(self, model, n, device):
        self.device = device
        self.model = model
        self.state = torch.zeros(n, 4, device=self.device)
        self.mask = torch.ones(n)
{more}
    def collect(self, obs):
{first}        return self.model(obs, self.state * self.mask.unsqueeze(1))
"""


@pytest.mark.parametrize("base, more, first, expected", [
    # a trainer's __init__ leaves a CPU tensor on self that another method combines with a device one
    ("", "", "", [(8, 20)]),
    ("(object)", "    def reset(self, n):\n        self.mask = torch.ones(n)\n", "", [(8, 20)]),
    # ... unless some method sets it on the device or moves it, or this one sets it first
    ("", "    def reset(self, n):\n        self.mask = torch.ones(n, device=self.device)\n", "", []),
    ("", "    def to(self, device):\n        self.mask = self.mask.to(device)\n", "", []),
    ("", "", "        self.mask = obs.new_ones(len(obs))\n", []),
    # a module's tensor attribute is TDV202's; a partner that is only an input proves nothing
    ("(nn.Module)", "", "", []),
])
def test_a_cpu_tensor_init_leaves_on_a_plain_object(base, more, first, expected):
    code = TRAINER.format(base=base, more=more, first=first)
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


def test_a_tensor_init_leaves_met_only_with_an_input_is_not_reported():
    code = ("import torch\nclass Normalizer:\n    def __init__(self, n):\n        self.mean = torch.zeros(n)\n"
            "        self.std = torch.ones(n)\n    def __call__(self, x):\n        return (x - self.mean) / self.std\n"
            "    def normalize(self, x: torch.Tensor):\n        return (x - self.mean) / self.std\n")
    assert tdv201(code) == []


def test_an_attribute_made_where_the_objects_tensors_are_is_no_device_one():
    # `device = self.max_val.device`: the object keeps its statistics where they already are,
    # the CPU here, so a CPU tensor meeting them is host-side work
    code = ("import torch\nclass Observer(Base):\n    def reset(self):\n        device = self.max_val.device\n"
            "        self.count = torch.tensor([], device=device)\n"
            "    def update(self, x):\n        y = x.to('cpu')\n        hits = y != torch.tensor([0])\n"
            "        return self.count + hits\n")
    assert tdv201(code) == []
    assert tdv201(code.replace("device=device", "device=self.device")) == [(8, 20, "TDV201")]


def test_a_method_forward_also_calls_runs_on_the_moved_module():
    # `build` runs a dry pass through `sample` while the module is built, but forward calls
    # `sample` at every step too: there the CPU one-hot meets the moved module's outputs
    code = """\
import torch
import torch.nn as nn
class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.build()
    def build(self):
        self.enc = nn.Linear(2, 2)
        self.sample(self.enc(torch.zeros(1, 2)))
    def forward(self, x):
        return self.sample(self.enc(x))
    def sample(self, alpha):
        _, idx = torch.max(alpha, dim=1)
        one_hot = torch.zeros(alpha.size())
        one_hot.scatter_(1, idx.view(-1, 1).data, 1)
        return one_hot
"""
    assert tdv201(code) == [(14, 18, "TDV201")]
    assert tdv201(code.replace("        return self.sample(self.enc(x))\n", "        return self.enc(x)\n")) == []


def test_a_comparison_with_an_input_is_a_tensor_where_it_is():
    code = """\
import torch
import torch.nn as nn
class Decoder(nn.Module):
    def inference(self, memory):
        done = torch.ones(memory.size(0), 1).bool()
        while True:
            out, gate = self.decode(memory)
            done = done * (torch.sigmoid(gate.data) < self.threshold)
            if torch.all(~done):
                break
        return out
"""
    assert tdv201(code) == [(5, 15, "TDV201")]


@pytest.mark.parametrize("call, expected", [
    ("torch.max(torch.zeros(x.shape), x - eps)", [(4, 21)]),  # elementwise, across devices
    ("torch.min(x + eps, torch.ones(x.shape))", [(4, 30)]),
    ("max(torch.zeros(1).item(), eps)", []),  # Python's max of numbers
    ("torch.max(torch.zeros(x.shape))", []),  # a reduction of the new tensor alone
])
def test_torch_max_and_min_of_two_tensors_compare_elementwise(call, expected):
    code = f"import torch\n\ndef box(x: torch.Tensor, eps: float):\n    return {call}\n"
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


def test_the_parts_of_an_input_unpacked_in_a_loss_are_the_callers_tensors():
    code = """\
import torch
class MixtureLoss:
    def nll(self, x, y):
        log_pi, mu = x
        table = torch.zeros(mu.shape[0], 3)
        for b in range(3):
            table[b] = 1.0
        weighted = table + log_pi
        return -torch.sum(torch.logsumexp(weighted, dim=1))
"""
    assert tdv201(code) == [(5, 16, "TDV201")]
    # in a plain helper an unpacked part proves nothing by itself
    assert tdv201(code.replace("MixtureLoss", "Mixture")) == []


# ---------------------------------------------------------------- legacy constructors
LEGACY_REPORTED = {
    # deep_rl's Tsallis entropy: a 1-element CPU floor for a GPU input (not 0-dim: it fails)
    "a legacy constructor's data in torch.max with the input": (
        forward("safe_x = torch.max(x, torch.Tensor([1e-6]))\nreturn safe_x"), [(5, 30)]),
    "a typed legacy constructor's size in arithmetic with the input": (
        forward("return x * torch.FloatTensor(x.shape[0], 1).fill_(0.5)"), [(5, 19)]),
    "a legacy constructor of zero, which is data [0.0], not a size": (
        forward("return x + torch.Tensor([0])"), [(5, 19)]),
}


@pytest.mark.parametrize("code, expected", LEGACY_REPORTED.values(), ids=list(LEGACY_REPORTED))
def test_legacy_constructors_make_cpu_tensors(code, expected):
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


LEGACY_NOT_REPORTED = {
    "an empty placeholder": forward("e = torch.Tensor()\nreturn torch.cat([e, x])"),
    "a placeholder of size 0": forward("return torch.cat([torch.Tensor(0), x])"),
    "moved before it is used": forward("return x + torch.Tensor([0.5]).to(x.device)"),
    # lpips: a Variable is its tensor, moved under the module's GPU flag
    "wrapped in a Variable and moved under a GPU flag": forward(
        "v = Variable(torch.Tensor((x.sum().item(),)))\nif self.use_gpu:\n    v = v.cuda()\nreturn v"),
    # a class annotation and an isinstance test are no calls
    "the class named, not called": forward("assert isinstance(x, torch.Tensor)\nreturn x"),
}


@pytest.mark.parametrize("code", LEGACY_NOT_REPORTED.values(), ids=list(LEGACY_NOT_REPORTED))
def test_legacy_constructors_not_reported(code):
    assert tdv201(code.replace("import torch\n", "import torch\nfrom torch.autograd import Variable\n", 1)) == []


def test_legacy_constructor_remedy_moves_it():
    """`torch.FloatTensor(..., device="cuda")` raises: the remedy moves the tensor instead."""
    found = lint_source(forward("return x * torch.FloatTensor(x.shape[0], 1)"), "t.py",
                        Options(enabled=ONLY))
    assert [f.message.split("; ")[1] for f in found] == ["move it: .to(x.device)"]


# ---------------------------------------------------------------- round 12: shapes seen on unseen code
def test_a_part_of_the_module_named_like_a_class_computes_on_its_device():
    """TUD_RL's LSTMRecDQN: `self.LSTM_outer(x_tilde)` is a layer, not a constructor that
    would register its argument."""
    code = forward("h = torch.zeros((x.shape[0], 3, 128))\nout, _ = self.LSTM_outer(h)\nreturn out")
    assert tdv201(code) == [(5, 12, "TDV201")]
    # a class of the file called with it may register it
    assert tdv201(code.replace("self.LSTM_outer(h)", "LSTMState(h)")) == []


def test_a_batch_generator_yields_its_parts_placed_one_by_one():
    """pytorch/examples' ddp_rpc: indices stay on the CPU for a remote embedding, the
    target goes to the trainer's GPU."""
    code = """\
import torch
def batches(rank):
    for _ in range(10):
        indices = torch.LongTensor(8).random_(0, 100)
        target = torch.LongTensor(4).random_(8).to(rank)
        yield indices, target
"""
    assert tdv201(code) == []
    # returned side by side, they are one result, as yolov5's stats tuples are
    assert tdv201(code.replace("yield", "return")) == [(4, 18, "TDV201")]


def test_after_an_early_return_on_cuda_the_rest_runs_without_it():
    """dino's PCA.apply: `if x.is_cuda: ... return`, then the CPU path."""
    code = """\
import torch
class PCA:
    def apply(self, x: torch.Tensor):
        if x.is_cuda:
            return torch.mm(torch.cuda.FloatTensor(self.dvt), x.t()).t()
        return torch.mm(torch.FloatTensor(self.dvt), x.t()).t()
"""
    assert tdv201(code) == []
    # without the early return both paths meet the CPU tensor
    assert tdv201(code.replace("            return torch.mm(torch.cuda", "            y = torch.mm(torch.cuda")) \
        == [(6, 24, "TDV201")]


def test_integer_arithmetic_indexing_a_new_tensor_is_no_mask():
    """pix2pixHD's UI model: `idx[i * bw, 2] = ...` with a brush width `bw`."""
    code = forward("idx = torch.zeros(9, 4).long()\nfor i in range(3):\n    idx[i * x, 2] = i\n"
                   "return idx.cuda()")
    assert tdv201(code) == []
    assert tdv201(forward("idx = torch.zeros(9, 4)\nreturn idx[x > 0]")) == [(5, 14, "TDV201")]


def test_a_moved_storage_copies_what_it_is_given():
    """a2c's RolloutStorage: `rollouts.to(device)`, then `rollouts.insert(obs, value, masks)`."""
    code = """\
import torch
def train(actor_critic, rollouts, envs, device):
    rollouts.to(device)
    actor_critic.to(device)
    for step in range(5):
        value, action = actor_critic.act(rollouts.obs[step])
        obs, reward, done, infos = envs.step(action)
        masks = torch.FloatTensor([[0.0] if d else [1.0] for d in done])
        rollouts.insert(obs, action, value, reward, masks)
"""
    assert tdv201(code) == []
    assert tdv201(code.replace("rollouts.insert", "rollouts.evaluate")) == [(8, 16, "TDV201")]


def test_an_index_for_a_method_of_another_new_cpu_tensor():
    """YOLOv4's region loss: `torch.Tensor(anchors).view(...).index_select(1, torch.LongTensor([0]))`,
    all on the CPU, then `.cuda()`."""
    code = forward("w = torch.Tensor(self.anchors).view(5, 2).index_select(1, torch.LongTensor([0])).cuda()\n"
                   "return x * w")
    assert tdv201(code) == []


def test_a_cuda_type_chosen_where_cuda_is_there_moves_it_inside_a_variable():
    """PyTorch-GAN's MUNIT: `Variable(torch.randn(n, d).type(Tensor))`."""
    code = """\
import torch
from torch.autograd import Variable
cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
for x in loader:
    x = Variable(x.type(Tensor))
    style = Variable(torch.randn(x.size(0), 8).type(Tensor))
    out = x * style
"""
    assert tdv201(code) == []
    assert tdv201(code.replace(".type(Tensor))\n    out", ")\n    out")) == [(7, 21, "TDV201")]


def test_a_distribution_computes_on_the_tensors_it_was_given():
    """rlkit's TanhNormal and s-vae's VonMisesFisher: `__init__` keeps the caller's
    tensors, `rsample()` mixes CPU noise or bounds with them."""
    code = """\
import torch
from torch.distributions import Distribution, Normal
class TanhNormal(Distribution):
    def __init__(self, normal_mean, normal_std, epsilon=1e-6):
        self.normal_mean = normal_mean
        self.normal_std = normal_std
        self.epsilon = epsilon
    def rsample(self):
        noise = Normal(torch.zeros(self.normal_mean.size()), torch.ones(self.normal_std.size())).sample()
        return torch.tanh(self.normal_mean + self.normal_std * noise)
    def clipped(self):
        return torch.max(torch.Tensor([0.0]), self.normal_std - 10)
"""
    assert tdv201(code) == [(9, 23, "TDV201"), (9, 61, "TDV201"), (12, 25, "TDV201")]
    found = lint_source(code, "t.py", Options(enabled=ONLY))
    assert found[-1].message.endswith("move it: .to(self.normal_std.device)")
    # a plain class holding the same tensors says nothing of where its methods run
    assert tdv201(code.replace("(Distribution)", "")) == []
    # what the distribution made itself, not handed in, is no partner (line 12); met with what
    # it was handed (line 10), it is reported where it was made
    made = code.replace("self.normal_std = normal_std", "self.normal_std = torch.ones(3)")
    assert tdv201(made) == [(6, 26, "TDV201"), (9, 23, "TDV201"), (9, 61, "TDV201")]


def test_a_helper_that_turns_its_tensors_into_arrays_without_cpu_runs_on_the_cpu():
    """pytorch-cnn-visualizations' backprop classes: `.numpy()` of the gradients a hook kept,
    with no `.cpu()`, raises for a GPU tensor: the method works on the CPU by design, and its
    CPU seed gradient is right there."""
    code = """\
import torch
class VanillaBackprop:
    def generate_gradients(self, input_image, target_class):
        model_output = self.model(input_image)
        one_hot_output = torch.FloatTensor(1, model_output.size()[-1]).zero_()
        one_hot_output[0][target_class] = 1
        model_output.backward(gradient=one_hot_output)
        return self.gradients.data.numpy()[0]
"""
    assert tdv201(code) == []
    # with `.cpu()` the host copy works anywhere, and says nothing of where the method runs
    assert tdv201(code.replace(".data.numpy()", ".data.cpu().numpy()")) == [(5, 25, "TDV201")]
    # nor does an array of a tensor the method made itself
    assert tdv201(code.replace("self.gradients.data.numpy()", "torch.zeros(2).numpy()")) == [(5, 25, "TDV201")]


def test_an_empty_placeholder_joined_to_a_device_tensor():
    """ssd-pytorch's predict_all: `bbs = torch.empty(0)`, then `torch.cat((bbs, part))` for
    each class: `cat` checks the device of every tensor, empty or not."""
    code = forward("bbs = torch.empty(0)\nfor part in x.unbind(0):\n    bbs = torch.cat((bbs, part))\nreturn bbs")
    assert tdv201(code) == [(5, 14, "TDV201")]
    assert tdv201(code.replace("torch.cat((bbs, part))", "torch.stack([part, bbs])")) == [(5, 14, "TDV201")]
    # replaced before it meets anything, or handed to an op that ignores it: no data of its own
    assert tdv201(code.replace("torch.cat((bbs, part))", "part * 2")) == []
    assert tdv201(forward("acc = torch.empty(0)\nreturn kernel(x, acc)")) == []


def test_an_accumulator_added_to_in_part():
    """`conf[:k, :k] += batch_conf`: the in-place add of a device tensor into a CPU one fails."""
    code = forward("conf = torch.zeros(10, 10)\nk = x.shape[0]\nconf[:k, :k] += x.sum(0)\nreturn float(conf.trace())")
    assert tdv201(code) == [(5, 15, "TDV201")]
    assert tdv201(code.replace("+= x.sum(0)", "+= x.sum(0).item()")) == []


def test_a_cpu_tensor_handed_to_a_drawing_function():
    """kornia's ObjectDetector.draw: `draw_rectangle(out_img, torch.Tensor([[box]]))` reads the
    boxes on the host (`.tolist()`) and writes slices of the image: no device mix."""
    code = forward("box = torch.Tensor([[[1.0, 2.0, 3.0, 4.0]]])\nreturn draw_rectangle(x, box)")
    assert tdv201(code) == []
    assert tdv201(code.replace("draw_rectangle", "blend_rectangle")) == [(5, 14, "TDV201")]


def test_a_call_dunder_that_backpropagates_is_no_transform():
    """glasses' GradCam and vit-explain's rollout: `__call__` runs the model on its input and
    backpropagates a one-hot mask made on the CPU. A transform's `__call__` never calls
    `.backward()`."""
    code = """\
import torch
class GradRollout:
    def __call__(self, input_tensor, category_index):
        output = self.model(input_tensor)
        category_mask = torch.zeros(output.size())
        category_mask[:, category_index] = 1
        loss = (output * category_mask).sum()
        loss.backward()
        return self.attentions
"""
    assert tdv201(code) == [(5, 24, "TDV201")]
    assert tdv201(code.replace("        loss.backward()\n", "")) == []


def test_torch_tensor_of_a_reshaped_or_converted_array_is_data():
    """BackdoorBench's trojannn attack: `torch.tensor(denoise(...).transpose(2, 0, 1))` times
    a pattern on the device: an array's data, not a number that would make a 0-dim tensor."""
    code = ("import torch\ndef refine(pattern, device):\n    pattern = pattern.to(device)\n"
            "    out = torch.tensor(denoise(pattern.cpu().numpy()).transpose(2, 0, 1)) * (pattern > 0)\n"
            "    return out\n")
    assert tdv201(code) == [(4, 10, "TDV201")]
    assert tdv201(code.replace(".transpose(2, 0, 1)", ".astype('float32')")) == [(4, 10, "TDV201")]
    assert tdv201(code.replace(".transpose(2, 0, 1)", ".item()")) == []


def test_a_0_dim_tensor_given_a_dimension_or_stacked_is_a_cpu_tensor_again():
    """ContinualNAT's GLAT.generate: `torch.tensor(token_id).unsqueeze(0)` joined by `torch.cat`
    to rows of the GPU input. A 0-dim CPU tensor mixes with any device; one with a dimension
    does not, and `torch.stack` checks every device."""
    code = ("import torch\nclass M(torch.nn.Module):\n    def generate(self, input_ids, token_id: int):\n"
            "        token = torch.tensor(token_id).unsqueeze(0)\n        rows = []\n"
            "        for i, row in enumerate(input_ids):\n            rows.append(torch.cat([row, token]))\n"
            "        return torch.stack(rows)\n")
    assert tdv201(code) == [(4, 16, "TDV201")]
    assert tdv201(code.replace(".unsqueeze(0)", "")) == []  # 0-dim: cat refuses it on any device
    assert tdv201(forward("return x * torch.tensor(2.0).view(1)")) == [(5, 19, "TDV201")]
    assert tdv201(forward("return x * torch.tensor(2.0)")) == []
    assert tdv201(forward("return torch.stack([x.sum(), torch.tensor(0.0)])")) == [(5, 37, "TDV201")]
    # stylegan's training_stats.report(name, value): `torch.as_tensor(value)` of what may be a
    # tensor keeps its device, flattened and stacked or not
    stats = ("import torch\ndef report(name, value):\n    elems = torch.as_tensor(value).detach().flatten()\n"
             "    return torch.stack([torch.ones_like(elems).sum(), elems.sum()])\n")
    assert tdv201(stats) == []


def test_a_loss_function_of_the_project_named_like_one():
    """cs336's autocast script: the model and `x` moved to the GPU, then the project's
    `cross_entropy(logits, torch.randint(0, 10, (10, 10)))`."""
    code = ("import torch\nfrom utils import cross_entropy\nmodel = Toy()\nx = torch.randn(10, 10)\n"
            "model.to(device)\nx = x.to(device)\nlogits = model(x)\n"
            "loss = cross_entropy(logits, torch.randint(0, 10, (10, 10)))\n")
    assert tdv201(code) == [(8, 29, "TDV201")]
    assert tdv201(code.replace("cross_entropy(logits,", "summarize(logits,")) == []


BUNDLE = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 4)
    def initial_step(self, obs):
        hidden = self.head(obs)
        state = (torch.zeros(1, obs.size(0), 8), torch.zeros(1, obs.size(0), 8))
        return {ret}
"""


@pytest.mark.parametrize("ret, expected", [
    # LightZero's `initial_inference`: the recurrent state made on the CPU is handed out with
    # the output computed on the inputs' device, by a method only callers outside the class use
    ("Output(hidden, state)", [(9, 17, "TDV201"), (9, 49, "TDV201")]),
    ("hidden, state", [(9, 17, "TDV201"), (9, 49, "TDV201")]),
    ("state", []),  # alone: judged by whoever uses it, which we do not see
    ("hidden.shape, state", []),  # a size is no tensor on a device
    ("self.head.weight.dtype, state", []),
])
def test_a_cpu_tensor_returned_beside_the_inputs_result(ret, expected):
    assert tdv201(BUNDLE.format(ret=ret)) == expected


def test_a_bundle_is_judged_where_the_class_uses_it_and_spares_stand_ins():
    # a method the class calls itself is judged at that call (test_what_a_helper_method_returns...)
    called = BUNDLE.format(ret="hidden, state") + "    def forward(self, x):\n" \
        "        out, state = self.initial_step(x)\n        return out\n"
    assert tdv201(called) == []
    # a 0-dim stand-in (`log_prob` of a deterministic policy) mixes with any device
    sac = BUNDLE.format(ret="hidden, torch.tensor(0.), hidden")
    assert tdv201(sac) == []
    # an index the method used is returned for indexing (`x[:, keep], keep`)
    index = BUNDLE.format(ret="hidden[:, keep], keep").replace(
        "state = (", "keep = torch.randperm(4)[:2]\n        state = (")
    assert tdv201(index) == []


def test_a_method_named_initial_runs_per_input():
    """`initial_step(self, obs)`, `initial_state(self, x)` run with the input; only
    `initialize...` names a builder."""
    code = BUNDLE.format(ret="hidden, state")
    assert tdv201(code) == [(9, 17, "TDV201"), (9, 49, "TDV201")]
    assert tdv201(code.replace("initial_step", "initialize_state")) == []


@pytest.mark.parametrize("name, expected", [
    # RecBole's `Random.predict(self, interaction)` returns `torch.rand(len(interaction))` to the
    # evaluation loop, which meets it with the GPU scores of the other models' batches
    ("predict", [(9, 17, "TDV201"), (9, 49, "TDV201")]),
    ("full_sort_predict", [(9, 17, "TDV201"), (9, 49, "TDV201")]),
    ("initial_inference", [(9, 17, "TDV201"), (9, 49, "TDV201")]),
    ("sample", [(9, 17, "TDV201"), (9, 49, "TDV201")]),
    ("initial_step", []),  # not named like an entry point: judged where it is used, unseen
    ("predictor_state", []),  # not the whole word
])
def test_what_an_entry_point_of_a_module_returns_goes_to_its_callers(name, expected):
    assert tdv201(BUNDLE.format(ret="state").replace("initial_step", name)) == expected


def test_an_entry_point_the_class_calls_itself_is_judged_there():
    code = BUNDLE.format(ret="state").replace("initial_step", "predict") + \
        "    def forward(self, x):\n        state = self.predict(x)\n        return x\n"
    assert tdv201(code) == []


def test_a_value_computed_from_a_modules_inputs_is_where_they_are():
    """robomimic's noise randomizer: `out = TensorUtils.repeat_by_expand_at(inputs, ...)` (a
    function of the project), then `torch.rand(size=out.shape) * std + out` in a module's
    method: what forward's inputs become is on their device, as they are."""
    code = ("import torch\nimport utils\nclass Noise(torch.nn.Module):\n    def _forward_in(self, inputs):\n"
            "        out = utils.repeat_by_expand_at(inputs, repeats=4, dim=0)\n"
            "        out = torch.rand(size=out.shape) * 0.1 + out\n        return out\n")
    assert tdv201(code) == [(6, 14, "TDV201")]
    assert tdv201(code.replace("repeat_by_expand_at(inputs,", "repeat_by_expand_at(None,")) == []
    assert tdv201(code.replace("+ out", "+ out.shape[0]")) == []  # a size
    assert tdv201(code.replace("+ out\n", "+ out.cpu()\n")) == []  # on the host on purpose
    # lightly's crop transform (a module): `cell = location.width / n` is a number read from
    # its input, not the input become something else
    grid = ("import torch\nclass Crop(torch.nn.Module):\n    def grid(self, location):\n"
            "        cell = location.width / self.n\n"
            "        points = torch.linspace(location.left, location.right, self.n) + cell / 2\n"
            "        return torch.stack([points, points], -1)\n")
    assert tdv201(grid) == []


def test_what_a_function_told_the_device_returns_is_there():
    """gflownet's `states = tlong(states, device=self.device)`, then `states + torch.arange(n)`:
    any function given `device=` places its result there; not `device=torch.device("cpu")`
    (yolov5's export loads its model on the CPU on purpose)."""
    code = ("import torch\nfrom utils import tlong\nclass Grid:\n    def states2policy(self, states):\n"
            "        states = tlong(states, device=self.device)\n"
            "        return states + torch.arange(self.n_dim) * self.length\n")
    assert tdv201(code) == [(6, 24, "TDV201")]
    assert tdv201(code.replace("device=self.device", "dtype=torch.long")) == []
    script = ("import torch\nfrom models import load\nmodel = load('w.pt', device={device})\n"
              "x = torch.zeros((1, 3, 64, 64))\ny = model(x)\n")
    assert tdv201(script.format(device="torch.device(args.device)")) == [(4, 4, "TDV201")]
    assert tdv201(script.format(device="torch.device('cpu')")) == []


def test_what_a_moved_model_computes_is_on_its_device():
    """SASRec's training loop: `pos_pred, neg_pred = model(u, seq, pos, neg)` of a model moved
    where it was built, then `bce(pos_pred[i], torch.ones(pos_pred.shape)[i])`; the two labels
    of one statement are reported once each."""
    code = ("import torch\nclass SASRec(torch.nn.Module):\n    pass\nmodel = SASRec(args).to(args.device)\n"
            "bce = torch.nn.BCELoss()\nfor u, seq in batches:\n    pos_pred, neg_pred = model(u, seq)\n"
            "    pos_labels, neg_labels = torch.ones(pos_pred.shape), torch.zeros(neg_pred.shape)\n"
            "    loss = bce(pos_pred[idx], pos_labels[idx]) + bce(neg_pred[idx], neg_labels[idx])\n")
    assert tdv201(code) == [(8, 29, "TDV201"), (8, 57, "TDV201")]
    assert tdv201(code.replace(".to(args.device)", "")) == []
    # a moved pipeline (not a module) returns images as arrays (diffusers' tests)
    pipeline = code.replace("class SASRec(torch.nn.Module)", "class SASRec")
    assert tdv201(pipeline) == []


def test_the_seed_of_autograd_grad_given_by_keyword():
    """mace's dielectric gradients: `torch.autograd.grad(outputs=[d[:, i].unsqueeze(-1)],
    inputs=[positions], grad_outputs=[torch.ones((n, 1))])`, every argument by keyword."""
    code = ("import torch\ndef gradients(dielectric: torch.Tensor, positions: torch.Tensor):\n"
            "    seed = [torch.ones((dielectric.shape[0], 1))]\n"
            "    return torch.autograd.grad(outputs=[dielectric[:, 0].unsqueeze(-1)], inputs=[positions],\n"
            "                               grad_outputs=seed)\n")
    assert tdv201(code) == [(3, 12, "TDV201")]
    assert tdv201(code.replace("torch.ones((dielectric.shape[0], 1))",
                               "torch.ones((dielectric.shape[0], 1), device=dielectric.device)")) == []


def test_a_dict_that_mixes_devices_is_no_bug_by_itself():
    """habitat's `_init_policy_input` hands the policy a dict whose recurrent state is on the
    CPU beside `prev_actions` on the device, a real bug; but tests of mixed inputs (lerobot's
    device processor) and state dicts mix devices on purpose, and sizes stay on the CPU: a
    dict is not judged (a tried rule raised such false positives in lerobot's and diffusers' tests)."""
    code = ("import torch\nclass Controller:\n    def _init_policy_input(self):\n"
            "        prev_actions = torch.zeros(self.n, 2, device=self.device)\n"
            "        hidden = torch.zeros(self.n, 4, 512)\n"
            "        return {'rnn_hidden_states': hidden, 'prev_actions': prev_actions}\n")
    assert tdv201(code) == []
    mixed = ("import torch\ndef test_mixed():\n    observation = {'cpu': torch.randn(5), "
             "'cuda': torch.randn(5).cuda()}\n    process(observation)\n")
    assert tdv201(mixed) == []


def test_an_accumulator_of_losses_computed_from_the_inputs():
    """mmtracking's embed head: `loss_track = torch.tensor([0.])`, then `loss_track +=
    self.loss_track(_sims, _targets)` for the parts of its inputs (a 0-dim start fails too:
    an in-place result stays on the CPU)."""
    code = ("import torch\nclass Head(torch.nn.Module):\n    def loss(self, sims, targets):\n"
            "        total = torch.tensor([0.])\n        for s, t in zip(sims, targets):\n"
            "            total += self.loss_track(s, t)\n        return total\n")
    assert tdv201(code) == [(4, 16, "TDV201")]
    assert tdv201(code.replace("torch.tensor([0.])", "torch.tensor(0.)")) == [(4, 16, "TDV201")]
    assert tdv201(code.replace("torch.tensor([0.])", "0.0")) == []
    assert tdv201(code.replace("self.loss_track(s, t)", "self.count(s, t)")) == []


def test_what_a_held_network_computes_from_a_helpers_inputs():
    """d3rlpy's TD3 `compute_target(self, x)`: `action = self.targ_policy(x)` (a network the
    algorithm object keeps), then `action + sigma * torch.randn(action.shape)`; not what a
    method of the class returns (unknown) nor what the network computes from nothing given."""
    code = ("import torch\nclass TD3Impl:\n    def compute_target(self, x):\n"
            "        action = self.targ_policy(x)\n"
            "        noise = self.sigma * torch.randn(action.shape)\n"
            "        return self.targ_q(x, action + noise)\n")
    assert tdv201(code) == [(5, 29, "TDV201")]
    method = code + "    def targ_policy(self, x):\n        return x.numpy()\n"
    assert tdv201(method) == []
    assert tdv201(code.replace("self.targ_policy(x)", "self.targ_policy(self.n)")) == []


def test_nn_init_fills_its_argument_in_place():
    """mbrl-lib's `truncated_normal_(tensor)`: `torch.where(cond, nn.init.normal_(
    torch.ones(tensor.shape)), tensor)`: `normal_` returns the CPU tensor it filled."""
    code = ("import torch\ndef truncated_normal_(tensor: torch.Tensor, std: float = 1):\n"
            "    cond = tensor > 2 * std\n"
            "    return torch.where(cond, torch.nn.init.normal_(torch.ones(tensor.shape), std=std), tensor)\n")
    assert tdv201(code) == [(4, 51, "TDV201")]
    assert tdv201(code.replace("torch.ones(tensor.shape)", "torch.ones(tensor.shape, device=tensor.device)")) == []


def test_a_tensor_moved_onto_itself_stays_where_it_is():
    """lightning-bolts' GAN: `fake = torch.zeros(n, 1)`, then `fake = fake.type_as(fake)`
    (meant `type_as(x)`): no move at all."""
    code = ("import torch\nclass GAN(torch.nn.Module):\n    def discriminator_loss(self, x):\n"
            "        fake = torch.zeros(x.size(0), 1)\n        fake = fake.type_as(fake)\n"
            "        return self.adversarial_loss(self.discriminator(x), fake)\n")
    assert tdv201(code) == [(4, 15, "TDV201")]
    assert tdv201(code.replace("fake.type_as(fake)", "fake.type_as(x)")) == []


def test_counters_and_sizes_are_no_parts_of_the_inputs():
    """Comfy's qwen_vl windows: `for t, h, w in grid_thw:` then `pad = size - (h // m) % size`
    handed to `F.pad`: sizes, not tensors; habitat's `for i, plan in enumerate(masks):` then
    `skills[i] = ...`: `i` counts. What a loop takes of its input is a part of it otherwise
    (mmtracking's `for s, t in zip(sims, targets)`, test_an_accumulator_of_losses...)."""
    pad = ("import torch\nimport torch.nn.functional as F\nclass Vit(torch.nn.Module):\n"
           "    def windows(self, grid_thw):\n        out = []\n        for t, h, w in grid_thw:\n"
           "            index = torch.arange(t * h * w).reshape(t, h, w)\n"
           "            pad_h = 8 - (h // 2) % 8\n            out.append(F.pad(index, (0, 0, 0, pad_h)))\n"
           "        return out\n")
    assert tdv201(pad) == []
    counter = ("import torch\nclass Planner(torch.nn.Module):\n    def plan(self, masks):\n"
               "        skills = []\n        for i, m in enumerate(masks):\n"
               "            skills.append(torch.ones(3) * i)\n        return torch.cat(skills)\n")
    assert tdv201(counter) == []


STATE_MAKER = """import torch
import torch.nn as nn
class Cell(nn.Module):
    def __init__(self, n, h):
        super().__init__()
        self.h = h
        self.gru = nn.GRUCell(n, h)
    def forward(self, x, hidden):
        return self.gru(x, hidden)
    def {name}(self, batch_size):
        return torch.zeros(batch_size, self.h)
"""


@pytest.mark.parametrize("name, expected", [
    # mmocr's `AttentionGRUCell.init_hidden(self, batch_size)`: the decoder (another file) feeds the
    # CPU state to the moved cell with its GPU inputs, once per batch
    ("init_hidden", [(11, 15, "TDV201")]),
    ("initHidden", [(11, 15, "TDV201")]),
    ("init_hidden_state", [(11, 15, "TDV201")]),
    ("get_initial_state", [(11, 15, "TDV201")]),
    ("zero_state", [(11, 15, "TDV201")]),
    ("begin_state", [(11, 15, "TDV201")]),
    # mamba.py's jamba layers (set 29): a decoder's empty cache for a generation
    ("get_empty_cache", [(11, 15, "TDV201")]),
    ("init_kv_cache", [(11, 15, "TDV201")]),
    ("init_weights", []),  # a builder, run once
    ("init_hidden_layers", []),  # not a state: builds layers
    ("hidden_size", []),
])
def test_a_recurrent_state_maker_returns_its_state_to_callers(name, expected):
    assert tdv201(STATE_MAKER.format(name=name)) == expected


def test_a_recurrent_state_maker_that_stores_its_state_for_forward():
    # nowcast_lstm's `MV_LSTM.init_hidden`: the state is kept on `self`, and forward (later in
    # the class, naming no factory) feeds it to the moved LSTM with the GPU batch
    code = """import torch
class MV_LSTM(torch.nn.Module):
    def __init__(self, n_features, n_hidden):
        super().__init__()
        self.n_hidden = n_hidden
        self.l_lstm = torch.nn.LSTM(n_features, n_hidden, batch_first=True)
    def init_hidden(self, batch_size):
        hidden_state = torch.zeros(1, batch_size, self.n_hidden)
        cell_state = torch.zeros(1, batch_size, self.n_hidden)
        self.hidden = (hidden_state, cell_state)
    def forward(self, x):
        x, self.hidden = self.l_lstm(x, self.hidden)
        return x
"""
    assert tdv201(code) == [(8, 23, "TDV201"), (9, 21, "TDV201")]
    # a state forward never reads is not the inputs' partner
    assert tdv201(code.replace("self.l_lstm(x, self.hidden)", "self.l_lstm(x)")) == []
    # nor is one made where the module's parameters are
    placed = code.replace("self.n_hidden)\n", "self.n_hidden, device=self.l_lstm.weight_hh_l0.device)\n")
    assert tdv201(placed) == []


def test_a_recurrent_state_maker_on_the_modules_device_or_run_at_construction_is_fine():
    on_device = STATE_MAKER.format(name="init_hidden").replace(
        "torch.zeros(batch_size, self.h)", "torch.zeros(batch_size, self.h, device=self.gru.weight_hh.device)")
    assert tdv201(on_device) == []
    # word_language_model's idiom
    new_zeros = STATE_MAKER.format(name="init_hidden").replace(
        "return torch.zeros(batch_size, self.h)",
        "weight = next(self.parameters())\n        return weight.new_zeros(batch_size, self.h)")
    assert tdv201(new_zeros) == []
    # called by __init__: made before the module can be moved (TDV202 judges what is kept)
    at_init = STATE_MAKER.format(name="init_hidden").replace(
        "self.gru = nn.GRUCell(n, h)", "self.gru = nn.GRUCell(n, h)\n        size = self.init_hidden(1).shape")
    assert tdv201(at_init) == []
    # not a module: an agent's helper, judged where its result meets a device tensor
    plain = STATE_MAKER.format(name="init_hidden").replace("(nn.Module)", "").replace(
        "        super().__init__()\n", "")
    assert tdv201(plain) == []


def test_a_recurrent_state_used_whole_by_the_class_counts_for_each_part():
    # the tuple `initHidden` returns goes, whole, into the moved LSTM with the GPU input
    code = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, n, h):
        super().__init__()
        self.h = h
        self.lstm = nn.LSTM(n, h)
    def initHidden(self, bsz):
        return (torch.zeros(1, bsz, self.h), torch.zeros(1, bsz, self.h))
    def forward(self, x):
        hidden = self.initHidden(x.size(1))
        return self.lstm(x, hidden)
"""
    assert tdv201(code) == [(9, 16, "TDV201"), (9, 45, "TDV201")]
    moved = code.replace("return (torch.zeros(1, bsz, self.h), torch.zeros(1, bsz, self.h))",
                         "return (torch.zeros(1, bsz, self.h).to(self.lstm.weight_hh_l0.device),) * 2")
    assert tdv201(moved) == []


def test_an_entry_point_returning_what_it_took_to_the_host_is_fine():
    # modelscope's `generate`: the predictions go to the host as lists and come back as a CPU
    # tensor of tokens, for the caller to decode
    code = """import torch
import torch.nn as nn
class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
    def generate(self, input_ids):
        preds = self.backbone(input_ids)
        response = [x.argmax(-1).tolist() for x in preds]
        return torch.tensor(response)
"""
    assert tdv201(code) == []
    # without the trip to the host the entry point hands out a new CPU tensor
    assert tdv201(code.replace("x.argmax(-1).tolist()", "x.argmax(-1)").replace(
        "torch.tensor(response)", "torch.zeros(len(response))")) == [(10, 15, "TDV201")]


@pytest.mark.parametrize("name, expected", [
    # kospeech's tests: `pack_padded_sequence` wants the lengths on the CPU
    ("input_lengths", []),
    ("src_lens", []),
    ("lengths", []),
    ("weights", [(6, 14, "TDV201")]),
])
def test_sequence_lengths_handed_to_a_moved_model_stay_on_the_cpu(name, expected):
    code = f"""import torch
model = Net().to(device)
for x, y in loader:
    x = x.to(device)
    y = y.to(device)
    {name} = torch.LongTensor([x.size(1)] * x.size(0))
    out = model(x, {name}, y)
"""
    assert tdv201(code) == expected


SUB_MODULE_WEIGHT = """import torch
import torch.nn as nn
class KGE(nn.Module):
    def __init__(self, n, d, cfg):
        super().__init__()
        self.emb = nn.Embedding(n, d)
        self.cfg = cfg
    def renorm(self):
        norms = torch.norm({operand}, p=2, dim=1, keepdim=True)
        return torch.max(norms, torch.ones(1, 1))
"""


@pytest.mark.parametrize("operand, expected", [
    # pykeen's HolE: the embedding's weight sits wherever the model was moved, in any method
    # that runs after construction, with inputs or without
    ("self.emb.weight", [(10, 32, "TDV201")]),
    ("self.cfg.weight", []),  # a setting's number, not a sub-module's parameter
])
def test_a_sub_modules_parameter_is_on_the_modules_device(operand, expected):
    assert tdv201(SUB_MODULE_WEIGHT.format(operand=operand)) == expected


def test_init_of_a_plain_class_computes_on_what_it_is_given():
    # a k-means object clusters the data it is built with: a CPU one-hot indexed by labels
    # computed from that (GPU) data fails
    code = """import torch
class Kmeans:
    def __init__(self, data, K=2):
        distance = torch.norm(data.unsqueeze(1) - data[:K], dim=2)
        _, cluster_id = torch.min(distance, dim=1)
        self.onehot = torch.eye(K)[cluster_id]
"""
    assert tdv201(code) == [(6, 22, "TDV201")]
    # nothing shows that what it was given is a tensor: silent
    assert tdv201(code.replace("_, cluster_id = torch.min(distance, dim=1)", "cluster_id = assign(data)")) == []
    # a module's __init__ runs before the module is moved: CPU is right there
    assert tdv201(code.replace("class Kmeans:", "class Kmeans(torch.nn.Module):")) == []


@pytest.mark.parametrize("method, expected", [
    # pycox: `ones.matmul(r)`, where `.matmul()` shows that `r` is a tensor (NumPy spells it
    # as a function)
    ("matmul", [(4, 11, "TDV201")]),
    ("dot", []),  # NumPy arrays have `.dot()` too: nothing shown
])
def test_methods_numpy_lacks_show_a_tensor(method, expected):
    code = f"""import torch
def diff_cdf(pmf, y):
    r = pmf.cumsum(1).{method}(y.transpose(0, 1))
    ones = torch.ones((pmf.shape[0], 1))
    return ones.matmul(r) - r
"""
    assert tdv201(code) == expected


def test_a_helper_method_returning_what_it_computed_from_a_factory():
    # gan-compression's `get_identity`: the grid computed from a CPU theta is returned to a
    # method (with no trigger of its own) that adds it to the network's grid; the fast path
    # keeps that method too (conftest's `lint` checks fast == full)
    code = """import torch
import torch.nn as nn
import torch.nn.functional as F
class Motion(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.grid_map = nn.Conv2d(c, 2, 3, padding=1)
    def get_identity(self, x):
        theta = torch.Tensor([1, 0, 0, 0, 1, 0]).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=True)
        return grid
    def get_grid(self, x):
        grid = self.grid_map(x).permute(0, 2, 3, 1)
        identity = self.get_identity(x)
        return identity + grid
"""
    assert tdv201(code) == [(9, 16, "TDV201")]


@pytest.mark.parametrize("compare, expected", [
    # waifu2x: `torch.equal` needs both on one device; it takes nothing but tensors
    ("torch.equal(alpha, torch.ones(alpha.shape, dtype=alpha.dtype))", [(3, 30, "TDV201")]),
    ("torch.equal(alpha.cpu(), torch.ones(alpha.shape))", []),  # host-side on purpose
    ("torch.equal(alpha, torch.ones(alpha.shape, device=alpha.device))", []),
])
def test_torch_equal_compares_on_one_device(compare, expected):
    code = f"import torch\ndef is_blank(alpha):\n    return {compare}\n"
    assert tdv201(code) == expected


@pytest.mark.parametrize("target, expected", [
    # PyTorch-BigGraph's logistic loss: a 0-dim zero given dimensions by `.expand()` is a CPU
    # tensor like any other
    ("torch.zeros(()).expand(n)", [(5, 58, "TDV201")]),
    ("torch.full((), 1.0).expand(n)", [(5, 58, "TDV201")]),
    ("torch.zeros(n)", [(5, 58, "TDV201")]),
])
def test_a_zero_dim_factory_given_dimensions(target, expected):
    code = f"""import torch
import torch.nn.functional as F
class Loss(torch.nn.Module):
    def forward(self, scores, n):
        return F.binary_cross_entropy_with_logits(scores, {target})
"""
    assert tdv201(code) == expected


def test_a_zero_dim_factory_mixes_with_any_device():
    code = """import torch
class Loss(torch.nn.Module):
    def forward(self, scores):
        return scores.sum() + torch.zeros(())
"""
    assert tdv201(code) == []


MLM = """import torch
class Model(torch.nn.Module):
    def mask_tokens(self, inputs: torch.Tensor, vocab_size: int):
        mask = torch.rand(inputs.shape) < 0.15  # a CPU mask indexes any device
        random_words = torch.randint(vocab_size, inputs.shape, dtype=torch.long)
        inputs[{index}] = random_words[{index}]
        return inputs
"""


@pytest.mark.parametrize("index, expected", [
    # jiant's masked-LM: values written into the input through a mask (`index_put_`) must be
    # on the input's device
    ("mask", [(5, 23, "TDV201")]),
    ("0", []),  # `x[0] = t` copies across devices
    ("1:", []),
])
def test_values_written_into_an_input_through_a_mask(index, expected):
    assert tdv201(MLM.format(index=index)) == expected


def test_an_element_written_into_an_input_goes_anywhere():
    # pytorch-YOLOv4's build_target: one anchor's width, a 0-dim value, written at a point of
    # the target (the index `a` is an element of a tensor, not a mask)
    code = """import torch
class YoloLoss(torch.nn.Module):
    def assign(self, target: torch.Tensor, truth_w: torch.Tensor, ious: torch.Tensor):
        best_n = torch.argmax(ious.cpu(), dim=1)  # on the host, like the anchors
        for ti in range(best_n.shape[0]):
            a = best_n[ti]
            target[0, a, 2] = torch.log(truth_w[ti] / torch.Tensor(self.anchors)[a, 0] + 1e-16)
        return target
"""
    assert tdv201(code) == []


def test_a_module_taking_a_pil_image_is_a_transform():
    # lightly's RandomResizedCropAndFlip: an nn.Module of the data pipeline hands back the image
    # with a grid made on the host
    code = """import torch
import torch.nn as nn
from PIL import Image
class CropWithGrid(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.crop = nn.Identity()
        self.n = n
    def forward(self, img: Image.Image):
        img = self.crop(img)
        grid = torch.linspace(0, 1, self.n)
        return img, grid
"""
    assert tdv201(code) == []
    assert tdv201(code.replace("img: Image.Image", "img: torch.Tensor")) == [(11, 15, "TDV201")]


def test_a_parameter_made_in_a_function_is_its_tensor():
    # IQA-PyTorch's gmsd: fixed kernels wrapped in nn.Parameter by a plain function, then
    # convolved with its input; nothing registers them, they stay where they were made
    code = """import torch
import torch.nn as nn
import torch.nn.functional as F
def gmsd(x, channels=3):
    kernel = nn.Parameter(torch.ones(channels, 1, 2, 2) / 4.0, requires_grad=False)
    return F.conv2d(x, kernel, stride=2, groups=channels)
"""
    assert tdv201(code) == [(5, 26, "TDV201")]
    # registered by a module (here or by assignment) it moves with the module
    registered = """import torch
import torch.nn as nn
import torch.nn.functional as F
class Blur(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        kernel = nn.Parameter(torch.ones(channels, 1, 2, 2) / 4.0, requires_grad=False)
        self.kernel = kernel
    def forward(self, x):
        return F.conv2d(x, self.kernel, groups=3)
"""
    assert tdv201(registered) == []
    assert lint(registered, enabled=frozenset({"TDV202"})) == []
    # handed straight to a call that keeps it (not bound to a name) it is not followed
    assert tdv201(code.replace("kernel = nn.Parameter(", "opt = make_optimizer(nn.Parameter(")
                  .replace("requires_grad=False)", "requires_grad=False))")) == []


def test_items_of_a_comprehension_over_the_inputs_are_the_inputs():
    # deepchem's NeighborList: a CPU padding concatenated with each neighbour list the module
    # computed from its input coordinates
    code = """import torch
import torch.nn as nn
class NeighborList(nn.Module):
    def forward(self, coords):
        nbrs = self.neighbours(coords)
        padding = torch.full((self.m,), -1)
        return [torch.cat([n, padding], 0) for n in nbrs]
"""
    assert tdv201(code) == [(6, 18, "TDV201")]
    # over numbers, counters or the module's own configuration: nothing is met
    assert tdv201(code.replace("for n in nbrs]", "for n in range(len(nbrs))]")) == []
    assert tdv201(code.replace("for n in nbrs]", "for n in self.sizes]")) == []
    # the comprehension's name shadows nothing: after it, a name of the function is its own
    shadow = """import torch
def count(x, sizes):
    n = torch.zeros(3)
    totals = [m * 2 for m in x]
    return n.sum() + len(totals)
"""
    assert tdv201(shadow) == []


def test_einops_functions_keep_their_tensor_where_it_is():
    # torch-cubic-spline-grids: `einops.repeat(torch.tensor(...), ...)` is that CPU tensor,
    # repeated; here it meets the helper's input
    code = """import einops
import torch
def add_positions(x: torch.Tensor):
    pos = einops.repeat(torch.arange(x.shape[1]), "n -> b n", b=x.shape[0])
    return x + pos
"""
    assert tdv201(code) == [(4, 24, "TDV201")]
    assert tdv201(code.replace("torch.arange(x.shape[1])", "torch.arange(x.shape[1], device=x.device)")) == []
    # what the helper keeps to itself stays out of it
    assert tdv201(code.replace("return x + pos", "return x, pos.tolist()")) == []


DIAG_GAUSSIAN = """import torch
class PolicyDistribution(object):
    def sample(self):
        raise NotImplementedError
class DiagGaussianDistribution(PolicyDistribution):
    def __init__(self, logits):
        mean, logstd = logits
        self.mean = mean
        self.logstd = logstd
        self.std = torch.exp(self.logstd)
    def sample(self):
        noise = torch.randn(size=self.mean.shape)
        return self.mean + self.std * noise
"""


def test_a_distribution_class_of_the_project_computes_on_what_it_was_handed():
    # PARL's DiagGaussianDistribution: the noise of `sample` meets the policy's mean, on the
    # device of the network that computed it
    assert tdv201(DIAG_GAUSSIAN) == [(12, 16, "TDV201")]
    assert tdv201(DIAG_GAUSSIAN.replace("size=self.mean.shape)", "size=self.mean.shape, device=self.mean.device)")) == []
    # a class not named for a distribution, and parameters not named for one, show nothing
    assert tdv201(DIAG_GAUSSIAN.replace("DiagGaussianDistribution(PolicyDistribution)", "DiagGaussian(object)")) == []
    sampler = """import torch
class UniformDistribution:
    def __init__(self, low, high):
        self.low = low
        self.high = high
    def sample(self, n):
        return torch.rand(n) * (self.high - self.low) + self.low
"""
    assert tdv201(sampler) == []


DROP_CONNECT = """import torch
def drop_connect(inputs, p, training):
    if not training:
        return inputs
    keep_prob = 1 - p
    random_tensor = keep_prob
    random_tensor += torch.rand([inputs.shape[0], 1, 1, 1], dtype=inputs.dtype)
    binary_tensor = torch.floor(random_tensor)
    return inputs / keep_prob * binary_tensor
"""


def test_a_number_plus_a_new_tensor_holds_it():
    # EfficientNet-PyTorch's drop_connect: `r = keep_prob; r += torch.rand(...)` makes `r` a CPU
    # tensor, which then meets the input (a tensor: torch takes only a tensor's dtype)
    assert tdv201(DROP_CONNECT) == [(7, 21, "TDV201")]
    assert tdv201(DROP_CONNECT.replace("dtype=inputs.dtype)", "dtype=inputs.dtype, device=inputs.device)")) == []
    # without evidence that `inputs` is a tensor (a model's dtype, or none), nothing is said
    assert tdv201(DROP_CONNECT.replace("dtype=inputs.dtype", "dtype=model.dtype")
                  .replace("(inputs, p, training)", "(inputs, model, p, training)")) == []
    assert tdv201(DROP_CONNECT.replace(", dtype=inputs.dtype", "")) == []


def test_init_inside_a_word_is_no_init_time_method():
    # easy-few-shot-learning's LaplacianShot: `compute_pairwise_affinities` (aff-init-ies) runs
    # per episode on the features, after the model was moved
    code = """import torch
from torch import Tensor, nn
class LaplacianShot(nn.Module):
    def compute_pairwise_affinities(self, features: Tensor) -> Tensor:
        neighbours = features.topk(3, dim=1).indices
        affinity = torch.zeros((len(features), len(features)))
        for i, row in enumerate(neighbours):
            affinity[i].index_fill_(0, row, 1)
        return affinity
"""
    assert tdv201(code) == [(6, 19, "TDV201")]
    # a method named for what runs while the module is built stays out
    assert tdv201(code.replace("compute_pairwise_affinities", "_init_affinities")) == []
    assert tdv201(code.replace("compute_pairwise_affinities", "reinit_affinities")) == []


def test_a_negated_mask_is_where_the_mask_is():
    # torchcde's forward_fill: `torch.where(~mask, torch.arange(n), 0)` with a mask of the input
    code = """import torch
def forward_fill(x: torch.Tensor):
    mask = torch.isnan(x)
    idx = torch.where(~mask, torch.arange(mask.shape[1]), 0)
    return torch.cummax(idx, dim=1)
"""
    assert tdv201(code) == [(4, 29, "TDV201")]
    assert tdv201(code.replace("torch.arange(mask.shape[1])", "torch.arange(mask.shape[1], device=x.device)")) == []


def test_a_forward_taking_its_inputs_as_star_args():
    # auto_LiRPA's BoundDropout: `forward(self, *inputs)`, `x = inputs[0]`, then a CPU mask
    code = """import torch
import torch.nn as nn
class BoundDropout(nn.Module):
    def forward(self, *inputs):
        x = inputs[0]
        self.mask = torch.rand(x.shape) > self.ratio
        return x * self.mask / (1 - self.ratio)
"""
    assert tdv201(code) == [(6, 20, "TDV201")]
    # `*sizes` are sizes, not tensors
    sizes = """import torch
def grid(*sizes):
    return torch.zeros(*sizes) + torch.ones(sizes[0])
"""
    assert tdv201(sizes) == []


def test_a_new_tensor_added_into_the_input_in_place():
    # geometric-vector-perceptron's bond buckets: `buckets += n * torch.eye(m).long()` where
    # `buckets` is computed from the input coordinates
    code = """import torch
def encode_bonds(x, cutoffs):
    dist = torch.cdist(x, x, p=2)
    buckets = torch.bucketize(dist, cutoffs)
    buckets += len(cutoffs) * torch.eye(buckets.shape[0]).long()
    return buckets
"""
    assert tdv201(code) == [(5, 30, "TDV201")]
    assert tdv201(code.replace("torch.eye(buckets.shape[0])", "torch.eye(buckets.shape[0], device=x.device)")) == []
    # a number accumulated into a counter is no tensor
    assert tdv201(code.replace("buckets += len(cutoffs) * torch.eye(buckets.shape[0]).long()",
                               "total = 0\n    total += torch.eye(3).sum().item()")) == []


def test_an_example_input_traced_through_a_moved_model():
    # PySyft's MNIST client: `torch.jit.trace(model, torch.zeros(...))` after `model.to(device)`
    code = """import torch
def main(device):
    model = Net().to(device)
    traced = torch.jit.trace(model, torch.zeros([1, 1, 28, 28], dtype=torch.float))
    return traced
"""
    assert tdv201(code) == [(4, 36, "TDV201")]
    # traced on the CPU, or with the input moved, nothing is mixed
    assert tdv201(code.replace("Net().to(device)", "Net()")) == []
    assert tdv201(code.replace("dtype=torch.float)", "dtype=torch.float).to(device)")) == []


BERT_NER = """import torch
from pytorch_transformers import BertForTokenClassification
class BertNer(BertForTokenClassification):
    def forward(self, input_ids, valid_ids=None):
        sequence_output = self.bert(input_ids)[0]
        batch_size, max_len, feat_dim = sequence_output.shape
        valid_output = torch.zeros(batch_size, max_len, feat_dim, dtype=torch.float32)
        for i in range(batch_size):
            jj = -1
            for j in range(max_len):
                if valid_ids[i][j].item() == 1:
                    jj += 1
                    valid_output[i][jj] = sequence_output[i][j]
        sequence_output = self.dropout(valid_output)
        return self.classifier(sequence_output)
"""


def test_a_buffer_filled_from_the_inputs_goes_through_the_module_s_layers():
    # kamalkraj/BERT-NER: a CPU buffer filled row by row from BERT's output, then handed to the
    # model's dropout and classifier: pytorch_transformers' (transformers' old name) classes are modules
    assert tdv201(BERT_NER) == [(7, 23, "TDV201")]
    assert tdv201(BERT_NER.replace("dtype=torch.float32)", "dtype=torch.float32, device=input_ids.device)")) == []
    # a class of another library is not taken for a module
    assert tdv201(BERT_NER.replace("pytorch_transformers", "tokenizers")) == []


def test_a_maker_that_computes_on_its_tensor_argument():
    # an ordinal-logits helper named like a builder: `logits.sigmoid()` shows it computes on the
    # caller's tensor, so the mask it multiplies in must follow it
    code = """import torch
def make_logits_ordinal(logits):
    logits = logits.sigmoid().unsqueeze(-2)
    upper = torch.ones(logits.shape[-1], logits.shape[-1]).triu(1)
    return (upper * (1 - logits).log()).sum(-1)
"""
    assert tdv201(code) == [(4, 12, "TDV201")]
    assert tdv201(code.replace("logits.shape[-1]).triu", "logits.shape[-1], device=logits.device).triu")) == []
    # a `build_` function stays a builder (targets filled on the host), and a maker that only
    # reads sizes computes on nothing of the caller's
    assert tdv201(code.replace("make_logits", "build_logits")) == []
    assert tdv201("""import torch
def make_grid(x):
    n = x.size(-1)
    return torch.ones(n, n).triu(1)
""") == []


def test_a_new_tensor_compared_with_allclose():
    # `torch.allclose` checks that both tensors are on one device, as any comparison does
    code = """import torch
def check_probs(probs: torch.Tensor, dim: int = -1) -> bool:
    if not torch.allclose(probs.sum(dim=dim), torch.ones(probs.shape[:-1])):
        raise ValueError("probabilities must sum to 1")
    return True
"""
    assert tdv201(code) == [(3, 46, "TDV201")]
    assert tdv201(code.replace("torch.ones(probs.shape[:-1])", "torch.ones(probs.shape[:-1], device=probs.device)")) == []


def test_a_tensor_whose_device_the_code_takes_is_on_that_device():
    # gsplat's densification: `device = grads.device` says where `grads` (and the masks computed
    # from it) live, so a mask joined to them without `device=` is on the wrong one
    code = """import torch
class Strategy:
    def grow(self):
        grads = self.state["grad2d"] / self.state["count"]
        device = grads.device
        is_high = grads > self.threshold
        n_dupli = is_high.sum()
        is_split = torch.cat([is_high, torch.zeros(n_dupli, dtype=torch.bool)])
        self.split(is_split, device=device)
"""
    assert tdv201(code) == [(8, 39, "TDV201")]
    assert tdv201(code.replace("torch.zeros(n_dupli, dtype=torch.bool)",
                               "torch.zeros(n_dupli, dtype=torch.bool, device=device)")) == []
    # the device of a tensor made here without one is the CPU: nothing to follow
    assert tdv201(code.replace('grads = self.state["grad2d"] / self.state["count"]',
                               "grads = torch.rand(10)")) == []


def test_a_new_tensor_collected_in_a_list_joined_with_the_inputs():
    # a decoder's context tokens: CPU zeros appended to a list that `torch.cat` joins with a slice
    # of the input, and a stop target appended to a list of the input's tensors
    code = """import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x):
        tokens = list()
        for _ in range(3):
            tokens.append(torch.zeros([x.size(0), 4]))
        return torch.cat(tokens + [x[:, 0, :]], dim=1)
"""
    assert tdv201(code) == [(7, 26, "TDV201")]
    assert tdv201(code.replace("torch.zeros([x.size(0), 4])", "x.new_zeros([x.size(0), 4])")) == []
    targets = """import torch
import torch.nn as nn
class Decoder(nn.Module):
    def forward(self, x, targets):
        stops = []
        for t in targets:
            stops.append(t)
        stops.append(torch.zeros(3))
        return self.loss(torch.cat(stops), x)
"""
    assert tdv201(targets) == [(8, 21, "TDV201")]
    assert tdv201(targets.replace("torch.zeros(3))", "torch.zeros(3).to(x.device))")) == []
    # dgl-lifesci's junction-tree featurizer: per-atom CPU features collected in a list, picked by
    # a computed index, then stacked and moved as a whole
    featurize = """import torch
import torch.nn as nn
class Featurizer(nn.Module):
    def forward(self, cand_batch, device):
        fatoms, fbonds = [], []
        for mol in cand_batch:
            for atom in mol.GetAtoms():
                fatoms.append(torch.Tensor(self.atom_featurizer(atom)))
            for bond in mol.GetBonds():
                x = bond.GetBeginAtom().GetIdx()
                fbonds.append(torch.cat([fatoms[x], torch.Tensor(self.bond_featurizer(bond))], 0))
        return torch.stack(fatoms, 0).to(device), torch.stack(fbonds, 0).to(device)
"""
    assert tdv201(featurize) == []
    # mmyolo's YOLOv7 assigner: the per-level layer ids, joined into one tensor, are then
    # indexed with a mask computed on the device
    layers = """import torch
import torch.nn as nn
class Assigner(nn.Module):
    def forward(self, infos, cost: torch.Tensor):
        from_layer = []
        for i, info in enumerate(infos):
            from_layer.append(torch.ones(size=(info.shape[0],)) * i)
        from_layer = torch.cat(from_layer, dim=0)
        fg_mask = cost.sum(0) > 0.0
        return from_layer[fg_mask]
"""
    assert tdv201(layers) == [(7, 30, "TDV201")]


def test_a_new_tensor_handed_to_a_network_beside_an_input_on_its_device():
    # EuroEval's model check: dummy ids made on `model.device`, labels made on the CPU, both
    # handed to the model
    code = """import torch
def align(model, tokenizer):
    dummy = torch.full((1, 8), 3, dtype=torch.long, device=model.device)
    model(input_ids=dummy, labels=torch.zeros(1, 1).long())
"""
    assert tdv201(code) == [(4, 34, "TDV201")]
    assert tdv201(code.replace("torch.zeros(1, 1).long()", "torch.zeros(1, 1, device=model.device).long()")) == []
    # a callable not named for a network may take host data beside a device tensor
    assert tdv201(code.replace("    model(input_ids", "    record(input_ids")) == []


def test_lists_of_new_tensors_handed_back_to_the_caller():
    # mmocr's local-graph builder: per-graph index tensors collected, stacked and returned beside
    # features on the device; the caller indexes with them (a CPU index works on any device)
    code = """import torch
class LocalGraphs:
    def generate(self, node_feat_batch, knn_batch):
        feats, knn_inds = [], []
        for node_feats, pivot_knn in zip(node_feat_batch, knn_batch):
            feats.append(node_feats[pivot_knn[0]] - node_feats.mean(0))
            inds = torch.tensor([i for i in pivot_knn[1:]])
            knn_inds.append(inds)
        feats = torch.stack(feats, 0)
        knn_inds = torch.stack(knn_inds, 0)
        return feats, knn_inds
"""
    assert tdv201(code) == []
    # sequence lengths for a network (named for one) stay on the CPU
    assert tdv201("""import torch
def step(encoder, x, device):
    inputs = x.to(device)
    input_lengths = torch.LongTensor([10, 9])
    return encoder(inputs, input_lengths)
""") == []


def test_rllibs_try_import_torch_is_an_import_of_torch():
    # MARLlib's trust-region update: RLlib code imports torch as `torch, nn = try_import_torch()`
    code = """from ray.rllib.utils.framework import try_import_torch
torch, nn = try_import_torch()
class TrustRegion:
    def conjugate_gradients(self, b, nsteps):
        x = torch.zeros(b.size())
        p = b.clone()
        for i in range(nsteps):
            x += 0.5 * p
        return x
"""
    assert tdv201(code) == [(5, 12, "TDV201")]
    assert tdv201(code.replace("torch.zeros(b.size())", "torch.zeros_like(b)")) == []


def test_items_of_a_comprehension_over_the_inputs():
    # a polygon mapper's RoI rows: `torch.tensor([idx])` joined to each row of the targets' boxes,
    # the items of a comprehension over a list computed from the inputs
    code = """import torch
import torch.nn as nn
class Mapper(nn.Module):
    def forward(self, x, targets):
        bboxes = [target["boxes"] for target in targets]
        rois = torch.stack([torch.cat([torch.tensor([idx]), roi_row])
                            for idx, roi in enumerate(bboxes) for roi_row in roi])
        return self.head(x, rois)
"""
    assert tdv201(code) == [(6, 39, "TDV201")]
    assert tdv201(code.replace("torch.tensor([idx])", "torch.tensor([idx], device=x.device)")) == []
    # the index of `enumerate` is a number, not an item
    assert tdv201("""import torch
import torch.nn as nn
class Mapper(nn.Module):
    def forward(self, x, targets):
        return [torch.tensor([i]).item() + t for i, t in enumerate(targets)]
""") == []


def test_a_builder_named_method_that_runs_per_input():
    # ptlflow's FlowSeek: `create_bases(self, disp)` is not called by `__init__`; forward calls it
    # with the depth map, so its grids meet the input
    code = """import torch
import torch.nn as nn
class FlowSeek(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(2, 2, 1)

    def create_bases(self, disp):
        B, C, H, W = disp.shape
        ys = torch.linspace(0.5 / H, 1.0 - 0.5 / H, H, dtype=disp.dtype)
        return disp * ys[None, None, :, None]

    def forward(self, disp):
        return self.head(self.create_bases(disp))
"""
    assert tdv201(code) == [(10, 13, "TDV201")]
    # a builder that `__init__` calls runs while the module is built
    assert tdv201(code.replace("        self.head = nn.Conv2d(2, 2, 1)\n",
                               "        self.head = nn.Conv2d(2, 2, 1)\n        self.create_bases(torch.zeros(1, 1, 4, 4))\n")) == []


def test_an_attribute_of_an_input_is_its_data():
    # spyrit's dynamic measurement: `motion.field`, the deformation field forward was handed, is
    # scaled by a CPU tensor made from the image shape
    code = """import torch
import torch.nn as nn
class DynamicLinear(nn.Module):
    def forward(self, motion):
        scale_factor = torch.tensor(self.img_shape) - 1
        return (motion.field + 1) / 2 * scale_factor
"""
    assert tdv201(code) == [(5, 23, "TDV201")]
    assert tdv201(code.replace("torch.tensor(self.img_shape)", "torch.tensor(self.img_shape, device=motion.field.device)")) == []
    # `torch.tensor` of a name that is not a shape may be a number, which mixes with any device
    assert tdv201(code.replace("self.img_shape", "self.img_scale")) == []
    # a count of the input is a number
    assert tdv201("""import torch
import torch.nn as nn
class Pool(nn.Module):
    def forward(self, graph):
        return torch.tensor(2.0) * graph.num_nodes
""") == []


def test_a_getter_of_a_plain_class_that_computes_on_its_tensor_argument():
    # DPR's token selector: a CPU fallback position stacked with positions found in the input ids
    code = """import torch
from torch import Tensor as T
class TokenSelector:
    def get_positions(self, input_ids: T, token_id: int):
        found = (input_ids == token_id).nonzero()
        result = []
        for i in range(input_ids.size(0)):
            if i < found.size(0):
                result.append(found[i])
            else:
                result.append(torch.tensor([i, 0]))
        return torch.stack(result, dim=0)
"""
    assert tdv201(code) == [(11, 30, "TDV201")]
    assert tdv201(code.replace("torch.tensor([i, 0])", "torch.tensor([i, 0], device=input_ids.device)")) == []


def test_a_factorys_out_buffer_is_its_result():
    # tacotron's mask: `torch.arange(..., out=torch.LongTensor(n))` fills a CPU buffer, then is
    # compared with the lengths
    code = """import torch
def get_mask_from_lengths(lengths):
    max_len = torch.max(lengths).item()
    ids = torch.arange(0, max_len, out=torch.LongTensor(max_len))
    return (ids < lengths.unsqueeze(1)).bool()
"""
    assert tdv201(code) == [(4, 39, "TDV201")]
    assert tdv201(code.replace("out=torch.LongTensor(max_len)", "device=lengths.device")) == []


def test_a_buffer_filled_by_a_conditional_expression_of_the_inputs():
    # torchdde's integrator: `ys[:, i] = out.unsqueeze(1) if ... else out`, then `return ys`
    code = """import torch
def integrate(y0, ts, step):
    ys = torch.empty((y0.shape[0], ts.shape[0]))
    for i in range(ts.shape[0]):
        out = step(y0, ts[i])
        ys[:, i] = out.unsqueeze(1) if out.dim() == 1 else out
    return ys
"""
    assert tdv201(code) == [(3, 9, "TDV201")]
    assert tdv201(code.replace("torch.empty((y0.shape[0], ts.shape[0]))",
                               "torch.empty((y0.shape[0], ts.shape[0]), device=y0.device)")) == []


def test_a_state_made_per_batch_meets_a_sub_modules_output():
    # EduKTM's GKT: `get_states(self, batch_size)` makes the hidden state on the CPU, and forward
    # joins it with what a sub-module computed from the inputs
    code = """import torch
import torch.nn as nn
class GKT(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.n, self.d = n, d
        self.emb = nn.Embedding(n, d)

    def get_states(self, batch_size):
        return torch.zeros(batch_size, self.n, self.d)

    def forward(self, item_ids):
        h = self.get_states(item_ids.shape[0])
        return torch.cat([h, self.emb(item_ids)], dim=-1)
"""
    assert tdv201(code) == [(10, 15, "TDV201")]
    assert tdv201(code.replace("torch.zeros(batch_size, self.n, self.d)",
                               "torch.zeros(batch_size, self.n, self.d, device=self.emb.weight.device)")) == []


def test_a_cpu_tensor_returned_where_another_return_is_on_an_inputs_device():
    # OpenHGNN's HGOT: without meta-paths the adjacency comes back on the CPU, otherwise on the
    # graph's device
    code = """import torch
import torch.nn as nn
class HGOT(nn.Module):
    def build_aggregated_adjacency(self, g):
        if not self.meta_paths:
            return torch.zeros(g.num_nodes(), g.num_nodes())
        agg = torch.zeros(g.num_nodes(), g.num_nodes(), device=g.device)
        for path in self.meta_paths:
            agg += self.reach(g, path)
        return agg

    def forward(self, g, h):
        return self.head(h), self.build_aggregated_adjacency(g)
"""
    assert tdv201(code) == [(6, 19, "TDV201")]
    # a path chosen by a test of the input keeps its tensor on the CPU on purpose (kornia's
    # integer bounds, normalised on the CPU before they are moved)
    assert tdv201("""import torch
def tuple_bound(bound, input):
    if input.is_floating_point():
        return torch.tensor(bound, device=input.device, dtype=input.dtype)
    return torch.tensor(bound, dtype=torch.int64)
""") == []
    # a default device asked for by the caller is the caller's choice
    assert tdv201("""import torch
def grid(n, like=None):
    if like is None:
        return torch.zeros(n, n)
    out = torch.zeros(n, n, device=like.device)
    return out
""") == []


def test_a_new_tensor_that_scatters_in_the_inputs_values():
    # Open3D-ML's PVCNN voxelizer: `torch.zeros(n).scatter_add_(0, idx, feat...)` adds the caller's
    # features into a CPU grid; `coords.to(torch.int64)` changes a dtype, it moves nothing
    # (the index mixes in a CPU batch id: only the values say where the caller's data is)
    code = """import numpy as np
import torch
def avg_voxelize(feat, coords, r):
    coords = coords.to(torch.int64)
    batch_id = torch.from_numpy(np.arange(feat.shape[0]).reshape(-1, 1))
    idx = batch_id * r * r * r + coords[:, 0, :] * r * r + coords[:, 1, :] * r + coords[:, 2, :]
    grid = torch.zeros(feat.shape[0] * r * r * r).scatter_add_(0, idx.reshape(-1), feat[:, 0, :].reshape(-1))
    return grid
"""
    assert tdv201(code) == [(7, 11, "TDV201")]
    assert tdv201(code.replace("torch.zeros(feat.shape[0] * r * r * r)", "feat.new_zeros(feat.shape[0] * r * r * r)")) == []


def test_what_the_fifteenth_rounds_rules_leave_alone():
    # mammoth's BiC: task labels stored into a replay buffer beside examples on the device (the
    # buffer keeps each where it stores it)
    assert tdv201("""import torch
import torch.nn as nn
class BiC(nn.Module):
    def end_task(self, loader):
        for data in loader:
            inputs = data[0].to(self.device)
            self.buffer.add_data(examples=inputs, task_labels=torch.ones(self.batch_size) * self.task)
""") == []
    # mammoth's second-order model: per-class labels gathered, joined and handed to a dataset
    assert tdv201("""import torch
import torch.nn as nn
class SecondOrder(nn.Module):
    def synthetic_features(self, distributions):
        features, labels = [], []
        for class_idx in range(10):
            features.append(distributions[class_idx](64, 1.0))
            labels.append(torch.ones((64,)) * class_idx)
        return FeaturesDataset(torch.cat(features, dim=0), torch.cat(labels, dim=0).long())
""") == []
    # mammoth's SLCA: class statistics computed from host copies, keyed by `range` of the offsets
    assert tdv201("""import torch
import torch.nn as nn
class SLCA(nn.Module):
    def class_means(self, loader, offset_1, offset_2):
        vectors = {idx: [] for idx in range(offset_1, offset_2)}
        for imgs, labels in loader:
            out = self.net(imgs.to(self.device))
            for c in labels.unique():
                vectors[c.item()].append(out[labels == c].cpu())
        vectors = {k: torch.cat(v, dim=0) for k, v in vectors.items()}
        return {k: torch.cov(v.T) + torch.eye(v.shape[-1]) * 1e-4 for k, v in vectors.items()}
""") == []
    # DeepRobust's `make_spmat(self, n_rows, n_cols, row_idx, col_idx)`: a builder of numbers
    assert tdv201("""import torch
import torch.nn as nn
class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def make_spmat(self, n_rows, n_cols, row_idx, col_idx):
        idxes = torch.LongTensor([[row_idx], [col_idx]])
        sp = torch.sparse_coo_tensor(idxes, torch.ones(1), (n_rows, n_cols))
        if next(self.parameters()).is_cuda:
            sp = sp.cuda()
        return sp
""") == []


# What the sixteenth round taught (held-out set 18, read after it was measured).
def test_a_buffer_registered_through_the_classs_own_helper():
    # a particle-beam module registers its state with its own `register_buffer_or_parameter`
    # helper; a method that adds a CPU tensor to that state mixes devices once the beam moves
    code = """import torch
import torch.nn as nn
class Beam(nn.Module):
    def __init__(self, particles):
        super().__init__()
        self.register_buffer_or_parameter("particles", particles)

    def register_buffer_or_parameter(self, name, value):
        if isinstance(value, nn.Parameter):
            self.register_parameter(name, value)
        else:
            self.register_buffer(name, value)

    def energies(self):
        return torch.ones(self.particles.shape[:-1]) + self.particles[..., 5]
"""
    assert tdv201(code) == [(15, 15, "TDV201")]
    # the same sum over a plain attribute that nothing registers: where it lives is unknown
    assert tdv201(code.replace('self.register_buffer_or_parameter("particles", particles)',
                               "self.particles = particles")) == []


def test_random_draws_of_a_size_are_arrays_not_numbers():
    # a speaker model's mix-up weights: `torch.tensor(stats.beta.rvs(..., size=n))` holds n
    # numbers, a CPU tensor that meets the model's features
    code = """import torch
import torch.nn as nn
import numpy as np
from scipy import stats
class Mixer(nn.Module):
    def forward(self, x):
        return self.mix(self.fc(x))

    def mix(self, x):
        clean, noisy = x.reshape(2, -1, x.shape[1])
        lam = torch.tensor(stats.beta.rvs(1, 1, size=clean.shape[0])).unsqueeze(-1)
        return clean * lam + noisy * (1 - lam)
"""
    assert tdv201(code) == [(11, 14, "TDV201")]
    assert tdv201(code.replace("stats.beta.rvs(1, 1, size=clean.shape[0])",
                               "np.random.beta(1, 1, size=clean.shape[0])")) == [(11, 14, "TDV201")]
    # one draw is a number: a 0-dim tensor mixes with any device
    assert tdv201(code.replace("torch.tensor(stats.beta.rvs(1, 1, size=clean.shape[0])).unsqueeze(-1)",
                               "torch.tensor(np.random.beta(1, 1))")) == []


def test_a_view_to_a_size_shows_a_tensor():
    # a batch object's `seq_lens`, viewed as a column (`.view(-1, 1)`: NumPy's `view` takes a
    # dtype), compared with a CPU range to mask the padded steps
    code = """import torch
class BatchNormWithLens(torch.nn.Module):
    def forward(self, batch):
        x = batch.payload
        seq_lens = batch.seq_lens
        B, T = x.size()
        mask = torch.arange(T).view(1, -1).repeat(B, 1) < seq_lens.view(-1, 1)
        return x[mask]
"""
    assert tdv201(code) == [(7, 15, "TDV201")]
    # without `.view(...)` a `*_lens` attribute may be a list of numbers
    assert tdv201(code.replace("seq_lens.view(-1, 1)", "seq_lens")) == []


def test_a_schedulers_call_on_tensor_arguments_is_a_helper():
    # a diffusion scheduler (a plain class) steps the model's latents in `__call__(self, x:
    # Tensor, noise: Tensor, step)`: fresh noise must be made where x is
    code = """import torch
from torch import Tensor
class EulerScheduler:
    def __call__(self, x: Tensor, noise: Tensor, step: int) -> Tensor:
        alt_noise = torch.randn(noise.shape)
        return x + alt_noise * self.sigmas[step]
"""
    assert tdv201(code) == [(5, 20, "TDV201")]
    # a transform's `__call__` in a data-pipeline file or folder works on the CPU by design
    assert lint_source(code, "project/transforms.py", Options(enabled=ONLY)) == []
    assert lint_source(code, "monai/transforms/spatial/array.py", Options(enabled=ONLY)) == []
    # a transformer is a network: its files and folders are no data pipeline (DRL-DecisionTransformer)
    for path in ("DRL-DecisionTransformer/agents/scheduler.py", "models/vision_transformer.py",
                 "transformers/models/bert/euler.py"):
        assert [(f.line, f.col) for f in lint_source(code, path, Options(enabled=ONLY))] == [(5, 20)], path
    # ... and so does one of a class whose base in the file is a transform
    assert tdv201(code.replace("class EulerScheduler:", "class Resample(InvertibleTransform):\n    pass\n"
                               "class EulerScheduler(Resample):")) == []
    # nor is an unannotated `__call__` (a transform of images) a helper
    assert tdv201(code.replace("x: Tensor, noise: Tensor, step: int", "x, noise, step")) == []


def test_a_builder_named_method_of_a_class_without_init_runs_per_input():
    # pytorch_radon's filters: the base module's forward calls `self.create_filter(ramp)`,
    # which a subclass overrides; no `__init__` anywhere builds with it
    code = """import torch
from torch import nn
class AbstractFilter(nn.Module):
    def forward(self, x):
        ramp = self.ramp(x.shape[2]).to(x.device)
        return x * self.create_filter(ramp)

class HannFilter(AbstractFilter):
    def create_filter(self, fourier_ramp):
        n = torch.arange(0, fourier_ramp.shape[0])
        return fourier_ramp * (0.5 - 0.5 * n.cos())
"""
    assert tdv201(code) == [(10, 12, "TDV201")]
    # a base from another file may call it from its `__init__`: unknown, not reported
    assert tdv201(code.replace("class AbstractFilter(nn.Module):", "class AbstractFilter(BaseFilter):")) == []


def test_the_else_of_an_if_whose_body_rebinds_an_input_reads_the_input():
    code = """import torch
def int2onehot(idx, num_classes, floor=0.):
    value = 1. - floor * (num_classes - 1)
    if not torch.is_tensor(idx):
        onehot = torch.full((1, num_classes), floor)
        idx = torch.LongTensor([idx])
        onehot = onehot.scatter_(1, idx.unsqueeze(0), value)
    else:
        onehot = torch.full((idx.size(0), num_classes), floor)
        onehot = onehot.scatter_(1, idx.long().unsqueeze(1), value)
    return onehot
"""
    assert tdv201(code) == [(9, 17, "TDV201")]
    assert tdv201(code.replace("    else:\n", "    elif idx.dim() == 1:\n")) == [(9, 17, "TDV201")]


def test_an_old_torch_tensor_import_annotates_a_tensor():
    code = """import torch
from torch.tensor import Tensor
class OrthogonalRegularizer:
    @staticmethod
    def get_orthogonality(param: Tensor) -> Tensor:
        flat = param.view(param.shape[0], -1)
        sym = torch.mm(flat, torch.t(flat))
        sym -= torch.eye(flat.shape[0])
        return sym.abs().sum()
"""
    assert tdv201(code) == [(8, 15, "TDV201")]
    assert tdv201(code.replace("param: Tensor", "param")) == []


def test_a_loss_module_of_a_trainer_compares_a_network_output_with_a_new_target():
    # a pix2pix trainer (a plain class): the target made on the CPU meets the discriminator's
    # output, computed on the device from the batch it was given
    code = """import torch
import torch.nn as nn
class Pix2Pix:
    def __init__(self, generator, discriminator):
        self.gen = generator
        self.patch_gan = discriminator
        self.adversarial_criterion = nn.BCEWithLogitsLoss()

    def gen_step(self, real_images, conditioned_images):
        fake_images = self.gen(conditioned_images)
        disc_logits = self.patch_gan(fake_images, conditioned_images)
        return self.adversarial_criterion(disc_logits, torch.full(disc_logits.size(), 1.0))
"""
    assert tdv201(code) == [(12, 55, "TDV201")]
    # a value the trainer did not compute with its networks may be anywhere
    assert tdv201(code.replace("self.adversarial_criterion(disc_logits,", "self.adversarial_criterion(real_images,")) \
        == []


def test_filling_a_buffer_registered_empty_is_its_initialisation():
    # schnetpack's md System registers its state as uninitialized buffers and fills them when
    # it loads molecules, before the simulator moves it; bindsnet's `reset_` re-creates buffers
    # that were moved already (reported, see the reset tests)
    code = """import torch
import torch.nn as nn
class System(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("positions", None)
        self.register_buffer("masses", nn.parameter.UninitializedBuffer())
        self.register_uninitialized_buffer("momenta")

    def register_uninitialized_buffer(self, name, dtype=None):
        self.register_buffer(name, nn.parameter.UninitializedBuffer(dtype=dtype))

    def load_molecules(self, molecules, n_replicas):
        n = sum(m.n_atoms for m in molecules)
        self.positions = torch.zeros(n_replicas, n, 3)
        self.masses = torch.ones(1, n, 1)
        self.momenta = torch.zeros(n_replicas, n, 3)
"""
    assert tdv201(code) == []
    assert lint(code, enabled=frozenset({"TDV202"})) == []
    # a buffer registered with a value was moved with the module: replacing it later is the bug
    assert tdv201(code.replace('self.register_buffer("positions", None)',
                               'self.register_buffer("positions", torch.zeros(1, 1, 3))')) == [(15, 25, "TDV201")]


def test_a_builder_named_method_that_runs_a_sub_module_runs_per_batch():
    # MaWGAN's `create_fake(self, batch_size)`: named like a builder, told only a count, but it
    # runs the generator the module keeps, which no builder does while the module is built
    code = """import torch
import torch.nn as nn
class GAN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.generator = nn.Linear(dim, 10)

    def create_fake(self, batch_size):
        z = torch.randn(batch_size, self.dim)
        return self.generator(z)
"""
    assert tdv201(code) == [(10, 12, "TDV201")]
    # a builder of numbers (DeepRobust's `make_spmat`) runs no sub-module
    assert tdv201(code.replace("return self.generator(z)", "return z")) == []
    # nor is a dry pass that `__init__` runs at construction reported
    assert tdv201(code.replace("        self.generator = nn.Linear(dim, 10)\n",
                               "        self.generator = nn.Linear(dim, 10)\n        self.create_fake(2)\n")) == []


def test_a_network_output_from_a_cpu_input_meeting_a_device_tensor():
    # EquivariantDQN's replay update: CPU states into the network, its Q-values gathered with
    # actions on `self.device`: either the network or its input was on the wrong device
    code = """import torch
class Trainer:
    def __init__(self, device, network):
        self.device = device
        self.network = network

    def update(self, states, actions):
        states = torch.FloatTensor(states)
        actions = torch.tensor(actions).to(self.device)
        q = self.network(states)
        return torch.gather(q, 1, actions.unsqueeze(1))

    def act(self, state):
        q = self.network(torch.FloatTensor(state))
        return q.argmax().item()
"""
    assert tdv201(code) == [(8, 17, "TDV201")]
    # without a device tensor to meet, the network may well run on the CPU
    assert tdv201(code.replace("torch.tensor(actions).to(self.device)", "torch.tensor(actions)")) == []
    # PyTorch's DDP example: DistributedDataParallel moves its inputs to its device itself
    assert tdv201("""import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
def demo_basic(rank):
    model = ToyModel().to(rank)
    ddp_model = DDP(model, device_ids=[rank])
    loss_fn = nn.MSELoss()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).to(rank)
    loss_fn(outputs, labels).backward()
""") == []


def test_the_items_of_a_range_of_thresholds_are_numbers():
    # detectron2's proposal recall: `for i, t in enumerate(thresholds)` over a CPU range gives
    # 0-dim tensors, which compare with tensors on any device
    code = """import torch
def recall_at(per_image, num_pos, thresholds=None):
    overlaps = []
    for best in per_image:
        row = torch.zeros(len(best))
        for j, value in enumerate(best):
            row[j] = float(value)
        overlaps.append(row)
    gt_overlaps = torch.cat(overlaps, dim=0) if len(overlaps) else torch.zeros(0, dtype=torch.float32)
    gt_overlaps, _ = torch.sort(gt_overlaps)
    if thresholds is None:
        thresholds = torch.arange(0.5, 0.95 + 1e-5, 0.05, dtype=torch.float32)
    recalls = torch.zeros_like(thresholds)
    for i, t in enumerate(thresholds):
        recalls[i] = (gt_overlaps >= t).float().sum() / float(num_pos)
    return {"recalls": recalls, "thresholds": thresholds}
"""
    assert tdv201(code) == []


def test_a_gan_trainer_samples_for_the_generator_its_training_moved():
    # MaWGAN's trainer (a plain class) moves its generator in `train(...)` and samples latent
    # codes for it in `create_fake(self, batch_size)`, named like a builder
    code = """import torch
import torch.nn as nn
class GAN(object):
    def __init__(self, dim, usegpu):
        self.usegpu = usegpu
        self.data_dim = dim
        self.make_generator()

    def make_generator(self):
        self.Generator = nn.Sequential(nn.Linear(self.data_dim, self.data_dim))

    def create_fake(self, batch_size):
        z = torch.randn(batch_size, self.data_dim)
        return self.Generator(z)

    def train(self, data, epochs):
        if self.usegpu:
            self.Generator = self.Generator.cuda()
        for _ in range(epochs):
            fake = self.create_fake(len(data))
"""
    assert tdv201(code) == [(13, 12, "TDV201")]
    # a trainer that never moves its generator may run it on the CPU
    assert tdv201(code.replace("            self.Generator = self.Generator.cuda()\n", "            pass\n")) == []


def test_a_dry_pass_through_the_modules_own_forward_defined_later():
    # vit-pytorch's CCT tokenizer: `sequence_length` runs its own `forward` (defined after it) on
    # zeros to learn a size; the model's `__init__` calls it before anything moves
    code = """import torch
import torch.nn as nn
class Tokenizer(nn.Module):
    def __init__(self, n_input_channels=3):
        super().__init__()
        self.conv_layers = nn.Conv2d(n_input_channels, 64, 3)

    def sequence_length(self, n_channels=3, height=224, width=224):
        return self.forward(torch.zeros((1, n_channels, height, width))).shape[1]

    def forward(self, x):
        return self.conv_layers(x).flatten(2)
"""
    assert tdv201(code) == []


def test_an_export_method_that_probes_with_random_input_is_no_batch_step():
    # kornia's detectors export to ONNX with a probe input; the base class (another file) gives
    # the helpers it calls on `self`: no network of its own runs per batch there
    code = """import torch
import torch.nn as nn
class EdgeDetector(nn.Module):
    def to_onnx(self, onnx_name: str = "model.onnx", image_size: int = 352):
        self._export_interpolation()
        shape = [1, 3, image_size, image_size]
        per_image = returns_per_image_outputs(self, torch.rand(shape))
        return per_image
"""
    assert tdv201(code) == []


def test_a_sub_module_named_like_a_storing_method_is_called_not_stored_into():
    # StyleGAN-style noise injection: `self.add_noise` holds a layer built in `__init__` (its
    # class from another file), so calling it computes with its input; not `buffer.add(...)`
    code = """import torch
import torch.nn as nn
from .layers import NoiseInjection
class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.add_noise = NoiseInjection(n)

    def forward(self, x):
        return self.up_forward(x)

    def up_forward(self, hidden):
        noise = torch.randn(hidden.shape[0], 1, hidden.shape[2], hidden.shape[3])
        return self.add_noise(hidden, noise)
"""
    assert tdv201(code) == [(13, 16, "TDV201")]
    # a storage kept on `self` still keeps each tensor where it is given
    storage = """import torch
class Agent:
    def __init__(self, memory):
        self.memory = memory

    def observe(self, state: torch.Tensor, reward):
        self.memory.add_sample(state, torch.tensor([reward]))
"""
    assert tdv201(storage) == []


def test_a_getter_that_hands_its_parameters_to_torch_computes_on_them():
    # a protein GNN's `get_node_features(omega, theta, phi)`: named like a builder, but it runs
    # torch on the caller's tensors, and a 1-element CPU tensor cannot be concatenated with them
    code = """import torch
def get_node_features(omega, theta):
    n1 = torch.cat((torch.tensor([0.]), torch.diagonal(omega, offset=1)))
    n2 = torch.cat((torch.diagonal(theta, offset=1), torch.zeros(1)))
    return torch.stack([n1, n2], dim=1)
def _init_precision(endog):
    eigenvalues, eigenvectors = torch.linalg.eigh(torch.cov(endog.T))
    return torch.maximum(eigenvalues, torch.Tensor([0]))
"""
    assert tdv201(code) == [(3, 20, "TDV201"), (4, 53, "TDV201"), (8, 38, "TDV201")]
    # a getter that only makes something from sizes (or hands torch plain data) is a builder
    builders = """import torch
def get_mask(n, lengths):
    mask = torch.zeros(n, max(lengths))
    return mask, torch.as_tensor(lengths)
def init_seed(seed):
    torch.manual_seed(seed)
    return torch.zeros(1)
"""
    assert tdv201(builders) == []


def test_a_decoder_class_computes_where_the_models_outputs_are():
    # PyLaia's CTC greedy decoder: a plain class whose `__call__` runs torch on the network's
    # output; a data pipeline's decoder is named so in its file or folders, not its class
    code = """import torch
import torch.nn.functional as F
class CTCGreedyDecoder:
    def __call__(self, x, segmentation=False):
        x = F.log_softmax(x, dim=-1)
        counts = torch.unique_consecutive(x.argmax(-1), return_counts=True)[1]
        return torch.cat((torch.tensor([0]), counts.cumsum(0)[:-1]))
"""
    assert tdv201(code) == [(7, 26, "TDV201")]
    image_decoder = code.replace("CTCGreedyDecoder", "ImageDecode")
    assert tdv201(image_decoder) == []


def test_a_zero_dim_tensor_does_not_excuse_the_tensors_it_was_combined_with():
    # a positional embedding module's `__call__`: the 0-dim `torch.tensor(...)` mixes with any
    # device, but the frequencies and positions it scales are CPU tensors with dimensions
    code = """from typing import Optional
import torch
import torch.nn as nn
class PositionalEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, seq_length: int, position: Optional[torch.Tensor] = None):
        if position is None:
            position = torch.arange(seq_length, dtype=torch.float32)[None, :]
        scale = torch.log(torch.tensor(10000.0)) / self.dim
        inv_freq = torch.exp(torch.arange(self.dim // 2, dtype=torch.float32) * -scale)
        return torch.sin(position[:, :, None] * inv_freq[None, None, :])
"""
    assert tdv201(code) == [(11, 23, "TDV201"), (13, 29, "TDV201")]
    # alone, the 0-dim tensor is still a stand-in that goes anywhere
    alone = """import torch
import torch.nn as nn
class Scale(nn.Module):
    def forward(self, x):
        return x * torch.log(torch.tensor(10000.0))
"""
    assert tdv201(alone) == []


def test_every_name_of_a_chained_assignment_holds_the_tensor():
    # `V_mask = h_V = torch.zeros(...)` in a module method, returned to forward and combined there
    code = """import torch
import torch.nn as nn
class Decoder(nn.Module):
    def __init__(self, hidden_dim):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.proj = nn.Linear(hidden_dim, hidden_dim)

    def _node_mask(self, src):
        V_mask = h_V = torch.zeros(src.shape[0], src.shape[1], self.hidden_dim)
        return V_mask

    def forward(self, src):
        mask = self._node_mask(src)
        return self.proj(src) * mask
"""
    assert tdv201(code) == [(10, 23, "TDV201")]


def test_a_base_classs_placed_attribute_is_on_the_device_in_a_subclass():
    # a vectorized MCTS: `self.q` is made with `device=self.device` by the base class in the
    # file; the subclass mixes random CPU actions with actions computed from it
    code = """import torch
class MCTS:
    def __init__(self, device, n_runs, num_actions):
        self.device = device
        self.n_runs, self.num_actions = n_runs, num_actions
        self.q = torch.zeros((n_runs, 10, num_actions), device=self.device)

class QMCTS(MCTS):
    def select_action(self):
        explore = (torch.rand_like(self.q[:, 0, 0]) < 0.1).long()
        random_actions = torch.randint(self.num_actions, size=(self.n_runs,))
        return explore * random_actions + (1 - explore) * self.q[:, 0].argmax(dim=-1)
"""
    assert tdv201(code) == [(11, 25, "TDV201")]


def test_a_dict_filled_with_cpu_tensors_and_handed_to_a_sub_module():
    # a vocoder's forward takes plain data (`List[int]`, `str`) and builds its inputs: the
    # module it feeds sits where the vocoder was moved
    code = """from typing import List
import torch
import torch.nn as nn
class Vocoder(nn.Module):
    def __init__(self, generator: nn.Module):
        super().__init__()
        self.generator = generator

    def forward(self, code: List[int], speaker: int) -> torch.Tensor:
        x = {"code": code}
        x["speaker"] = torch.tensor([[speaker]])
        return self.generator(x)
"""
    assert tdv201(code) == [(11, 23, "TDV201")]
    # a collate function fills its batch dict on the CPU on purpose
    collate = """import torch
def collate_fn(samples):
    batch = {}
    batch["x"] = torch.stack([s[0] for s in samples])
    batch["mask"] = torch.ones(len(samples))
    return batch
"""
    assert tdv201(collate) == []


def test_a_gradient_seed_for_backward_must_be_where_the_output_is():
    # vertical federated learning: the decrypted gradient comes back as Python numbers
    code = """import torch
class Passive:
    def train(self, loader, messenger):
        for X in loader:
            X = X.to(self.device)
            out = self.model(X)
            grad = messenger.decrypt(messenger.recv())
            out.backward(torch.tensor(grad).reshape(out.shape))
            out.backward(gradient=torch.ones(3).to(X.device))
"""
    assert tdv201(code) == [(8, 25, "TDV201")]


def test_random_parameters_that_stay_on_the_cpu_by_design():
    # kornia's augmentations: a generator module draws parameters from sizes alone and returns
    # them; the augmentation adds a CPU mask to the dict it was handed (a CPU mask indexes any tensor)
    code = """from typing import Dict, Optional, Tuple
import torch
import torch.nn as nn
class ColorJitterGenerator(nn.Module):
    def forward(self, batch_shape: Tuple[int, ...]) -> Dict[str, torch.Tensor]:
        return {"order": torch.randperm(4, dtype=torch.long)}

class Augmentation(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = ColorJitterGenerator()

    def forward(self, input: torch.Tensor, params: Optional[Dict[str, torch.Tensor]] = None):
        if params is None:
            params = self.generator(input.shape)
        params["batch_prob"] = torch.ones(input.shape[0], dtype=torch.bool)
        return input[params["batch_prob"]]
"""
    assert tdv201(code) == []


@pytest.mark.parametrize("second_test, expected", [
    ("essential", []),  # the same flag: the identity transforms belong to the arm that never uses them
    ("planar", [(6, 18, "TDV201")]),  # another flag: both arms may run
])
def test_two_ifs_on_one_flag_take_the_same_arm(second_test, expected):
    # kornia's RANSAC: identity normalizations on the essential path, used only on the other
    code = f"""import torch
def estimate(kp1, essential, planar):
    host = torch.device("cpu")
    kp_host = kp1.detach().to(host).double()
    if essential:
        t1 = t2 = torch.eye(3, dtype=torch.float64)
    else:
        t1, t2 = normalize(kp_host)
    model = kp1.new_zeros(3, 3)
    if {second_test}:
        model = model / model.norm()
    else:
        model = t2.mT @ model @ t1
    return model
"""
    assert tdv201(code) == expected


def test_a_function_that_applies_python_callables_to_its_tensor_runs_on_the_cpu():
    # stargan-v2's landmark decoding: `apply_` raises for a GPU tensor, so the heatmaps it is
    # given are on the CPU (its caller passes `heatmaps.cpu()`)
    code = """import torch
def get_preds_fromhm(hm):
    _, idx = torch.max(hm.view(hm.size(0), hm.size(1), -1), 2)
    preds = idx.view(idx.size(0), idx.size(1), 1).repeat(1, 1, 2).float()
    preds[..., 0].apply_(lambda x: (x - 1) % hm.size(3) + 1)
    diff = torch.FloatTensor([hm[0, 0, 1, 2] - hm[0, 0, 1, 0], hm[0, 0, 2, 1] - hm[0, 0, 0, 1]])
    preds[0, 0].add_(diff.sign_().mul_(.25))
    return preds
"""
    assert tdv201(code) == []
    assert tdv201(code.replace("    preds[..., 0].apply_(lambda x: (x - 1) % hm.size(3) + 1)\n", "")) \
        == [(5, 11, "TDV201")]


def test_what_module_methods_other_than_forward_build_on_the_cpu_on_purpose():
    # ComfyUI's `encode_adm` embeds plain numbers on the CPU with a module that keeps no weights
    # and takes the rest there; a diffusion model's `log_images` fills a dict for the logger
    code = """import torch
import torch.nn as nn
class SDXL(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedder = Timestep(256)

    def encode_adm(self, **kwargs):
        clip_pooled = kwargs["pooled_output"]
        out = []
        out.append(self.embedder(torch.Tensor([kwargs.get("height", 768)])))
        flat = torch.flatten(torch.cat(out)).unsqueeze(dim=0)
        return torch.cat((clip_pooled.to(flat.device), flat), dim=1)

    def log_images(self, batch, c_cat):
        log = dict()
        log["control"] = c_cat[:, :3]
        log["conditioning"] = torch.tensor(batch["hint"].cpu().numpy()) * 2.0 - 1.0
        return log
"""
    assert tdv201(code) == []


def test_a_test_case_named_for_a_metric_is_no_metric():
    # mmdetection3d's `TestIndoorMetric`: classes named like a metric compute on their inputs,
    # their tests do not
    code = """import unittest
import torch
class TestIndoorMetric(unittest.TestCase):
    def test_process(self, stdout):
        preds = dict()
        preds["scores_3d"] = torch.ones(12)
        preds["labels_3d"] = torch.Tensor([2, 2, 3])
        self.metric.process({}, [preds])
"""
    assert tdv201(code) == []


def test_a_maker_filling_features_from_its_input_returns_them_on_the_cpu():
    # GOPS's polynomial features: `create_features(x)` multiplies the input's columns into a CPU
    # buffer and returns it
    code = """import torch
def create_features(x, degree=2):
    features = torch.zeros((x.shape[0], 3))
    k = 0
    for i in range(2):
        features[:, k : k + 1] = torch.mul(x[:, i : i + 1], x[:, i : i + 1])
        k += 1
    return features
"""
    assert tdv201(code) == [(3, 15, "TDV201")]


def test_the_remedy_names_no_parameter_that_is_none_where_the_factory_stands():
    # google-deepmind/tips: `position = torch.arange(n)` where `position is None`: its device is
    # no remedy there
    code = """from typing import Optional
import torch
import torch.nn as nn
class PositionalEmbedding(nn.Module):
    def forward(self, seq_length: int, position: Optional[torch.Tensor] = None):
        if position is None:
            position = torch.arange(seq_length, dtype=torch.float32)[None, :]
        inv_freq = torch.exp(torch.arange(8, dtype=torch.float32))
        return torch.sin(position[:, :, None] * inv_freq)
"""
    messages = {(f.line, f.message) for f in lint_source(code, "t.py", Options(enabled=frozenset({"TDV201"})))}
    assert (7, "torch.arange() without device= makes a CPU tensor in device-sensitive code; pass "
               "device=<tensor>.device of a tensor already on the right device") in messages
    assert (8, "torch.arange() without device= makes a CPU tensor in device-sensitive code; pass "
               "device=position.device") in messages


def test_an_object_told_its_device_computes_there():
    # KolSol's spectral solver and torchattacks' CW: a class that keeps the device it was told
    # and uses it (`self.device = device`, `device=self.device`) computes on that device, on
    # what its methods are handed
    code = """import torch
class Solver:
    def __init__(self, n, device):
        self.n = n
        self.device = device
        self.k = torch.arange(n, device=self.device)

    def energy_spectrum(self, u_hat):
        ek = torch.zeros(self.n)
        ek += (u_hat * u_hat.conj()).real.sum(0)
        return ek

    def f(self, outputs, labels):
        one_hot = torch.eye(outputs.shape[1])[labels]
        return (one_hot * outputs).sum(1)
"""
    assert tdv201(code) == [(9, 13, "TDV201"), (14, 18, "TDV201")]
    # an object kept on the CPU on purpose
    assert tdv201(code.replace("self.device = device", 'self.device = torch.device("cpu")')) == []


def test_an_object_told_its_device_that_moves_what_it_is_handed_gets_it_on_the_cpu():
    # Informer's experiment class: `_process_one_batch` moves `batch_x` itself and leaves
    # `batch_y` on the CPU, where the decoder input is built before it is moved
    code = """import torch
class Exp:
    def __init__(self, model, device):
        self.device = device
        self.model = model.to(self.device)

    def _process_one_batch(self, batch_x, batch_y):
        batch_x = batch_x.float().to(self.device)
        batch_y = batch_y.float()
        dec_inp = torch.zeros([batch_y.shape[0], 4, batch_y.shape[-1]]).float()
        dec_inp = torch.cat([batch_y[:, :2, :], dec_inp], dim=1).float().to(self.device)
        return self.model(batch_x, dec_inp)
"""
    assert tdv201(code) == []


def test_a_replay_buffer_told_its_device_stores_on_the_cpu():
    code = """import torch
class ReplayBuffer:
    def __init__(self, size, dim, device):
        self.device = device
        self.obs = torch.zeros(size, dim)
        self.ptr = 0

    def add(self, obs):
        self.obs[self.ptr] = torch.as_tensor(obs)
        self.ptr += 1

    def sample(self, n):
        idx = torch.randint(0, self.ptr, (n,))
        return self.obs[idx].to(self.device)
"""
    assert tdv201(code) == []


def test_an_empty_cpu_tensor_joined_with_the_input():
    # lhotse's `_get_strided_batch`: `torch.cat` refuses an empty CPU pad beside a CUDA waveform
    code = """import torch
def strided(waveform: torch.Tensor, n: int) -> torch.Tensor:
    pad_left = torch.flip(waveform[:, :n], (1,))
    if n > 0:
        pad_right = torch.flip(waveform[:, -n:], (1,))
    else:
        pad_right = torch.zeros(0, dtype=waveform.dtype)
    return torch.cat((pad_left, waveform, pad_right), dim=1)
"""
    assert tdv201(code) == [(7, 20, "TDV201")]
    # an empty placeholder that the loop replaces is no tensor that meets the input
    assert tdv201("""import torch
def stack_all(xs: torch.Tensor):
    out = torch.empty(0)
    for x in xs:
        out = x if out.numel() == 0 else out + x
    return out
""") == []


def test_a_tensor_of_a_range_is_a_new_cpu_tensor():
    # memory-efficient-attention's `dynamic_slice`: the index of `torch.index_select` must be
    # where the input is (a tensor of a range or list is data, never a 0-dim number)
    code = """import torch
def dynamic_slice(x, starts, sizes):
    for i, (start, size) in enumerate(zip(starts, sizes)):
        x = torch.index_select(x, i, torch.tensor(range(start, start + size)))
    return x
"""
    assert tdv201(code) == [(4, 37, "TDV201")]
    # an index used only to index: PyTorch takes a CPU index of a CUDA tensor
    assert tdv201(code.replace("torch.index_select(x, i, torch.tensor(range(start, start + size)))",
                               "x[torch.tensor(range(start, start + size))]")) == []


def test_cpu_indices_beside_device_indices_index_a_device_tensor():
    # ultralytics' denoising groups: CPU positions made by a comprehension, with the batch
    # indices of the labels, index a padding tensor on the labels' device
    code = """import torch
def denoising_group(labels, groups, values):
    rows = labels.nonzero()[:, 0]
    cols = torch.cat([torch.tensor(range(n), dtype=torch.long) for n in groups])
    padding = torch.zeros(len(groups), 8, device=labels.device)
    padding[(rows, cols)] = values
    return padding
"""
    assert tdv201(code) == []
    # joined with them in a tuple that is no index, it is a pair of two devices
    assert tdv201(code.replace("padding[(rows, cols)] = values", "padding = torch.stack((rows, cols))")) \
        == [(4, 22, "TDV201")]


def test_a_part_of_an_input_joined_with_a_new_tensor():
    # autonomous-learning-library's TimeFeature: `state.features` of the observation handed in
    # is the tensor, and the remedy names its device
    code = """import torch
def with_time(state, reward):
    timestep = torch.zeros(len(state))
    return torch.cat((state.features, timestep.view((-1, 1))), dim=1)
"""
    found = lint_source(code, "t.py", Options(enabled=ONLY))
    assert [(f.line, f.col, f.code) for f in found] == [(3, 15, "TDV201")]
    assert found[0].message.endswith("pass device=state.features.device")
    # a part that is a count is no tensor
    assert tdv201(code.replace("state.features,", "state.num_features,")) == []


def test_an_object_told_its_device_keeps_cpu_work_of_its_own():
    # ultralytics' OBB validator merges the boxes it read from JSON on the CPU: `torch.tensor(bbox)`
    # handed to NMS helpers and added into its own slices meets none of the object's tensors
    code = """import torch
class Validator:
    def __init__(self, device):
        self.device = device

    def preprocess(self, batch):
        return batch.to(self.device)

    def eval_json(self, stats, merged):
        for image_id, bbox in merged.items():
            bbox = torch.tensor(bbox)
            b = bbox[:, :5].clone()
            b[:, :2] += bbox[:, 6:7] * 2
            keep = nms(b, bbox[:, 5], 0.3)
            save(image_id, bbox[keep])
        return stats
"""
    assert tdv201(code) == []


def test_what_a_callable_parameter_computes_from_the_inputs_is_where_they_are():
    # a discrete diffusion model's MMD: the kernel handed in computes its matrix from the
    # samples, on their device; the CPU identity mask multiplies it
    code = """import torch
def binary_mmd(x, y, sim_fn):
    x = x.to(torch.float32)
    kxx = sim_fn(x, x)
    kxx = kxx * (1 - torch.eye(x.shape[0]))
    return torch.sum(kxx) / x.shape[0]
"""
    assert tdv201(code) == [(5, 21, "TDV201")]
    # a callable the function made itself is no input: unknown, not reported
    assert tdv201(code.replace("kxx = sim_fn(x, x)", "kxx = make_kernel()(x, x)")) == []
    # what the callable returns is only kept beside a CPU tensor, never mixed: not reported
    assert tdv201("""import torch
def featurize(x, transform):
    feats = transform(x)
    mask = torch.ones(len(feats))
    return {"feats": feats, "mask": mask}
""") == []


def test_pad_sequence_computes_where_its_tensors_are():
    # tf-bind-transformer's get_esm_repr: representations moved to the input's device, padded,
    # and returned beside CPU masks
    code = """import torch
from torch.nn.utils.rnn import pad_sequence
def embed(aa, model):
    device = aa.device
    reprs = []
    for t in model(aa):
        reprs.append(t.to(device))
    lengths = [r.shape[0] for r in reprs]
    masks = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    return pad_sequence(reprs, batch_first=True), masks
"""
    assert tdv201(code) == [(9, 12, "TDV201"), (9, 50, "TDV201")]
    # pack_padded_sequence takes its lengths on the CPU: no mix
    assert tdv201("""import torch
from torch.nn.utils.rnn import pack_padded_sequence
def pack(x, device, lengths):
    x = x.to(device)
    return pack_padded_sequence(x, torch.tensor(lengths), batch_first=True)
""") == []


def test_the_cpu_default_of_a_tensor_argument_returned_beside_the_inputs():
    # ring-attention's `maybe_pad_seq_and_mask`: the mask the caller may give comes back
    # beside the padded sequence; its default is made on the CPU
    code = """import torch
from torch import Tensor
from .padding import pad_to_multiple
def pad_with_mask(x: Tensor, mask, size: int):
    shape = x.shape[:2]
    x, padding = pad_to_multiple(x, size)
    if mask is None:
        mask = torch.ones(shape).bool()
    return x, mask
"""
    assert tdv201(code) == [(8, 15, "TDV201")]
    # a local of its own, not the caller's argument: what the helper returns is judged where used
    assert tdv201("""import torch
from torch import Tensor
def with_mask(x: Tensor, lengths):
    mask = torch.ones(len(lengths)).bool()
    return x, mask
""") == []


def test_after_an_if_a_name_holds_what_either_arm_made():
    code = forward("if self.training:\n    m = torch.ones(x.shape[0])\nelse:\n    m = torch.zeros(x.shape[0])\n"
                   "return x * m")
    assert tdv201(code) == [(6, 16, "TDV201"), (8, 16, "TDV201")]
    # an elif chain: each arm's tensor
    code = forward("if self.training:\n    m = torch.ones(x.shape[0])\nelif x.dim() > 2:\n    m = torch.rand(x.shape[0])\n"
                   "else:\n    m = torch.zeros(x.shape[0])\nreturn x * m")
    assert tdv201(code) == [(6, 16, "TDV201"), (8, 16, "TDV201"), (10, 16, "TDV201")]
    # met inside the `else`, before the arms join: only the `else`'s tensor
    code = forward("if self.training:\n    m = torch.ones(x.shape[0])\n    y = x.sum()\nelse:\n"
                   "    m = torch.zeros(x.shape[0])\n    y = x * m\nreturn y")
    assert tdv201(code) == [(9, 16, "TDV201")]


def test_a_reset_that_init_calls_also_runs_once_the_module_was_moved():
    # cavia's ContextEncoder.clear_z: `__init__` calls it, and so does the agent before each
    # task; it puts CPU tensors in place of the buffers `.to(device)` moved
    code = """import torch
import torch.nn as nn
class ContextEncoder(nn.Module):
    def __init__(self, latent_dim, network):
        super().__init__()
        self.latent_dim = latent_dim
        self.network = network
        self.register_buffer("z_means", torch.zeros(1, latent_dim))
        self.clear_z()

    def clear_z(self, num_tasks=1):
        mu = torch.zeros(num_tasks, self.latent_dim)
        self.z_means = mu

    def forward(self, context):
        return self.network(context) + self.z_means
"""
    assert tdv201(code) == [(12, 13, "TDV201")]
    # a method only `__init__` calls, named to build, fills the buffer before any move
    assert tdv201(code.replace("clear_z", "_init_z")) == []
    # resetting in place keeps the buffer where it is
    assert tdv201(code.replace("        mu = torch.zeros(num_tasks, self.latent_dim)\n        self.z_means = mu\n",
                               "        self.z_means.zero_()\n")) == []


def test_a_sub_module_set_in_a_helper_after_a_none_placeholder():
    # a graph embedder keeps `self.embeddings = None` until `init_embeddings` (called from
    # `__init__`) builds the nn.Embedding; forward hands it CPU ids it looked up
    code = """from typing import List
import torch
from torch import nn
class PositionEmbedder(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.ids = {}
        self.embeddings = None
        self.init_embeddings(n, d)

    def init_embeddings(self, n, d):
        self.embeddings = nn.Embedding(n, d)

    def forward(self, positions: List[str]):
        ids = torch.tensor([self.ids[p] for p in positions])
        return self.embeddings(ids)
"""
    assert tdv201(code) == [(15, 14, "TDV201")]
    # what the helper stores is not known to be a module: unsure, not reported
    assert tdv201(code.replace("nn.Embedding(n, d)", "load_table(n, d)")) == []


def test_a_loop_reads_in_its_next_turn_what_its_body_binds_last():
    # TEMPO's autoregressive `predict`: the model's own forward gets, from the second turn on,
    # the CPU tensor the loop's last statement made of the predictions
    code = """import numpy as np
import torch
import torch.nn as nn
class Forecaster(nn.Module):
    def predict(self, x, steps):
        current = x.to(self.device)
        preds = []
        while len(preds) < steps:
            out = self.forward(current)
            values = out.cpu().numpy()
            preds.extend(values)
            current = torch.FloatTensor(values).unsqueeze(0)
        return np.array(preds)
"""
    assert tdv201(code) == [(12, 22, "TDV201")]
    # moved before the next turn: nothing left on the CPU
    assert tdv201(code.replace("torch.FloatTensor(values).unsqueeze(0)",
                               "torch.FloatTensor(values).unsqueeze(0).to(self.device)")) == []
    # bound again after: the next turn reads the later value
    assert tdv201(code.replace("            current = torch.FloatTensor(values).unsqueeze(0)\n",
                               "            current = torch.FloatTensor(values).unsqueeze(0)\n"
                               "            current = current.to(x.device)\n")) == []
    # read only after it is bound in the turn: nothing of the next turn
    assert tdv201("""import torch
def collect(batches):
    out = []
    for b in batches:
        t = torch.tensor(b)
        out.append(t.sum())
    return out
""") == []


def test_an_input_indexed_by_a_cpu_tensor_is_still_the_inputs():
    # MXtalTools' compute_num_h_bonds: the indices `torch.where` finds in the crystal's
    # tensors live where they are; indexing the CPU arange with them fails
    code = """import torch
def count_bonds(data, i):
    inds = torch.arange(data.ptr[i], data.ptr[i + 1])
    found = torch.where(data.aux_ind[inds] == 0)[0]
    return inds[found]
"""
    assert tdv201(code) == [(3, 11, "TDV201")]
    # the CPU index only indexes the input: allowed
    assert tdv201("""import torch
def count_bonds(data, i):
    inds = torch.arange(data.ptr[i], data.ptr[i + 1])
    return (data.aux_ind[inds] == 0).sum()
""") == []


def test_a_helper_of_the_file_that_keeps_its_arguments_device():
    # proteinzen's `tangent_gaussian`: `hat(v)` builds its matrix on v's device, so a CPU
    # noise handed to it comes back on the CPU and meets the rotation in einsum
    code = """import torch
def hat(v):
    hat_v = torch.zeros([*v.shape[:-1], 3, 3], dtype=v.dtype).to(v.device)
    hat_v[..., 0, 1], hat_v[..., 0, 2], hat_v[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    return hat_v + -hat_v.transpose(-1, -2)

def tangent_gaussian(R0):
    return torch.einsum("...ij,...jk->...ik", R0, hat(torch.randn(*R0.shape[:-2], 3)))
"""
    assert tdv201(code) == [(8, 54, "TDV201")]
    # a helper that makes its result on the CPU tells nothing of its argument's device
    assert tdv201(code.replace(".to(v.device)", "")) == []


def test_a_helper_that_compares_with_its_argument_keeps_its_device():
    # MusicTransformer's `sequence_mask(length)`: `x.unsqueeze(0) < length.unsqueeze(1)` of an
    # arange made on length's device is a mask there; a CPU arange handed in meets the
    # target's mask in torch.max
    code = """import torch
def masks(size, trg, pad_token):
    trg = trg[:, None, None, :]
    dec_trg_mask = trg == torch.ones_like(trg) * pad_token
    seq_mask = sequence_mask(torch.arange(1, size + 1), size) * -1 + 1
    return torch.max(dec_trg_mask, seq_mask)

def sequence_mask(length, max_length):
    x = torch.arange(max_length, dtype=length.dtype, device=length.device)
    return x.unsqueeze(0) < length.unsqueeze(1)
"""
    assert tdv201(code) == [(5, 29, "TDV201")]
    # a membership test is no tensor of the argument's
    assert tdv201(code.replace("return x.unsqueeze(0) < length.unsqueeze(1)", "return x in length")) == []


def test_an_imported_helper_that_keeps_its_arguments_device(tmp_path):
    files = {
        "padding.py": (
            "import torch.nn.functional as F\n"
            "def pad_at_dim(t, pad, dim=-1):\n    return F.pad(t, (*((0, 0) * (t.ndim - dim - 1)), *pad))\n"
            "def pad_to_multiple(x, length):\n    rem = x.shape[1] % length\n    if rem == 0:\n        return x, 0\n"
            "    return pad_at_dim(x, (0, length - rem), dim=1), length - rem\n"
            "def describe(x):\n    return x.numpy()\n"),
        "attention.py": (
            "import torch\nfrom padding import pad_to_multiple, describe\n"
            "def masked(x, size):\n    mask, _ = pad_to_multiple(torch.ones(x.shape[:2]).bool(), size)\n"
            "    return x.masked_fill(~mask[..., None], 0.)\n"
            "def shown(x):\n    return x * describe(torch.ones(3))\n"),
    }
    assert lint_in_project(tmp_path, files, "attention.py", ONLY) == [(4, 30, "TDV201")]


def test_a_tensor_of_a_list_the_function_built_is_its_own():
    # detectron2's box-proposal evaluation: boxes read from JSON annotations become a CPU
    # tensor; what is indexed and computed from them is host-side work, like the CPU
    # accumulator it fills
    code = """import torch
def recall(predictions, coco_api):
    found = []
    for prediction in predictions:
        proposals = prediction["proposals"]
        anno = coco_api.loadAnns(prediction["image_id"])
        gt_boxes = [obj["bbox"] for obj in anno]
        gt_boxes = torch.as_tensor(gt_boxes).reshape(-1, 4)
        gt_areas = torch.as_tensor([obj["area"] for obj in anno])
        gt_boxes = gt_boxes[gt_areas > 0]
        overlaps = pairwise_iou(proposals.boxes, gt_boxes)
        covered = torch.zeros(len(gt_boxes))
        for j in range(len(gt_boxes)):
            best, k = overlaps.max(dim=0)
            covered[j] = overlaps[0, k]
            assert covered[j] == best
        found.append(covered)
    return found
"""
    assert tdv201(code) == []


def test_a_helper_that_moves_its_argument_when_told_a_device(tmp_path):
    # graph4nlp's `to_cuda(x, device)`: `if device: x = x.to(device)`, then `return x`
    files = {
        "tree_utils.py": "def to_cuda(x, device=None):\n    if device:\n        x = x.to(device)\n    return x\n",
        "decoder.py": ("import torch\nimport torch.nn as nn\nfrom tree_utils import to_cuda\nclass Decoder(nn.Module):\n"
                       "    def forward(self, state, device):\n        word = torch.tensor([1], dtype=torch.long)\n"
                       "        word = to_cuda(word, device)\n        return self.step(word, state)\n"),
    }
    assert lint_in_project(tmp_path, files, "decoder.py", ONLY) == []


def test_what_a_helper_makes_on_the_cpu_of_its_own_is_no_input():
    # MONAI's itk_to_monai_affine: `_compute_offset_matrix(image, c)` fills two `torch.eye`
    # matrices from an ITK image's numbers; multiplied with the CPU affine, nothing meets
    # the caller's tensors (a single result too)
    code = """import torch
def _offset(image):
    m = torch.eye(image.ndim + 1, dtype=torch.float64)
    m[:image.ndim, image.ndim] = torch.tensor(image.origin)
    return m, torch.eye(image.ndim + 1, dtype=torch.float64)

def _spacing(image):
    m = torch.eye(image.ndim + 1, dtype=torch.float64)
    return m

def to_affine(image, matrix):
    affine = torch.eye(image.ndim + 1, dtype=torch.float64)
    offset, inverse = _offset(image)
    affine = inverse @ affine @ offset
    return affine @ _spacing(image)
"""
    assert tdv201(code) == []
    # a helper that computes on its argument gives the argument's tensor back, beside its own
    # CPU `m`: both meet that tensor in the caller
    assert tdv201(code.replace("    return m, torch.eye(image.ndim + 1, dtype=torch.float64)\n",
                               "    return m, torch.inverse(image)\n")) == [(3, 8, "TDV201"), (12, 13, "TDV201")]


# ---------------------------------------------------------------- a dict of inputs handed to a network
# StateTransformer's planner builds `kwargs = {"ego_position": ..., "trajectory_label": torch.zeros(...)}`
# in forward and calls `self._model.encoder(**kwargs)`; a diffusion sampler puts `t * torch.ones(n, 1)`
# beside the positions it moved in the batch dict its score network takes.

BATCH_REPORTED = {
    "unpacked into a sub-network in forward": (
        forward('kwargs = {"x": x, "label": torch.zeros(x.shape[0], 16)}\n'
                "return self._model.encoder(is_training=self.training, **kwargs)"), [(5, 35)]),
    "a dict literal handed to a sub-network in forward": (
        forward('return self.decoder({"z": x, "t": torch.ones(x.shape[0], 1)})'), [(5, 42)]),
    "beside a tensor moved here, handed to the network the object keeps": (
        "import torch\nclass Sampler:\n    def __init__(self, score_network, device):\n"
        "        self.score_network = score_network\n        self.device = device\n"
        "    def scores(self, x, t):\n        x = x.to(self.device)\n"
        '        batch = {"pos": x, "time": t * torch.ones(x.shape[0], 1)}\n'
        "        return self.score_network(batch)\n", [(8, 39)]),
}

BATCH_NOT_REPORTED = {
    # the dict's own business: an item read back, a log of numbers
    "an item of the dict read back": forward(
        'kwargs = {"x": x, "label": torch.zeros(x.shape[0], 16)}\nreturn self.encoder(kwargs["x"])'),
    "a dict handed to a logger": forward(
        'stats = {"x": x, "zeros": torch.zeros(3)}\nself.log_dict(stats)\nreturn x'),
    # DataParallel scatters a dict's tensors to its devices itself
    "handed to a DataParallel wrapper": forward(
        'kwargs = {"x": x, "label": torch.zeros(x.shape[0], 16)}\nreturn self.parallel_model(**kwargs)'),
    # a plain helper that knows nothing of where the network or its inputs are
    "a helper of the data pipeline": (
        "import torch\ndef make_inputs(net, x):\n"
        '    inputs = {"x": x, "mask": torch.ones(x.shape[0])}\n    return net(**inputs)\n'),
}


@pytest.mark.parametrize("name", sorted(BATCH_REPORTED))
def test_a_dict_of_inputs_handed_to_a_network(name):
    code, expected = BATCH_REPORTED[name]
    assert tdv201(code) == [(line, col, "TDV201") for line, col in expected]


@pytest.mark.parametrize("name", sorted(BATCH_NOT_REPORTED))
def test_a_dict_that_no_network_is_handed(name):
    assert tdv201(BATCH_NOT_REPORTED[name]) == []


# ---------------------------------------------------------------- a module by what it does
# nuplan's `TorchModuleWrapper` is an nn.Module the linter cannot see: a class of such a base
# that defines `forward` and builds a torch.nn layer in `__init__` is taken for a module.

PLANNER = """import torch
import torch.nn as nn
from nuplan.planning.training.modeling.torch_module_wrapper import TorchModuleWrapper
class Planner(TorchModuleWrapper):
    def __init__(self):
        super().__init__()
        self.encoding = nn.Linear(4, 4)
    def forward(self, x):
        return self.encoding(x) + torch.zeros(4)
"""


def test_a_class_that_acts_as_a_module_is_one():
    assert tdv201(PLANNER) == [(9, 34, "TDV201")]


@pytest.mark.parametrize("change", [
    ("        self.encoding = nn.Linear(4, 4)\n", "        self.encoding = build_encoding()\n"),  # no layer seen
    ("    def forward(self, x):\n", "    def step(self, x):\n"),  # no forward: a trainer keeping a model
    ("class Planner(TorchModuleWrapper):", "class Planner:"),  # no base at all: no module
])
def test_a_class_that_does_not_act_as_a_module(change):
    assert tdv201(PLANNER.replace(*change)) == []


# ---------------------------------------------------------------- arguments that a function computes on together
# MatDeepLearn hands `torch.tensor([len(pos)])` to `radius_graph_pbc(r, n, pos, cell, n_atoms)`, which
# subtracts what it computes from `n_atoms` from an `arange` made on `pos.device`.

RADIUS_GRAPH = """import torch
def radius_graph(pos, n_atoms):
    device = pos.device
    offsets = torch.cumsum(n_atoms, dim=0) - n_atoms
    return torch.arange(int(n_atoms.sum()), device=device) - torch.repeat_interleave(offsets, n_atoms)
"""


def test_a_cpu_tensor_handed_to_a_function_that_computes_on_it_with_an_input():
    code = RADIUS_GRAPH + "def edges(pos: torch.Tensor):\n    return radius_graph(pos, torch.tensor([len(pos)]))\n"
    assert tdv201(code) == [(7, 29, "TDV201")]


def test_a_function_of_another_file_that_computes_on_two_arguments_together(tmp_path):
    files = {"graph.py": RADIUS_GRAPH,
             "edges.py": "import torch\nfrom graph import radius_graph\n"
                         "def edges(pos: torch.Tensor):\n    return radius_graph(pos, torch.tensor([len(pos)]))\n"}
    assert lint_in_project(tmp_path, files, "edges.py", ONLY) == [(4, 29, "TDV201")]


@pytest.mark.parametrize("helper, call", [
    # a 0-dim number mixes with any device
    (RADIUS_GRAPH, "radius_graph(pos, torch.tensor(3))"),
    # the arguments meet only through numbers read on the host
    ("import torch\ndef crop(img, size):\n    h = size[0].item()\n    return img[:, :h] * h\n", "crop(pos, torch.tensor([4, 4]))"),
    # ... or after a copy to the host
    ("import torch\ndef overlay(img, mask):\n    return img.cpu() * mask\n", "overlay(pos, torch.ones(3))"),
    # the function computes on it alone
    ("import torch\ndef shift(x, offset):\n    return x.sum() + 1, offset * 2\n", "shift(pos, torch.ones(3))"),
])
def test_a_cpu_tensor_that_the_function_does_not_compute_on_with_an_input(helper, call):
    assert tdv201(helper + f"def edges(pos: torch.Tensor):\n    return {call}\n") == []


def test_a_cpu_tensor_beside_an_argument_not_known_to_be_a_tensor():
    # `pos` may be an array in a plain function that nothing says takes tensors
    assert tdv201(RADIUS_GRAPH + "def edges(pos):\n    return radius_graph(pos, torch.tensor([len(pos)]))\n") == []


# Twenty-second round (held-out set 24): shapes the model did not know, each in general terms.
ROUND22_REPORTED = {
    # a module's run-time method with no tensor input still feeds its networks what it makes
    "a sampler without tensor inputs feeds its network": (
        "from typing import List\nimport torch\nimport torch.nn as nn\n"
        "class Net(nn.Module):\n    pass\n"
        "class Gen(nn.Module):\n"
        "    def __init__(self, net: Net):\n        super().__init__()\n        self.net = net\n"
        "    def generate(self, texts: List[str], steps=8):\n"
        "        ids = torch.full((len(texts), 16), 0, dtype=torch.long)\n"
        "        for _ in range(steps):\n            ids = self.net.forward_with_scale(ids).argmax(-1)\n"
        "        return ids\n",
        [(11, 14, "TDV201")]),
    # re-registering a buffer after the module was built puts a CPU tensor in its place
    "a buffer registered anew in a reset": (
        "import torch\nimport torch.nn as nn\n"
        "class Layer(nn.Module):\n"
        "    def init_state_with_shape(self, shape):\n"
        "        for name, buffer in self.named_buffers():\n"
        "            self.register_buffer(name, torch.zeros(shape), persistent=False)\n",
        [(6, 39, "TDV201")]),
    # both arms of a conditional expression are the same CPU tensor
    "both factories of a conditional expression": (
        "import torch\nimport torch.nn as nn\n"
        "class M(nn.Module):\n"
        "    def forward(self, x, c):\n"
        "        y = torch.rand(3) if c else torch.zeros(3)\n"
        "        return x + y\n",
        [(5, 12, "TDV201"), (5, 36, "TDV201")]),
    # a factory as a parameter's default is the parameter's value when the caller gives none
    "a parameter's default meets the input": (
        "import torch\n"
        "def gate(x: torch.Tensor, q=torch.ones(1)):\n"
        "    return q * x.unsqueeze(1)\n",
        [(2, 28, "TDV201")]),
}

ROUND22_REPORTED["an accumulator filled by a function of the inputs"] = (
    "import torch\nfrom metrics import ndcg\n"
    "def states(labels: torch.Tensor, preds: torch.Tensor):\n"
    "    acc = torch.zeros(labels.shape[0])\n"
    "    for i in range(labels.shape[0]):\n"
    "        acc[i] = ndcg(preds[i], labels[i])\n"
    "    return {'ndcg': acc}\n",
    [(4, 10, "TDV201")])

ROUND22_NOT_REPORTED = {
    # filled with Python numbers of the inputs: host-side results on purpose
    "an accumulator filled with numbers": (
        "import torch\n"
        "def sums(labels: torch.Tensor):\n"
        "    acc = torch.zeros(labels.shape[0])\n"
        "    for i in range(labels.shape[0]):\n"
        "        acc[i] = float(labels[i].sum())\n"
        "    return acc\n"),
    # a function given parameters nothing shows to be tensors
    "an accumulator filled by a function of unknown values": (
        "import torch\nfrom metrics import ndcg\n"
        "def states(labels, preds):\n"
        "    acc = torch.zeros(len(labels))\n"
        "    for i in range(len(labels)):\n"
        "        acc[i] = ndcg(preds[i], labels[i])\n"
        "    return acc\n"),
    # made in __init__ or a builder __init__ calls: construction time
    "a buffer registered while the module is built": (
        "import torch\nimport torch.nn as nn\n"
        "class Layer(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self._build()\n"
        "    def _build(self):\n"
        "        self.register_buffer('h', torch.zeros(3), persistent=False)\n"),
    # a setter may run before the module is moved: only resets, state makers and forward's own
    "a buffer registered by a setter": (
        "import torch\nimport torch.nn as nn\n"
        "class Grid(nn.Module):\n"
        "    def set_bounds(self, lo, hi):\n"
        "        self.register_buffer('lo', torch.Tensor(lo))\n"),
    # Lightning's `setup(stage)` runs before the trainer moves the module
    "a buffer registered in Lightning's setup": (
        "import torch\nimport torch.nn as nn\n"
        "class Metrics(nn.Module):\n"
        "    def setup(self, stage):\n"
        "        self.register_buffer('hist', torch.zeros(10))\n"
        "    def reset(self):\n"
        "        self.hist.zero_()\n"),
    # ... nor one not known to hold a module (`self.net = net` of an unannotated parameter)
    "a method without inputs that runs an attribute of unknown kind": (
        "from typing import List\nimport torch\nimport torch.nn as nn\n"
        "class Gen(nn.Module):\n"
        "    def __init__(self, net):\n        super().__init__()\n        self.net = net\n"
        "    def generate(self, texts: List[str]):\n"
        "        return self.net(torch.zeros(len(texts), 4))\n"),
    # a method that takes whatever it is given (`**kwargs`) is judged by what it does with it
    "a method taking keyword arguments only": (
        "import torch\nimport torch.nn as nn\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.emb = nn.Linear(1, 4)\n"
        "    def encode(self, **kwargs):\n"
        "        return self.emb(torch.Tensor([kwargs.get('height', 768)]))\n"),
    # a method without inputs that runs no network of the module
    "a method without inputs that runs no network": (
        "import torch\nimport torch.nn as nn\n"
        "class M(nn.Module):\n"
        "    def describe(self, steps=8):\n"
        "        t = torch.zeros(steps)\n"
        "        return t.tolist()\n"),
    # the default is moved where the input is before use
    "a parameter's default moved to the input's device": (
        "import torch\n"
        "def gate(x: torch.Tensor, q=torch.ones(1)):\n"
        "    q = q.to(x.device)\n"
        "    return q * x.unsqueeze(1)\n"),
    # the default never meets a tensor
    "a parameter's default used alone": (
        "import torch\n"
        "def scale(x: torch.Tensor, s=torch.ones(1)):\n"
        "    return s.sum().item() * 2\n"),
}


@pytest.mark.parametrize("name", sorted(ROUND22_REPORTED))
def test_round22_reported(name):
    code, expected = ROUND22_REPORTED[name]
    assert tdv201(code) == expected


@pytest.mark.parametrize("name", sorted(ROUND22_NOT_REPORTED))
def test_round22_not_reported(name):
    assert tdv201(ROUND22_NOT_REPORTED[name]) == []


def test_a_default_factory_is_told_to_default_to_none():
    code = ROUND22_REPORTED["a parameter's default meets the input"][0]
    found = lint_source(code, "g.py", Options(enabled=ONLY))
    assert [f.message for f in found] == [
        "torch.ones() without device= makes a CPU tensor in device-sensitive code; default the parameter "
        "to None and make the tensor in the body with device=x.device"]
    assert not found[0].fixable  # no `device=x.device` where the function is defined: x is not there


def test_a_module_method_names_no_size_parameter_as_the_device():
    # mmagic-like `make_grid(self, height, width)`: `height` is an int, not a tensor to take the device from
    code = ("import torch\nimport torch.nn as nn\n"
            "class PE(nn.Module):\n"
            "    def make_grid(self, height, width):\n"
            "        ys = torch.arange(height) + 1\n"
            "        return self(ys)\n")
    found = lint_source(code, "pe.py", Options(enabled=ONLY))
    assert [(f.line, f.col) for f in found] == [(5, 13)]
    assert "height.device" not in found[0].message


# The blind precision sample on set 24's repositories: CPU work that the catalog does not report.
ROUND22_SAMPLE_NOT_REPORTED = {
    # yolov4's loss: the class's own helper gets only CPU tensors made here
    "an own helper given only tensors made here": (
        "import torch\nimport torch.nn as nn\n"
        "class YoloLoss(nn.Module):\n"
        "    def iou(self, a, b):\n        return a[:, :2] * b[:, :2]\n"
        "    def get_target(self, targets, anchors):\n"
        "        box = targets[0].cpu()\n"
        "        gt = torch.cat((torch.zeros((box.size(0), 2)), box[:, 2:4]), 1)\n"
        "        shapes = torch.cat((torch.zeros((len(anchors), 2)), torch.FloatTensor(anchors)), 1)\n"
        "        return torch.argmax(self.iou(gt, shapes), dim=-1)\n"),
    # SSLRec's edge dropout: `keep_rate` is tested against a number, and the mask only indexes
    "a parameter tested against a number": (
        "import torch\nimport torch.nn as nn\n"
        "class EdgeDrop(nn.Module):\n"
        "    def forward(self, vals, keep_rate):\n"
        "        if keep_rate == 1.0:\n            return vals\n"
        "        mask = (torch.rand(vals.size()) + keep_rate).floor().type(torch.bool)\n"
        "        return vals[mask] / keep_rate\n"),
    # torchvision's mixup: a private torch op of the CPU tensor, read as a Python number
    "a private torch op read as a number": (
        "import torch\nimport torch.nn as nn\n"
        "class Mixup(nn.Module):\n"
        "    def forward(self, batch):\n"
        "        lam = float(torch._sample_dirichlet(torch.tensor([0.2, 0.2]))[0])\n"
        "        return batch.mul_(lam)\n"),
}


@pytest.mark.parametrize("name", sorted(ROUND22_SAMPLE_NOT_REPORTED))
def test_round22_sample_not_reported(name):
    assert tdv201(ROUND22_SAMPLE_NOT_REPORTED[name]) == []


def test_an_own_helper_given_an_input_beside_the_cpu_tensor_is_still_reported():
    code = ROUND22_SAMPLE_NOT_REPORTED["an own helper given only tensors made here"].replace(
        "self.iou(gt, shapes)", "self.iou(targets, shapes)")
    assert tdv201(code) == [(9, 28, "TDV201"), (9, 60, "TDV201")]


def test_an_own_helper_that_reads_the_module_state_meets_it():
    # gluonts' binned distribution: `self.icdf(torch.rand(n))` computes with the parameters it holds
    code = ("import torch\nimport torch.nn as nn\n"
            "class Dist(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.w = nn.Parameter(torch.ones(3))\n"
            "    def scale(self, q):\n        return q * self.w\n"
            "    def forward(self, x):\n"
            "        q = torch.rand(x.size(0))\n"
            "        return self.scale(q)\n")
    assert tdv201(code) == [(10, 12, "TDV201")]
    # a helper of its arguments alone computes where they are
    assert tdv201(code.replace("return q * self.w", "return q * 2")) == []


def test_the_fix_names_no_size_parameter_that_the_new_tensor_meets():
    # yolov4's `get_target(self, targets, in_h, in_w)`: `in_w` is a size divided into the
    # targets, not a tensor whose device the fix could take
    code = ("import torch\nimport torch.nn as nn\n"
            "class YoloLoss(nn.Module):\n"
            "    def get_target(self, targets, in_h, in_w):\n"
            "        scale = torch.zeros(len(targets), in_h, in_w)\n"
            "        box = targets[0].float()\n"
            "        scale[0, 0, 0] = box[0, 2] * box[0, 3] / in_w\n"
            "        return scale\n")
    found = lint_source(code, "loss.py", Options(enabled=ONLY))
    assert all("in_w.device" not in f.message and "in_h.device" not in f.message for f in found)
    assert not any(f.fixable for f in found)


OUT_BUFFER = """\
import torch
import torch.nn as nn
from torch_scatter import scatter_mean


class WGATConv(nn.Module):
    def forward(self, x, edge_index):
        row, col = edge_index
        alpha = torch.cat([x[row], x[col]], dim=-1)
        out = torch.zeros(x.shape[0], alpha.shape[1])
        out = scatter_mean(alpha, row, dim=0, out=out)
        return out


def pooled(values, index):
    buffer = torch.zeros(4)
    return scatter_mean(values.tolist(), index, out=buffer)
"""


def test_an_output_buffer_of_a_computation_on_the_inputs():
    """Deeprank-GNN (held-out set 25): `scatter_mean(alpha, row, dim=0, out=torch.zeros(...))`
    writes a result computed from the inputs into the buffer, which must be where they are.
    A buffer handed with no tensor the code knows of is not reported."""
    assert tdv201(OUT_BUFFER) == [(10, 14, "TDV201")]


NOISE = """\
import torch
import torch.nn as nn


def get_noise(shape, noise_type):
    if noise_type == "gaussian":
        return torch.randn(*shape)
    return torch.rand(*shape).sub_(0.5).mul_(2.0)


class Decoder(nn.Module):
    def __init__(self, noise_dim):
        super().__init__()
        self.noise_dim = noise_dim
        self.mlp = nn.Linear(8, 8)

    def adding_noise(self, hidden):
        new_hidden = self.mlp(hidden)
        noise = get_noise((self.noise_dim,), "gaussian")
        z = noise.repeat(new_hidden.size(0), 1)
        return torch.cat([new_hidden, z], dim=1)
"""


def test_a_module_function_returning_a_cpu_tensor_that_a_caller_combines_with_the_device():
    """trajnetplusplusbaselines (held-out set 25): SGAN's `get_noise(shape)` returns
    `torch.randn(*shape)`, which the decoder concatenates with its hidden state on the GPU.
    Reported at the factories the function returns; not where no caller in the file
    combines the result with a tensor on a device, nor where the caller moves it first."""
    assert tdv201(NOISE) == [(7, 15, "TDV201"), (8, 11, "TDV201")]
    moved = NOISE.replace("        z = noise.repeat(", "        noise = noise.to(new_hidden.device)\n"
                                                   "        z = noise.repeat(")
    assert tdv201(moved) == []
    plotted = NOISE.replace("        return torch.cat([new_hidden, z], dim=1)\n", "        return z.numpy()\n")
    assert tdv201(plotted) == []
    # SGAN's own shape: the noise on one arm of an `if`, zeros on the other
    arms = NOISE.replace("        noise = get_noise((self.noise_dim,), \"gaussian\")\n",
                         "        if self.training:\n            noise = get_noise((self.noise_dim,), \"gaussian\")\n"
                         "        else:\n            noise = torch.zeros(self.noise_dim)\n")
    assert tdv201(arms) == [(7, 15, "TDV201"), (8, 11, "TDV201"), (22, 20, "TDV201")]


def test_a_module_named_a_collate_function_batches_on_the_cpu():
    """so-vits-svc-fork (set 25's precision sample): `class TextAudioCollate(nn.Module)` is
    the loader's `collate_fn`; its forward pads samples in the workers, on the CPU. Any other
    module's forward is still device-sensitive."""
    code = """\
import torch
import torch.nn as nn


class TextAudioCollate(nn.Module):
    def forward(self, batch):
        lengths = torch.tensor([b["mel"].shape[1] for b in batch]).long()
        order = torch.argsort(lengths, descending=True)
        return torch.zeros(len(batch), 4) + order[:, None]
"""
    assert tdv201(code) == []
    assert tdv201(code.replace("TextAudioCollate", "TextAudioEncoder")) == [(7, 18, "TDV201"), (9, 15, "TDV201")]


def test_a_plain_class_in_a_datasets_folder_is_data_pipeline(tmp_path):
    """ROMP (set 25's precision sample): `datasets/image_base_relative.py`'s dataset class
    derives targets from CPU samples with `torch.ones(n, 3) * -2`; its base is a Dataset in
    another file. Outside such a folder the helper computes on the caller's tensors."""
    code = """\
import torch
from .image_base import Image_base


class Image_base_relative(Image_base):
    def _derive_world_cam(self, cam_mask, kp3ds):
        world_trans = torch.ones(self.max_person, 3) * -2
        return world_trans * cam_mask.unsqueeze(1)
"""
    from flake8_torchdevice.engine import Options, lint_source

    def found(path):
        return [(f.line, f.col, f.code) for f in lint_source(code, path, Options(enabled=ONLY))]
    assert found(str(tmp_path / "lib" / "datasets" / "image_base_relative.py")) == []
    assert found(str(tmp_path / "lib" / "models" / "image_base_relative.py")) == [(7, 22, "TDV201")]
    # (a class merely named like a transform is no data pipeline: improving-fs-ssl's
    # `BatchRotation.rotate(x)` makes rotation labels for the GPU batch, set 20)
    code = code.replace("Image_base_relative", "BatchRotation")
    assert found(str(tmp_path / "lib" / "task" / "rotation.py")) == [(7, 22, "TDV201")]


@pytest.mark.parametrize("helper, use", [
    # diffusers' `get_1d_rotary_pos_embed(dim, pos)`: a factory only for an int argument
    ("def grid(pos):\n    if isinstance(pos, int):\n        pos = torch.arange(pos)\n    return pos * 2\n",
     "        return x + grid(x.shape[0])\n"),
])
def test_module_function_results_not_reported(helper, use):
    code = ("import torch\nimport torch.nn as nn\n\n" + helper + "\n\nclass M(nn.Module):\n"
            "    def forward(self, x):\n" + use)
    assert tdv201(code) == []


def test_a_module_function_result_a_host_bound_helper_meets_is_not_reported():
    # MONAI's ITK bridge: the helper that combines the matrix with its argument hands the
    # result to the host, CPU work on purpose
    code = ("import torch\n\n\ndef offset_matrix(n):\n    return torch.eye(n + 1)\n\n\n"
            "def to_itk(affine: torch.Tensor):\n    m = offset_matrix(3)\n    out = m @ affine\n    return out.numpy()\n")
    assert tdv201(code) == []
    assert tdv201(code.replace("    return out.numpy()\n", "    return out\n")) == [(5, 11, "TDV201")]


WINDOWS = """\
import torch
import torch.nn as nn


class Spec(nn.Module):
    def __init__(self, n_fft):
        super().__init__()
        self.n_fft = n_fft
        self.register_buffer("window", torch.hann_window(n_fft))

    def forward(self, x):
        a = torch.stft(x, self.n_fft, window=self.window, return_complex=True)
        b = torch.stft(x, self.n_fft, window=torch.hann_window(self.n_fft), return_complex=True)
        c = torch.stft(x, self.n_fft, window=torch.hamming_window(self.n_fft, device=x.device), return_complex=True)
        return a, b, c
"""


def test_a_signal_window_is_a_factory():
    """torch-audiomentations (held-out set 25): a crossfade with `torch.hann_window(n)` made
    on the CPU multiplies GPU samples; `torch.stft(x, n, window=torch.hann_window(n))` is the
    common shape. A registered window, or one given `device=`, is not reported."""
    assert tdv201(WINDOWS) == [(13, 45, "TDV201")]


MIRROR_POINTS = """import torch
def handle_sum_greater_1(d, bary_coords):
    sum_bigger_one = bary_coords.sum(axis=2) >= 1
    index = torch.where(sum_bigger_one)
    bary_coords[index] = torch.subtract(torch.tensor([[1.0, 1.0]]), bary_coords[index])
    return bary_coords
"""


def test_what_torch_takes_only_as_a_tensor_is_one():
    # torchphysics' triangle sampler: `torch.where(s)` raises for anything but a tensor, so `s`
    # is one, and so is `bary_coords`, which `s` was computed from
    assert tdv201(MIRROR_POINTS) == [(5, 40, "TDV201")]
    # ... directly: `torch.where(x > 0)`, `torch.exp(-x)`, `torch.logical_not(x[:, 0])`
    for use in ("torch.where(bary_coords > 0)", "torch.exp(-bary_coords)", "torch.logical_not(bary_coords[:, 0])",
                "torch.nonzero(bary_coords.float())"):
        code = MIRROR_POINTS.replace("torch.where(sum_bigger_one)", use)
        assert tdv201(code) == [(5, 40, "TDV201")], use
    # no evidence: ops that take a number first, an item of what may be a list of tensors,
    # NumPy's own functions, and a name rebound to something else before it was used
    for use in ("torch.add(sum_bigger_one, 1)", "torch.where(bary_coords[0])", "np.where(sum_bigger_one)"):
        code = MIRROR_POINTS.replace("torch.where(sum_bigger_one)", use)
        code = code.replace("import torch\n", "import numpy as np\nimport torch\n")
        assert tdv201(code) == [], use
    rebound = MIRROR_POINTS.replace("    index = ", "    sum_bigger_one = d.mask\n    index = ")
    assert tdv201(rebound) == []
    augmented = MIRROR_POINTS.replace("    index = ", "    sum_bigger_one += d.mask\n    index = ")
    assert tdv201(augmented) == []


MODEL_INPUTS = """import torch
import torch.nn as nn
def summary(model):
    dummy = torch.randn(1, 3, 224, 224)
    return model(dummy).sum()
def candidate_layer(mod, shape=(3, 224, 224)):
    names = list(mod.named_modules())
    mod(torch.zeros((1, *shape)))
    return names
class Hook:
    def __init__(self, model, size):
        self._model = model
        self._model.eval()
        self._model(torch.rand(*size))
def evaluate(net_factory, device, writer):
    model = net_factory().to(device)
    batch = torch.zeros(8, 3, 112, 112)
    writer.add_graph(model, torch.zeros(1, 3, 112, 112))
    return model(batch)
class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.width = self.forward(torch.zeros(1, 3)).shape[1]
    def forward(self, x):
        return self.fc(x)
    def biases(self):
        return self.forward(torch.zeros(1, 3))
"""


def test_a_dummy_input_goes_where_the_model_is():
    # torch-cam's candidate-layer search, tensorwatch's hook, fullgrad's `getBiases`, a face
    # recognition trainer's `add_graph`: a CPU dummy input run through a model handed in, moved
    # here, or the module itself at run time fails once the model is on a GPU
    assert tdv201(MODEL_INPUTS) == [(line, col, "TDV201") for line, col in
                                    [(4, 12), (8, 8), (14, 20), (17, 12), (18, 28), (28, 28)]]
    messages = {f.line: f.message for f in lint_source(MODEL_INPUTS, "t.py", Options(enabled=ONLY))}
    assert "pass device=next(model.parameters()).device" in messages[4]
    assert "next(self._model.parameters()).device" in messages[14]
    assert "pass device=device" in messages[17]
    assert "next(self.parameters()).device" in messages[28]


def test_what_a_model_takes_on_the_cpu_or_runs_while_built():
    # the lengths packing wants on the CPU, a size probe while the model is built, a model the
    # function takes to the CPU itself, a model built here and never moved, a DDP wrapper
    code = """import torch
def step(encoder, x, lengths):
    return encoder(x, torch.LongTensor(lengths))
def export(model, path):
    model.cpu()
    torch.save(model(torch.zeros(1, 3)), path)
def build(net_cls):
    model = net_cls()
    return model(torch.zeros(1, 3))
def run(ddp_model):
    return ddp_model(torch.zeros(1, 3))
def width(model):
    return model(torch.zeros(1, 3)).shape[1]
def test_forward_pass(model):
    assert model(torch.randn(10, 3)).isfinite().all()
def output_dimension(module, in_features):
    output = module(torch.zeros(1, in_features))
    return output.size(-1)
def flattened_dimension(model_cnn, c, h, w):
    flat = torch.flatten(model_cnn(torch.zeros(1, c, h, w)), start_dim=1)
    return flat.shape[1]
"""
    assert tdv201(code) == []


def test_what_linalg_takes_is_a_tensor():
    # laplace's symeig: `torch.linalg.eigh(M)` shows `M` is a tensor; the jitter added to it must
    # be where it is
    code = """import torch
def symeig(M):
    try:
        L, W = torch.linalg.eigh(M)
    except RuntimeError:
        M = M + torch.eye(M.shape[0])
        L, W = torch.linalg.eigh(M)
    return L, W
"""
    assert tdv201(code) == [(6, 16, "TDV201")]
    assert tdv201(code.replace("torch.linalg.eigh(M)", "np.linalg.eigh(M)")) == []


def test_items_of_an_annotated_dict_returned_from_forward():
    # terratorch's Datacuber: `datacube: dict[...] = {}` filled with the input and two CPU
    # defaults, returned from forward: each default is reported
    code = """import torch
import torch.nn as nn
class Datacuber(nn.Module):
    def forward(self, x, time=None, latlon=None):
        datacube: dict[str, torch.Tensor] = {}
        datacube["pixels"] = x
        datacube["time"] = torch.zeros((x.shape[0], 4)) if time is None else time
        datacube["latlon"] = torch.zeros((x.shape[0], 4)) if latlon is None else latlon
        return datacube
"""
    assert tdv201(code) == [(7, 27, "TDV201"), (8, 29, "TDV201")]
    assert tdv201(code.replace("(x.shape[0], 4))", "(x.shape[0], 4), device=x.device)")) == []


def test_a_number_tensor_that_losses_are_added_into_in_place():
    # alibi's compute_loss: `loss = torch.tensor(0.)`, then `loss += weight * partial_loss(y_pred[i],
    # y_true[i])` of a module's lists of outputs: an in-place add into a CPU tensor refuses a GPU
    # loss (`loss = loss + ...` would make a new tensor where the loss is)
    code = """import torch
import torch.nn as nn
class Model(nn.Module):
    def compute_loss(self, y_pred, y_true):
        loss = torch.tensor(0.)
        for i, partial_loss in enumerate(self.loss):
            weight = self.loss_weights[i] if len(self.loss_weights) else 1.
            loss += weight * partial_loss(y_pred[i], y_true[i])
        return loss
"""
    assert tdv201(code) == [(5, 15, "TDV201")]
    assert tdv201(code.replace("loss += weight *", "loss = loss + weight *")) == []


def test_a_test_modules_helpers_get_fixtures():
    # a helper of a test module runs a model a test's fixture built (mmrazor's `_test_a_mutator`)
    code = """import torch
def check_model(model):
    x = torch.rand([2, 3, 224, 224])
    return model(x)
"""
    assert [f.line for f in lint_source(code, "utils.py", Options(enabled=ONLY))] == [3]
    assert lint_source(code, "test_utils.py", Options(enabled=ONLY)) == []


def test_a_name_the_function_takes_to_the_host_elsewhere():
    # Pointcept's instance results: `scores = torch.stack(scores).cpu()` on one arm, an empty
    # `torch.tensor([])` on the other, both returned from forward on the host on purpose
    code = """import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        scores = [s.mean() for s in self.head(x)]
        if len(scores) > 0:
            scores = torch.stack(scores).cpu()
        else:
            scores = torch.tensor([])
        return {"scores": scores, "x": x}
"""
    assert tdv201(code) == []
    assert tdv201(code.replace("torch.stack(scores).cpu()", "torch.stack(scores)")) == [(9, 21, "TDV201")]


def test_a_tests_fixtures_are_its_own_data():
    # TorchCP's tests: `cumsum == torch.arange(...)` of what a fixture's CPU data gave; with a
    # device handed in too (torchao's `test_grouped_mm(x, device)`) the test runs on that device
    code = """import torch
def test_cumsum(sample_data):
    cumsum = torch.cumsum(sample_data["probs"], dim=1)
    assert torch.all(cumsum > torch.arange(1, cumsum.shape[1] + 1))
"""
    assert lint_source(code, "test_topk.py", Options(enabled=ONLY)) == []
    with_device = code.replace("(sample_data)", "(sample_data, device)")
    assert [f.line for f in lint_source(with_device, "test_topk.py", Options(enabled=ONLY))] == [4]


def test_a_model_whose_outputs_are_read_as_arrays_runs_on_the_host():
    # face.evoLVe's `run_first_stage(image, net, ...)`: `output[1].data.numpy()` raises for a GPU
    # tensor, so the network it was handed is on the CPU
    code = """import torch
def run_first_stage(image, net, scale):
    img = torch.FloatTensor(image)
    output = net(img)
    return output[1].data.numpy()
"""
    assert tdv201(code) == []
    assert tdv201(code.replace("output[1].data.numpy()", "output[1].data.cpu().numpy()")) == [(3, 10, "TDV201")]


def test_what_the_code_tests_is_no_tensor_is_none():
    # anomalib's `_cov(observations: Tensor, aweights: Tensor | None)`: `if not torch.is_tensor(w):
    # w = torch.tensor(w)` makes a CPU tensor of a list, whatever the annotation says; and
    # `torch.sum(w)` after it says nothing of what `w` held before
    code = """import torch
def cov(observations: torch.Tensor, aweights: torch.Tensor | None = None):
    weights = aweights
    if weights is not None:
        if not torch.is_tensor(weights):
            weights = torch.tensor(weights, dtype=torch.float)
        weights_sum = torch.sum(weights)
        return torch.sum(observations * (weights / weights_sum)[:, None], 0)
    return torch.mean(observations, 0)
"""
    assert tdv201(code) == [(6, 22, "TDV201")]


def test_a_tokenizer_named_for_its_loss_mask_is_no_loss():
    # Model-Optimizer's `_tokenize_with_loss_mask`: a tokenizer's CPU mask, named for the loss it
    # will feed, is data made on the host, not a loss returned to the caller
    code = """import torch
def _tokenize_with_loss_mask(ids, n):
    loss_mask = torch.ones(len(ids), dtype=torch.long)
    loss_mask[:n] = 0
    return ids, loss_mask
"""
    assert tdv201(code) == []
    assert tdv201(code.replace("_tokenize_with_loss_mask", "masked_loss")) == [(3, 16, "TDV201")]


def test_a_method_whose_every_return_is_on_the_device():
    # MadMario's agent: `predict` returns what its moved networks compute from a moved state,
    # so `next_q = self.predict(...)` is on the device; rewards made beside it are not
    code = """import torch
import numpy as np
class Agent:
    def __init__(self, net):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.online_q = net.to(self.device)
    def predict(self, state):
        state = torch.FloatTensor(np.array(state)).to(self.device)
        return self.online_q(state)
    def learn(self, batch):
        state, reward = map(np.array, zip(*batch))
        next_q = self.predict(state)
        target_q = torch.tensor(reward) + 0.9 * next_q.max(1)[0]
        return target_q.mean().item()
"""
    assert tdv201(code) == [(13, 19, "TDV201")]
    # a method that also returns something of unknown place tells nothing
    assert tdv201(code.replace("        return self.online_q(state)\n",
                               "        if state is None:\n            return self.default\n"
                               "        return self.online_q(state)\n")) == []



def test_a_buffers_data_replaced_by_a_cpu_tensor():
    # prob_mbrl's densities: `resample` sets the buffer's `.data` to fresh CPU noise, which
    # takes the moved buffer off the device; the remedy names the buffer's own device
    code = """import torch
from torch import nn
class Density(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer('z', torch.ones([1, 1]))
    def resample(self):
        self.z.data = torch.randn(self.z.shape)
    def forward(self, x):
        return x * self.z
"""
    from flake8_torchdevice.engine import Options, lint_source

    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    assert (finding.line, finding.col) == (8, 22)
    assert finding.message.endswith("pass device=self.z.device")
    # made where the buffer is, or the data of a plain attribute: nothing to report
    assert tdv201(code.replace("torch.randn(self.z.shape)", "torch.randn(self.z.shape, device=self.z.device)")) == []
    assert tdv201(code.replace("self.register_buffer('z', torch.ones([1, 1]))", "self.z = None")) == []


def test_a_function_told_a_device_returns_a_tensor_made_without_it():
    # torch-fourier-slice's `dft_center(shape, ..., device)`: one tensor is made with
    # `device=device`, the one returned without it; the caller asked for its result there
    code = """import torch
def grid(shape, device=None):
    if len(shape) == 1:
        return torch.arange(shape[0], device=device)
    ranges = torch.arange(shape[1])
    return ranges * 2
"""
    assert tdv201(code) == [(5, 13, "TDV201")]
    # returned under a test of the device: the caller's choice
    assert tdv201(code.replace("    ranges = torch.arange(shape[1])\n    return ranges * 2\n",
                               "    if device is None:\n        return torch.arange(shape[1])\n"
                               "    return torch.arange(shape[1], device=device)\n")) == []
    # a data pipeline's function
    assert tdv201(code.replace("def grid(", "def collate_grid(")) == []
    # one that puts something on the CPU on purpose (torchao's expected values beside the inputs)
    assert tdv201(code.replace("    ranges = torch.arange(shape[1])\n",
                               "    expected = torch.zeros(2, device='cpu')\n    ranges = torch.arange(shape[1])\n")) == []


def test_what_a_modules_method_without_tensor_inputs_returns_is_judged_where_used():
    # svox2's `_get_rand_cells(self, frac)` returns CPU cell indices that the grid's methods
    # hand to a kernel beside its parameters
    code = """import torch
from torch import nn
class Grid(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.density = nn.Parameter(torch.zeros(n))
    def tv_grad(self, grad: torch.Tensor, frac: float):
        cells = self._rand_cells(frac)
        return kernel(self.density, cells, grad)
    def _rand_cells(self, frac: float):
        n = max(int(frac * self.density.numel()), 1)
        return torch.randint(0, self.density.numel(), (n,))
"""
    assert tdv201(code) == [(12, 15, "TDV201")]
    # used only to count on the host: nothing met
    assert tdv201(code.replace("return kernel(self.density, cells, grad)", "return len(cells.tolist())")) == []
    # handed alone to a method of the class (kornia's `get_children_by_indices(rand_selector(n))`)
    assert tdv201(code.replace("return kernel(self.density, cells, grad)", "return self.pick(cells)")) == []
    # a module of a data pipeline's folder (rslearn's `train/transforms/crop.py` samples its crop)
    from flake8_torchdevice.engine import Options, lint_source
    assert lint_source(code, "train/transforms/grid.py", Options(enabled=ONLY)) == []


def test_a_method_given_tensors_its_class_moved_has_them_on_the_device():
    # EEG-GAN's trainer moves each batch, then calls `self.batch_train(data, labels)`, which
    # concatenates a CPU flag tensor with them (and moves the result only afterwards)
    code = """import torch
class Trainer:
    def __init__(self, generator, device):
        self.device = device
        self.generator = generator.to(device)
    def training(self, dataset):
        for i in range(0, len(dataset), 8):
            data = dataset[i:i + 8, 1:].to(self.device)
            labels = dataset[i:i + 8, :1].to(self.device)
            self.batch_train(data, labels=labels)
    def batch_train(self, data, labels):
        working = torch.ones(size=(labels.shape[0], 1))
        gen_labels = torch.cat((labels, working, data), dim=1).to(self.device)
        fake_labels = labels.permute(1, 0).to(self.device)
        return self.generator(gen_labels), fake_labels
"""
    assert tdv201(code) == [(12, 18, "TDV201")]
    # another call that hands it what it did not move: a method that moves some of its
    # inputs itself gets them on the CPU
    assert tdv201(code.replace("    def batch_train(", "    def evaluate(self, x, y):\n"
                               "        return self.batch_train(x, y)\n    def batch_train(")) == []


def test_an_item_of_a_vector_made_here_is_one_number():
    # convexAdam's coupled optimisation: `coeffs[j]` of a CPU vector is a 0-dim tensor, which
    # mixes with tensors on any device
    code = """import torch
def coupled(ssd, disp):
    coeffs = torch.tensor([0.003, 0.01, 0.03, 0.1])
    out = []
    for j in range(4):
        out.append(ssd + coeffs[j] * disp.pow(2))
    return out
"""
    assert tdv201(code) == []
    # the whole vector, or a slice of it, is no number
    assert tdv201(code.replace("coeffs[j] * disp", "coeffs[:j] * disp")) == [(3, 13, "TDV201")]
    assert tdv201(code.replace("coeffs[j] * disp", "coeffs * disp")) == [(3, 13, "TDV201")]


def test_an_item_of_a_one_number_factory_is_one_number():
    # gaussian-splatting-lightning's scale sampling: `torch.rand(1)[0]` is a 0-dim tensor
    code = """import torch
from torch import nn
class Shrink(nn.Module):
    def forward(self, scales):
        return scales * torch.rand(1)[0]
"""
    assert tdv201(code) == []
    # the whole one-element vector is no number: it broadcasts as a CPU tensor
    assert tdv201(code.replace("torch.rand(1)[0]", "torch.rand(1)")) == [(5, 24, "TDV201")]
    # nor is a row of a table
    assert tdv201(code.replace("torch.rand(1)[0]", "torch.rand(4, 3)[0]")) == [(5, 24, "TDV201")]


@pytest.mark.parametrize("loop", [
    "for alpha in torch.linspace(0.0, 1.0, steps + 1):",
    "for alpha in tqdm(torch.linspace(0.0, 1.0, steps + 1), desc='steps'):",
    "for alpha in torch.arange(steps):",
])
def test_the_items_a_loop_takes_from_a_vector_are_numbers(loop):
    # GreatX's integrated gradients: each `alpha` of a CPU linspace is a 0-dim tensor
    code = f"""import torch
from torch import nn
class Attack(nn.Module):
    def forward(self, adj, baseline, steps):
        {loop}
            adj = adj + alpha
        return adj
"""
    assert tdv201(code) == []


def test_a_summary_filled_with_numbers_taken_to_the_host():
    # diamond's classification metrics: per-class figures computed from `.item()` numbers,
    # handed back as a CPU summary on purpose
    code = """import torch
def classification_metrics(confusion):
    n = confusion.size(0)
    precision = torch.zeros(n)
    recall = torch.zeros(n)
    f1 = torch.zeros(n)
    for i in range(n):
        tp = confusion[i, i].item()
        fp = confusion[:, i].sum().item() - tp
        fn = confusion[i, :].sum().item() - tp
        precision[i] = tp / (tp + fp) if tp + fp != 0 else 0
        recall[i] = tp / (tp + fn) if tp + fn != 0 else 0
        f1[i] = 2 * precision[i] * recall[i] / (precision[i] + recall[i]) if precision[i] + recall[i] else 0
    return precision, recall, f1
"""
    assert tdv201(code) == []
    # filled with the caller's tensors, it brings their results back on the CPU
    tensors = code.replace("tp / (tp + fp) if tp + fp != 0 else 0", "confusion[i, i] / confusion[:, i].sum()")
    assert tdv201(tensors) == [(4, 16, "TDV201"), (6, 9, "TDV201")]
    # a number a local holds once and a tensor later is no host number
    rebound = code.replace("        precision[i] = tp", "        tp = confusion[i, i]\n        precision[i] = tp")
    assert tdv201(rebound) == [(4, 16, "TDV201"), (5, 13, "TDV201"), (6, 9, "TDV201")]


def test_a_number_unpacked_from_a_shape_makes_a_0_dim_tensor():
    # RAFT's correlation (blind sample of set 29): `dim` of `fmap1.shape` is a number
    code = """import torch
from torch import nn
class Corr(nn.Module):
    def forward(self, fmap1, fmap2):
        batch, dim, ht, wd = fmap1.shape
        corr = torch.matmul(fmap1.view(batch, dim, -1).transpose(1, 2), fmap2.view(batch, dim, -1))
        return corr / torch.sqrt(torch.tensor(dim).float())
"""
    assert tdv201(code) == []
    # a vector of that length is no number
    shape = code.replace("torch.tensor(dim)", "torch.ones(dim)")
    assert tdv201(shape) == [(7, 33, "TDV201")]


def test_a_buffer_registered_anew_then_moved_to_the_device_it_was_told():
    # openmixup's vector quantizer (blind sample of set 29): the reset moves the new buffer itself
    code = """import torch
import torch.nn as nn
class Quantizer(nn.Module):
    def reset_cluster_size(self, device):
        self.register_buffer("cluster_size", torch.zeros(self.num_tokens))
        self.cluster_size = self.cluster_size.to(device)
"""
    assert tdv201(code) == []
    # moved to the CPU, or another buffer moved: still a CPU buffer on a module in use
    assert tdv201(code.replace(".to(device)", ".cpu()")) == [(5, 45, "TDV201")]
    assert tdv201(code.replace("self.cluster_size = self.cluster_size.to(device)",
                               "self.embed = self.embed.to(device)")) == [(5, 45, "TDV201")]


def test_a_cpu_tensor_written_at_indices_computed_from_the_inputs():
    # d2l's multibox_target (set 29): CUDA indices into a CPU tensor raise; the matcher, which
    # makes its own map without a device (reported there), was fixed in the same commit
    code = """import torch
def match_boxes(truth, anchors):
    jaccard = box_iou(anchors, truth)
    matched = torch.full((anchors.shape[0],), -1, dtype=torch.long)
    best, index = torch.max(jaccard, dim=1)
    keep = torch.nonzero(best >= 0.5).reshape(-1)
    matched[keep] = index[best >= 0.5]
    return matched
def box_targets(anchors, labels, device="cpu"):
    offsets, masks, classes = [], [], []
    for i in range(labels.shape[0]):
        label = labels[i, :, :]
        matched = match_boxes(label[:, 1:], anchors)
        mask = (matched >= 0).float().unsqueeze(-1).repeat(1, 4)
        cls = torch.zeros(anchors.shape[0], dtype=torch.long)
        boxes = torch.zeros((anchors.shape[0], 4), dtype=torch.float32)
        hits = torch.nonzero(matched >= 0)
        which = matched[hits]
        cls[hits] = label[which, 0].long() + 1
        boxes[hits] = label[which, 1:]
        offsets.append((encode(anchors, boxes) * mask).reshape(-1))
        masks.append(mask.reshape(-1))
        classes.append(cls)
    return [torch.stack(offsets).to(device), torch.stack(masks).to(device), torch.stack(classes).to(device)]
"""
    assert tdv201(code) == [(4, 14, "TDV201"), (15, 14, "TDV201"), (16, 16, "TDV201")]
    # indices made here from sizes stay on the CPU with the tensor they write into
    here = code.replace("torch.nonzero(matched >= 0)", "torch.arange(3)")
    assert tdv201(here) == [(4, 14, "TDV201")]
    # ... and so do indices taken to the host (sleap-nn's ranking: NumPy's argsort of `.cpu().numpy()`)
    host = code.replace("torch.nonzero(matched >= 0)", "torch.as_tensor(np.argsort(matched.cpu().numpy()))")
    assert tdv201("import numpy as np\n" + host) == [(5, 14, "TDV201")]
    # ... or taken by a loop over host data (cornac's sampler: `for sid in ids.cpu().numpy():`)
    loop = """import torch
import dgl
class Sampler(dgl.dataloading.NeighborSampler):
    def sample(self, g, exclude_eids):
        u, v = g.find_edges(exclude_eids)
        sid = g.edata["sid"][exclude_eids].to(u.device)
        mask = torch.ones(len(self.sid_aos))
        mask[sid] = 0
        picked = [mask]
        for sid in g.edata["sid"][exclude_eids].cpu().numpy():
            aosid = self.sid_aos[sid]
            aosid = aosid[torch.randperm(len(aosid))[0]]
            probability = torch.ones(len(self.aos_probabilities))
            probability[aosid] = 0
            exclude = torch.cat([self.sid_aos[i] for i in self.exclude_sids[sid]])
            probability[exclude] = 0
            picked.append(torch.multinomial(probability, 1))
        return picked
"""
    assert tdv201(loop) == [(7, 15, "TDV201")]  # (the mask written at the device's ids is one)


def test_factories_a_comprehension_makes_are_followed():
    # deepdow's Zoom layer (set 29): one CPU matrix per sample, stacked, sampled with the input
    code = """import torch
import torch.nn as nn
class Zoom(nn.Module):
    def forward(self, x, scale):
        shift = 1 - scale
        theta = torch.stack([torch.tensor([[1, 0, 0], [0, s, t]]) for s, t in zip(scale, shift)], dim=0)
        grid = nn.functional.affine_grid(theta, x.shape)
        return nn.functional.grid_sample(x, grid, align_corners=False)
"""
    assert tdv201(code) == [(6, 29, "TDV201")]
    # stacked and moved to the input's device first
    assert tdv201(code.replace(", dim=0)\n", ", dim=0).to(x.device)\n")) == []


def test_a_generator_made_for_a_device_wants_its_tensors_there():
    # torch refuses a generator of another device than the tensor's
    code = """import torch
def draw_noise(shape, seed):
    g = torch.Generator(get_device())
    g.manual_seed(seed)
    noise = torch.randn(shape, generator=g)
    return noise.mean()
"""
    assert tdv201(code) == [(5, 12, "TDV201")]
    # the default generator, or one made for the CPU, makes CPU tensors on purpose
    assert tdv201(code.replace("torch.Generator(get_device())", "torch.Generator()")) == []
    assert tdv201(code.replace("torch.Generator(get_device())", "torch.Generator('cpu')")) == []
    # hypernet_morl's weight sampler (set 29): the mean of `torch.normal` with the class's generator
    sampler = """import torch
class WeightSampler:
    def __init__(self, reward_dim, device):
        self._device = device
        self._generator = torch.Generator(self._device)
    def sample(self, n):
        samples = torch.normal(torch.zeros(n, self._reward_dim), generator=self._generator)
        return samples / torch.norm(samples, dim=1, keepdim=True)
"""
    assert tdv201(sampler) == [(7, 31, "TDV201")]


def test_a_test_case_runs_each_test_on_a_new_instance():
    # PyTorch-VAE's tests (blind sample of set 29): unittest builds a new TestCase per test, so
    # `test_sample`'s `self.model.cuda()` leaves `test_forward`'s model on the CPU
    code = """import torch
import unittest
class TestVAE(unittest.TestCase):
    def setUp(self):
        self.model = VAE(3, 10)
    def test_forward(self):
        x = torch.randn(16, 3, 64, 64)
        y = self.model(x)
    def test_sample(self):
        self.model.cuda()
        y = self.model.sample(144, 0)
"""
    assert tdv201(code) == []
    # moved by this test, or by setUp before every test: on the GPU here
    here = code.replace("        x = torch.randn(16, 3, 64, 64)\n",
                        "        self.model.cuda()\n        x = torch.randn(16, 3, 64, 64)\n")
    assert tdv201(here) == [(8, 12, "TDV201")]
    setup = code.replace("VAE(3, 10)\n", "VAE(3, 10).cuda()\n")
    assert tdv201(setup) == [(7, 12, "TDV201")]


def test_a_pair_handed_to_a_plotter_is_read_on_the_host():
    # pytracking's DiMP: `self.visdom.register((self.losses, torch.arange(n)), 'lineplot')` plots
    # the losses against CPU step numbers
    code = """import torch
class Tracker:
    def __init__(self, net, device):
        self.net = net.to(device)
        self.device = device
    def init_classifier(self, x):
        x = x.to(self.device)
        losses = self.net(x)
        self.visdom.register((losses, torch.arange(losses.numel())), 'lineplot', 3, 'Training Loss')
        return losses
"""
    assert tdv201(code) == []
    # handed to anything else beside the device tensor, the pair mixes devices
    assert tdv201(code.replace("self.visdom.register(", "self.combine(")) == [(9, 30, "TDV201")]


OPTIMIZER_STEP = """import torch
from torch.optim import Optimizer
class SM3(Optimizer):
    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = torch.zeros(1)
                    state["row"] = torch.zeros(grad.shape[:-1], dtype=grad.dtype)
                    self.state[p]["col"] = torch.zeros(grad.shape[-1])
                    for i in range(grad.dim()):
                        state[f"acc_{i}"] = torch.zeros(grad.shape[i])
                state["step"] += 1
                row = state["row"]
                row.mul_(0.9).add_(grad.square().mean(-1), alpha=0.1)
"""


def test_an_optimizers_state_made_on_the_cpu():
    # pytorch_optimizer's SM3 and AdaFactor (set 28): the state of a parameter is updated with its
    # gradient at every step; sized from the gradient, it must be made on the parameter's device
    assert tdv201(OPTIMIZER_STEP) == [(12, 35, "TDV201"), (13, 43, "TDV201"), (15, 44, "TDV201")]
    [first, _, _] = lint_source(OPTIMIZER_STEP, "t.py", Options(enabled=ONLY))
    assert "device=p.device" in first.message


def test_an_optimizers_state_on_the_parameters_device_or_pinned_on_purpose():
    fixed = OPTIMIZER_STEP.replace("dtype=grad.dtype)", "dtype=grad.dtype, device=p.device)").replace(
        "torch.zeros(grad.shape[-1])", "torch.zeros(grad.shape[-1], pin_memory=True)").replace(
        "torch.zeros(grad.shape[i])", "grad.new_zeros(grad.shape[i])")
    assert tdv201(fixed) == []
    # a dict that is no optimizer's state is not judged this way
    assert tdv201(OPTIMIZER_STEP.replace("self.state[p]", "{}")) == []


def test_a_cast_to_a_float8_dtype_is_no_move():
    # GPTQModel's tests (blind sample of set 28): `src.to(torch.float8_e4m3fn)` changes the dtype,
    # so the CPU tensor it makes meets only CPU tensors
    code = """import torch
def test_dequantize():
    fp8 = torch.randn(4, 6).to(torch.float8_e4m3fn)
    scale_inv = torch.arange(1, 5, dtype=torch.float32)
    return fp8.to(torch.bfloat16) / scale_inv.view(-1, 1)
"""
    assert tdv201(code) == []
    moved = code.replace("torch.float8_e4m3fn", "device").replace("test_dequantize()", "dequantize_on(device)")
    assert tdv201(moved) == [(4, 16, "TDV201")]


def test_padding_amounts_made_as_tensors_are_read_as_numbers():
    # an old U-Net (Med-Noisy-Labels, blind sample of set 28): the sizes' differences become
    # 1-element CPU tensors, which F.pad reads as Python numbers
    code = """import torch
import torch.nn as nn
import torch.nn.functional as F
class Up(nn.Module):
    def forward(self, y, skip):
        diffY = torch.tensor([skip.size()[2] - y.size()[2]])
        diffX = torch.tensor([skip.size()[3] - y.size()[3]])
        y = F.pad(y, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        return torch.cat([skip, y], dim=1)
"""
    assert tdv201(code) == []
    # combined with the input, the same tensors mix devices
    assert tdv201(code.replace("y = F.pad(y, [", "y = y + torch.cat([")) == [(6, 16, "TDV201"), (7, 16, "TDV201")]


def test_the_numbers_a_size_getter_returns():
    # torchvision-style detection transforms (yolort, blind sample of set 28): a random ratio
    # scales the image's size, which `get_image_size` returns as Python numbers
    code = """import torch
import torch.nn as nn
class RandomZoomOut(nn.Module):
    def forward(self, image, target=None):
        orig_w, orig_h = get_image_size(image)
        r = self.side_range[0] + torch.rand(1) * (self.side_range[1] - self.side_range[0])
        canvas_width = int(orig_w * r)
        return image, canvas_width
"""
    assert tdv201(code) == []
    assert tdv201(code.replace("get_image_size(image)", "image.unbind(0)")) == [(6, 33, "TDV201")]


def test_a_tensor_filled_by_helpers_then_moved_before_it_is_returned():
    # seq2seq_with_qcfg's RNNG (blind sample of set 28): the action mask is built on the CPU,
    # filled by the action dictionary's helpers, then moved to the stack's device
    code = """import torch
import torch.nn as nn
class RNNG(nn.Module):
    def valid_action_mask(self, items, sent_len):
        mask = torch.ones((len(items), self.num_actions), dtype=torch.uint8)
        for b, item in enumerate(items):
            if item.state.pointer == sent_len:
                self.action_dict.mask_shift(mask, b)
        mask = mask.to(items[0].state.stack[0].device)
        return mask
"""
    assert tdv201(code) == []
    assert tdv201(code.replace("mask = mask.to(items[0].state.stack[0].device)", "mask = mask.cpu()")) \
        == [(5, 15, "TDV201")]


HOST_ONLY_TEST = """import torch
def pack_rows(values: torch.Tensor):
    packed = torch.zeros((values.shape[0] // 8, values.shape[1]), dtype=torch.int32)
    return packed * values[::8].to(torch.int32)
"""


@pytest.mark.parametrize("path", ["tests/test_pack.py", "pkg/tests/utils.py", "test_pack.py", "pack_test.py",
                                  "tests/conftest.py"])
def test_a_test_file_that_never_names_a_device(path):
    # GPTQModel's CPU-only tests (blind sample of set 28): nothing there leaves the CPU
    assert lint_source(HOST_ONLY_TEST, path, Options(enabled=ONLY)) == []
    # a cast to a Python type names no device (anomalib's metric tests)
    cast = HOST_ONLY_TEST.replace("values[::8].to(torch.int32)", "values[::8].to(int)")
    assert lint_source(cast, path, Options(enabled=ONLY)) == []


@pytest.mark.parametrize("path, code", [
    ("pack.py", HOST_ONLY_TEST),  # not a test
    ("tests/test_pack.py", HOST_ONLY_TEST + "DEVICE = 'cuda'\n"),
    ("tests/test_pack.py", HOST_ONLY_TEST.replace("values[::8].to(torch.int32)", "values[::8].to(x)")),
])
def test_a_test_file_that_names_a_device_or_code_that_is_no_test(path, code):
    assert [(f.line, f.col) for f in lint_source(code, path, Options(enabled=ONLY))] == [(3, 13)]
