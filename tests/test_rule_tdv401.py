"""TDV401 wrap-before-move: DataParallel / DistributedDataParallel wrapping a module
that is not on its device yet (reported at the start of the wrapper call)."""

from __future__ import annotations

import pytest

from conftest import lint
from flake8_torchdevice.rules import select_codes

ONLY = frozenset({"TDV401"})


def tdv401(code: str, **options):
    return lint(code, enabled=ONLY, **options)


REPORTED = {
    # one arm of the conditional expression leaves the module where it was built
    "placed on one arm of a conditional expression only": (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nfrom models import Synth\n"
        "def run(rank, device, big):\n    net = (Synth(4).cuda(rank)\n           if big\n           else Synth(4))\n"
        "    if torch.cuda.is_available():\n        net = DDP(net, device_ids=[rank])\n    else:\n"
        "        net = net.to(device)\n    return net\n", [(9, 14)]),
    # deep-learning-for-image-processing's SSD: the file's builder returns the model it made, unmoved
    "built by a function of the file that returns it unmoved": (
        "import torch\nimport torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "class Net(nn.Module):\n    pass\n"
        "def create_model(n, device):\n    model = Net()\n    model.load_state_dict(torch.load('w.pt', map_location=device))\n"
        "    return model\n"
        "def main(gpu, device):\n    model = create_model(3, device)\n    model = DDP(model, device_ids=[gpu])\n",
        [(12, 12)]),
    "import torch.nn as nn": ("import torch.nn as nn\nmodel = Net()\nmodel = nn.DataParallel(model)\n", [(3, 8)]),
    "from torch import nn": ("from torch import nn\nmodel = Net()\nmodel = nn.DataParallel(model)\n", [(3, 8)]),
    "from torch.nn import DataParallel as DP": (
        "from torch.nn import DataParallel as DP\nmodel = Net()\nmodel = DP(model)\n", [(3, 8)]),
    "from torch.nn.parallel import DataParallel": (
        "from torch.nn.parallel import DataParallel\nmodel = Net()\nmodel = DataParallel(model)\n", [(3, 8)]),
    "torch.nn.parallel.DataParallel": (
        "import torch\nmodel = Net()\nmodel = torch.nn.parallel.DataParallel(model)\n", [(3, 8)]),
    "DDP alias with device_ids": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\n"
        "ddp = DDP(model, device_ids=[rank])\n", [(3, 6)]),
    "DDP with output_device": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\n"
        "ddp = DDP(model, output_device=rank)\n", [(3, 6)]),
    "DDP full path in a function": (
        "import torch\ndef main(rank):\n    model = Net()\n"
        "    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])\n", [(4, 11)]),
    "DDP imported inside the function": (
        "def main(rank):\n    from torch.nn.parallel import DistributedDataParallel as DDP\n    model = Net()\n"
        "    return DDP(model, device_ids=[rank])\n", [(4, 11)]),
    "nn imported inside the function": (
        "def main(x):\n    import torch.nn as nn\n    model = Net()\n    net = nn.DataParallel(model)\n"
        "    return net(x)\n", [(4, 10)]),
    "module= keyword": ("import torch.nn as nn\nmodel = Net()\nmodel = nn.DataParallel(module=model)\n", [(3, 8)]),
    "device_ids given": (
        "import torch.nn as nn\nmodel = Net()\nmodel = nn.DataParallel(model, device_ids=[0, 1])\n", [(3, 8)]),
    "built in place": ("import torch as th\nmodel = th.nn.DataParallel(Net())\n", [(2, 8)]),
    "train() is no move": (
        "import torch.nn as nn\nmodel = Net()\nmodel.train()\nmodel = nn.DataParallel(model)\n", [(4, 8)]),
    # A sub-module wrapped in `__init__` of a model that the file builds and runs unmoved.
    "sub-module wrapped in __init__": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.enc = Enc()\n        self.enc = nn.DataParallel(self.enc)\n"
        "model = M().eval()\nout = model(x)\n", [(6, 19)]),
    "sub-module built in place in __init__": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.enc = nn.DataParallel(Enc())\n    def forward(self, x):\n        return self.enc(x)\n"
        "def main(x):\n    model = M()\n    return model(x)\n", [(5, 19)]),
    "sub-module, model run before its move": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.enc = nn.DataParallel(Enc())\n"
        "def main(x, device):\n    model = M()\n    y = model(x)\n    model.to(device)\n    return y\n", [(5, 19)]),
    # A wrapper of a module built here, returned to a caller of the file that runs it unmoved.
    "DataParallel returned to a caller that runs it": (
        "import torch.nn as nn\ndef make():\n    return nn.DataParallel(Net())\ndef main(x):\n    net = make()\n"
        "    return net(x)\n", [(3, 11)]),
    "DataParallel returned by name to module-level code that runs it": (
        "import torch.nn as nn\ndef make():\n    net = nn.DataParallel(Net())\n    return net\n"
        "model = make()\nout = model(x)\n", [(3, 10)]),
    # Placement per path: moved on one arm only, the wrap runs on the other.
    "moved on one branch only": (
        "import torch.nn as nn\ndef f(args):\n    model = Net()\n    if args.cuda:\n        model.cuda()\n"
        "    model = nn.DataParallel(model)\n", [(6, 12)]),
    "moved on one branch of an elif chain": (
        "import torch.nn as nn\ndef f(args, d):\n    model = Net()\n    if args.cuda:\n        model.cuda()\n"
        "    elif args.other:\n        model.to(d)\n    model = nn.DataParallel(model)\n", [(8, 12)]),
    "moved under a flag that a user can turn off": (
        "import torch\nimport torch.nn as nn\nuse_cuda = not args.no_cuda and torch.cuda.is_available()\n"
        "model = Net()\nif use_cuda:\n    model.cuda()\nmodel = nn.DataParallel(model)\n", [(7, 8)]),
    "DDP, moved on one branch only": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\ndef f(args, rank):\n    model = Net()\n"
        "    if args.cuda:\n        model.cuda(rank)\n    return DDP(model, device_ids=[rank])\n", [(6, 11)]),
    # The wrapper's own fate: moved to the CPU, then run, handed out or stored.
    "DataParallel of a moved module, moved to the cpu, then run": (
        "import torch.nn as nn\ndef f(x, device):\n    model = Net().to(device)\n    model = nn.DataParallel(model)\n"
        "    model.cpu()\n    return model(x)\n", [(4, 12)]),
    "DataParallel moved to the cpu by assignment, then returned": (
        "import torch.nn as nn\ndef f(x, model):\n    model = nn.DataParallel(model)\n    model = model.to('cpu')\n"
        "    return model\n", [(3, 12)]),
    "DataParallel moved to the cpu, then stored": (
        "import torch.nn as nn\nclass T:\n    def setup(self, model):\n        model = nn.DataParallel(model)\n"
        "        model.cpu()\n        self.model = model\n", [(4, 16)]),
    "DataParallel of an inline move, moved to the cpu, then run": (
        "import torch.nn as nn\ndef f(x, model, device):\n    net = nn.DataParallel(model.to(device))\n"
        "    net = net.cpu()\n    return net(x)\n", [(3, 10)]),
    "module moved to the cpu under its DataParallel, then the wrapper run": (
        "import torch.nn as nn\ndef f(x, model):\n    net = nn.DataParallel(model)\n    model.cpu()\n"
        "    y = model(x)\n    return net(x)\n", [(3, 10)]),
    "DataParallel stored on self, moved to the cpu, then run": (
        "import torch.nn as nn\nclass T:\n    def setup(self, net, x):\n        self.net = nn.DataParallel(net)\n"
        "        self.net.cpu()\n        return self.net(x)\n", [(4, 19)]),
    "attribute built in a method": (
        "import torch.nn as nn\nclass Trainer:\n    def setup(self):\n        self.model = Net()\n"
        "        self.model = nn.DataParallel(self.model)\n", [(5, 21)]),
    "comprehension": (
        "import torch.nn as nn\nmodel = Net()\nwrapped = [nn.DataParallel(model) for _ in range(2)]\n", [(3, 11)]),
    "lambda": ("import torch.nn as nn\nmodel = Net()\nf = lambda: nn.DataParallel(model)\n", [(3, 12)]),
    "moved in another function": (
        "import torch.nn as nn\ndef f():\n    model = Net()\n    model.to(device)\ndef g(x):\n    model = Net()\n"
        "    net = nn.DataParallel(model)\n    return net(x)\n", [(7, 10)]),
    # DistributedDataParallel settles devices when it is built: a later move is too late.
    "DDP, module moved after the wrap": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\n"
        "model = DDP(model, device_ids=[0])\nmodel = model.to(device)\n", [(3, 8)]),
    "DDP of a parameter moved after the wrap": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\ndef f(model, device):\n"
        "    ddp = DDP(model)\n    model.to(device)\n    return ddp\n", [(3, 10)]),
    "DDP of an attribute moved after the wrap": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nclass T:\n    def go(self):\n"
        "        self.model = DDP(self.model)\n        self.model.to(self.device)\n", [(4, 21)]),
    # Guards never silence TDV401: the wrap breaks on GPU machines, where they are true.
    "DataParallel under a flag, never moved": (
        "import torch.nn as nn\nmodel = Net()\nif use_cuda:\n    model = nn.DataParallel(model)\n", [(4, 12)]),
    "DDP under is_available, moved after": (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nif torch.cuda.is_available():\n"
        "    net = Net()\n    net = DDP(net, device_ids=[0])\n    net.to(0)\n", [(5, 10)]),
    "DDP under device_count, built in place": (
        "import torch\nif torch.cuda.device_count() > 1:\n"
        "    ddp = torch.nn.parallel.DistributedDataParallel(Net(), device_ids=[rank])\n", [(3, 10)]),
    # DataParallel still uses every visible GPU: its module must not go to the CPU.
    "DataParallel moved to the cpu inline": (
        "import torch.nn as nn\nmodel = nn.DataParallel(Net()).cpu()\n", [(2, 8)]),
    "DataParallel moved to the cpu after eval()": (
        "import torch.nn as nn\nnet = nn.DataParallel(Net()).eval().cpu()\n", [(2, 6)]),
    "DataParallel moved to the cpu later": (
        "import torch.nn as nn\ndef f(model):\n    net = nn.DataParallel(model)\n    net.to('cpu')\n"
        "    return net\n", [(3, 10)]),
    # A class of the file that moves nothing while it is built is still on the CPU.
    "class of the file that moves nothing": (
        "import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2).float()\n"
        "model = Net()\nddp = DDP(model, device_ids=[rank])\n", [(8, 6)]),
    "class of the file that moves itself to the cpu": (
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n        self.to('cpu')\n"
        "model = nn.DataParallel(Net())\n", [(7, 8)]),
    "DataParallel used for a forward only": (
        "import torch.nn as nn\ndef evaluate(x):\n    net = nn.DataParallel(Net())\n    return net(x).argmax(1)\n",
        [(3, 10)]),
    "DDP of self.model built in __init__": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nclass Loop:\n"
        "    def __init__(self, rank):\n        self.model = Net()\n"
        "        self.ddp = DDP(self.model, device_ids=[rank])\n", [(5, 19)]),
    "try/except is no guard": (
        "import torch.nn as nn\ntry:\n    model = Net()\n    model = nn.DataParallel(model)\nexcept RuntimeError:\n"
        "    pass\n", [(4, 12)]),
    # a helper's module may be moved already, but moving the wrapper right after says it was not
    "helper's module, DDP moved as it is wrapped": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\ndef main(cfg):\n"
        "    model = build_detector(cfg.model)\n    model = DDP(model).cuda()\n", [(4, 12)]),
    "helper's module, DDP wrapper moved later": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\ndef main(cfg, device):\n"
        "    model = build_model(cfg)\n    ddp = DDP(model)\n    ddp.to(device)\n    return ddp\n", [(4, 10)]),
    # nekRS-ML's XPU workaround: to the CPU for the wrap, back to the device after it
    "moved to the CPU for the wrap, to its device after it": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nclass Trainer:\n"
        "    def __init__(self, device):\n        self.model = self.build_model()\n        self.model.to(device)\n"
        "        self.model.to('cpu')\n        self.model = DDP(self.model)\n        self.model.to(device)\n",
        [(7, 21)]),
    # neuraloperator's training scripts: get_model(config) dispatches to a registry and moves nothing
    "built by a function that moves nothing": (
        "import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def create_model(cfg):\n    arch = cfg['arch']\n    return REGISTRY[arch](**cfg)\n"
        "def main(gpu, cfg):\n    model = create_model(cfg)\n    model = DDP(model, device_ids=[gpu])\n", [(8, 12)]),
    # EasyOCR's get_detector: told the device, it builds, wraps and returns the detector unmoved
    "built, wrapped and returned unmoved by a function told the device": (
        "import torch\ndef get_detector(path, device='cpu'):\n    net = CRAFT()\n    if device == 'cpu':\n"
        "        net.load_state_dict(torch.load(path, map_location=device))\n    else:\n"
        "        net = torch.nn.DataParallel(net)\n    net.eval()\n    return net\n", [(7, 14)]),
    # HugsVision's trainer: force_cpu sets the device to "cpu", and the wrapper follows it there
    "wrapper moved to a device the user may have set to the CPU": (
        "import torch\nclass T:\n    def __init__(self, model, force_cpu=False):\n        if force_cpu:\n"
        "            self.device = 'cpu'\n        else:\n            self.device = torch.device('cuda:0')\n"
        "        self.model = torch.nn.DataParallel(model).to(self.device)\n", [(8, 21)]),
    "OpenMMLab's DDP subclass": (
        "from mmcv.parallel import MMDistributedDataParallel\ndef main(cfg):\n    model = Detector(cfg)\n"
        "    model = MMDistributedDataParallel(model, device_ids=[0])\n", [(4, 12)]),
    "DataParallel over two listed devices": (
        "import torch.nn as nn\nmodel = nn.DataParallel(Net(), device_ids=[0, 1])\n", [(2, 8)]),
    # a project template's setup_device: every other path moves the caller's module, the
    # DataParallel path forgets to
    "handed-in module moved on the other arm only": (
        "import torch.nn as nn\ndef setup(model, gpus, device):\n    if len(gpus) > 1:\n"
        "        model = nn.DataParallel(model, device_ids=gpus)\n    else:\n        model = model.to(device)\n"
        "    return model, device\n", [(4, 16)]),
    "handed-in module moved on an earlier arm that returns": (
        "import torch.nn as nn\ndef setup(model, gpus, device):\n    if not gpus:\n"
        "        return model.to('cpu')\n    if len(gpus) == 1:\n        return model.to(device)\n"
        "    return nn.DataParallel(model, device_ids=gpus)\n", [(7, 11)]),
    # a CPU copy of the ImageNet script: the GPU arms move the model, the DataParallel arm lost its .cuda()
    "the other arms move it, the wrap's arm hands the wrapper on": (
        "import torch\nimport torch.nn as nn\ndef main_worker(gpu, args):\n    model = models.__dict__[args.arch]()\n"
        "    if not torch.cuda.is_available():\n        print('cpu')\n    elif args.gpu is not None:\n"
        "        model = model.cuda(args.gpu)\n    else:\n        model = nn.DataParallel(model)\n"
        "    train(model)\n", [(10, 16)]),
    "returned in its arm, moved in the other": (
        "import torch.nn as nn\ndef setup(model, gpus, device):\n    if len(gpus) > 1:\n"
        "        model = nn.DataParallel(model, device_ids=gpus)\n        return model\n"
        "    model.cuda()\n    return model\n", [(4, 16)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv401(code) == [(line, col, "TDV401") for line, col in expected]


NOT_REPORTED = {
    # GPT-SoVITS' s2_train: placed on both arms, or on the one that runs where CUDA is
    "placed on both arms of a conditional expression": (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nfrom models import Synth\n"
        "def run(rank, device, big):\n    net = (Synth(4).cuda(rank)\n           if torch.cuda.is_available()\n           else Synth(4).to(device))\n"
        "    if torch.cuda.is_available():\n        net = DDP(net, device_ids=[rank])\n    else:\n"
        "        net = net.to(device)\n    return net\n"),
    "placed on the arm that runs where CUDA is": (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nfrom models import Synth\n"
        "def run(rank, device, big):\n    net = (Synth(4).cuda(rank)\n           if torch.cuda.is_available()\n           else Synth(4))\n"
        "    if torch.cuda.is_available():\n        net = DDP(net, device_ids=[rank])\n    else:\n"
        "        net = net.to(device)\n    return net\n"),
    "built by a function of the file that moves it": (
        "import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "class Net(nn.Module):\n    pass\n"
        "def create_model(device):\n    model = Net()\n    model.to(device)\n    return model\n"
        "def main(gpu, device):\n    model = create_model(device)\n    model = DDP(model, device_ids=[gpu])\n"),
    # pix2pixHD: `initialize()` builds the networks and moves them; the builder returns the module it set up
    "built by a function that sets it up with its own method": (
        "import torch.nn as nn\nclass Net(nn.Module):\n    pass\n"
        "def create_model(opt):\n    model = Net()\n    model.initialize(opt)\n    return model\n"
        "model = create_model(opt)\nmodel = nn.DataParallel(model)\n"),
    "built by a function that may move it": (
        "import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def create_model(cfg):\n    model = REGISTRY.build(cfg)\n    load_weights(model, cfg.path)\n    return model\n"
        "def main(gpu, cfg):\n    model = create_model(cfg)\n    model = DDP(model, device_ids=[gpu])\n"),
    "built by a function told the device": (
        "import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def create_model(cfg, device):\n    return REGISTRY.build(cfg, device)\n"
        "def main(gpu, cfg):\n    model = create_model(cfg, gpu)\n    model = DDP(model, device_ids=[gpu])\n"),
    "moved before, statement": "import torch.nn as nn\nmodel = Net()\nmodel.to(device)\nmodel = nn.DataParallel(model)\n",
    "moved before, assignment": "import torch.nn as nn\nmodel = Net().to(device)\nmodel = nn.DataParallel(model)\n",
    "moved before with cuda()": "import torch.nn as nn\nmodel = Net()\nmodel.cuda()\nmodel = nn.DataParallel(model)\n",
    "moved in a branch, wrapped under the same guard": (
        "import torch.nn as nn\ndef f(args):\n    model = Net()\n    if args.gpu:\n        model.cuda()\n"
        "        model = nn.DataParallel(model)\n    return model\n"),
    "moved on both arms": (
        "import torch.nn as nn\ndef f(args, device):\n    model = Net()\n    if args.cuda:\n        model.to(device)\n"
        "    else:\n        model.to(device)\n    model = nn.DataParallel(model)\n"),
    "moved on every arm of an elif chain": (
        "import torch.nn as nn\ndef f(args, d):\n    model = Net()\n    if args.cuda:\n        model.cuda()\n"
        "    elif args.other:\n        model.to(d)\n    else:\n        model.to(d)\n    model = nn.DataParallel(model)\n"),
    "the arm that does not move exits": (
        "import torch.nn as nn\ndef f(args):\n    model = Net()\n    if args.cuda:\n        model.cuda()\n"
        "    else:\n        raise SystemExit('needs a GPU')\n    model = nn.DataParallel(model)\n"),
    # Without CUDA, DataParallel runs the module as it is: the arm that skips the move is fine.
    "moved when CUDA is available": (
        "import torch\nimport torch.nn as nn\nmodel = Net()\nif torch.cuda.is_available():\n    model.cuda()\n"
        "model = nn.DataParallel(model)\n"),
    "moved under a flag bound from is_available": (
        "import torch\nimport torch.nn as nn\nuse_cuda = torch.cuda.is_available()\nmodel = Net()\nif use_cuda:\n"
        "    model.cuda()\nmodel = nn.DataParallel(model)\n"),
    "moved when device_count() > 0": (
        "import torch\nimport torch.nn as nn\nmodel = Net()\nif torch.cuda.device_count() > 0:\n    model.cuda()\n"
        "model = nn.DataParallel(model)\n"),
    # Built by something that moves it: moved before the wrap.
    "built by a function of the file that returns it moved": (
        "import torch.nn as nn\ndef build_model(cfg):\n    model = Net(cfg)\n    return model.cuda()\n"
        "def main(cfg, x):\n    model = build_model(cfg)\n    model = nn.DataParallel(model)\n    return model(x)\n"),
    "DDP of a module a function of the file moved, moved again after": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\ndef build_model(cfg, device):\n"
        "    model = Net(cfg)\n    model.to(device)\n    return model\ndef main(cfg, rank):\n"
        "    model = build_model(cfg, rank)\n    ddp = DDP(model, device_ids=[rank])\n    model.to(rank)\n    return ddp\n"),
    "DDP of a class of the file that moves itself": (
        "import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "class Net(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n        self.to(device)\ndef main(rank):\n    model = Net(rank)\n"
        "    ddp = DDP(model, device_ids=[rank])\n    model.to(rank)\n    return ddp\n"),
    # The wrapper moved to the CPU but never run after: saving it is fine.
    "DataParallel moved to the cpu to be saved": (
        "import torch\nimport torch.nn as nn\ndef f(model, path):\n    model = nn.DataParallel(model)\n"
        "    model.cpu()\n    torch.save(model.state_dict(), path)\n    torch.save(model, path)\n"),
    "module moved to the cpu under its DataParallel, then run alone": (
        "import torch.nn as nn\ndef f(x, model):\n    net = nn.DataParallel(model)\n    model.cpu()\n"
        "    return model(x)\n"),
    "DataParallel moved to the cpu and back": (
        "import torch.nn as nn\ndef f(model, x, device):\n    model = nn.DataParallel(model)\n    model.cpu()\n"
        "    model.to(device)\n    return model(x)\n"),
    # A sub-module wrapped in __init__: the code that builds the model decides.
    "sub-module of a model never built in the file": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.enc = nn.DataParallel(Enc())\n"),
    "sub-module of a model moved before it runs": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.enc = nn.DataParallel(Enc())\ndef main(x, device):\n    model = M()\n    model.to(device)\n"
        "    return model(x)\n"),
    "sub-module of a model handed to a helper": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.enc = nn.DataParallel(Enc())\ndef main(x):\n    model = M()\n    train(model, x)\n"),
    "sub-module of a model that moves itself": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
        "        self.enc = nn.DataParallel(Enc())\n        self.to(device)\ndef main(x, d):\n    model = M(d)\n"
        "    return model(x)\n"),
    "inline move": "import torch.nn as nn\nmodel = Net()\nmodel = nn.DataParallel(model.to(device))\n",
    "inline move of a new module": "import torch.nn as nn\nmodel = nn.DataParallel(Net().to(device))\n",
    "DDP of an inline move": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nddp = DDP(Net().to(rank), device_ids=[rank])\n"),
    "DDP without device_ids (CPU training)": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\nddp = DDP(model)\n"),
    "DDP of a built module without device_ids": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\nddp = DDP(Net())\n"),
    "parameter not moved here": "import torch.nn as nn\ndef f(model):\n    return nn.DataParallel(model)\n",
    "parameter moved before": (
        "import torch.nn as nn\ndef f(model, device):\n    model = model.to(device)\n    return nn.DataParallel(model)\n"),
    "__init__ parameter": (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self, enc):\n        super().__init__()\n"
        "        self.enc = nn.DataParallel(enc)\n"),
    "factory result": "import torch.nn as nn\nmodel = nn.DataParallel(build())\n",
    "guarded by device_count": (
        "import torch\nmodel = Net()\nif torch.cuda.device_count() > 1:\n    model = torch.nn.DataParallel(model)\n"
        "model = model.to(device)\n"),
    # DataParallel checks devices at its first forward: moving the wrapper is enough.
    "DataParallel moved after the wrap": (
        "import torch.nn as nn\nmodel = Net()\nmodel = nn.DataParallel(model)\nmodel = model.to(device)\n"),
    "DataParallel of a parameter, moved after": (
        "import torch.nn as nn\ndef f(model, device):\n    model = nn.DataParallel(model)\n"
        "    model.to(device)\n    return model\n"),
    "DataParallel of an attribute, moved after": (
        "import torch.nn as nn\nclass T:\n    def go(self):\n        self.model = nn.DataParallel(self.model)\n"
        "        self.model.to(self.device)\n"),
    "DataParallel moved inline (pytorch/examples ImageNet)": (
        "import torch\nmodel = Net()\nmodel = torch.nn.DataParallel(model).cuda()\n"),
    "DataParallel built in place, moved inline": "import torch.nn as nn\nnet = nn.DataParallel(Net()).to(device)\n",
    # Research code (BasicSR's FID scripts): `.eval()` returns the same wrapper.
    "DataParallel moved inline after eval()": (
        "import torch.nn as nn\nnet = Inception()\nnet = nn.DataParallel(net).eval().to(device)\n"),
    "inner module moved after the wrap": (
        "import torch.nn as nn\nmodel = Net()\nnet = nn.DataParallel(model)\nmodel.cuda()\n"),
    "DataParallel in the else arm of a CUDA test": (
        "import torch\nimport torch.nn as nn\nmodel = Net()\nif torch.cuda.is_available():\n    model.cuda()\nelse:\n"
        "    model = nn.DataParallel(model)\n"),
    "DataParallel when CUDA is absent": (
        "import torch\nimport torch.nn as nn\nmodel = Net()\nif not torch.cuda.is_available():\n"
        "    model = nn.DataParallel(model)\n"),
    # PyTorch's DDP tests: a model whose constructor puts its layers on the rank's GPU.
    "class of the file moves its layers while built (local class)": (
        "import torch\nimport torch.nn as nn\ndef test(rank):\n    class Net(nn.Module):\n"
        "        def __init__(self, rank):\n            super().__init__()\n"
        "            self.fc = nn.Linear(10, 10).cuda(rank)\n"
        "    model = Net(rank)\n"
        "    return torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])\n"),
    "class of the file moves itself in a helper __init__ calls": (
        "import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "class Net(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n        self._place(device)\n"
        "    def _place(self, device):\n        self.to(device)\n"
        "def main(rank):\n    return DDP(Net(rank), device_ids=[rank])\n"),
    "subclass of a class of the file that moves itself": (
        "import torch.nn as nn\nclass Base(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2).to(DEVICE)\nclass Net(Base):\n    pass\n"
        "model = nn.DataParallel(Net())\n"),
    # A wrapper handed out may be moved by whoever gets it (stargan-v2's build_model).
    "DataParallel returned": "import torch.nn as nn\ndef make():\n    return nn.DataParallel(Net())\n",
    "DataParallel returned to a caller that moves it first": (
        "import torch.nn as nn\ndef make():\n    return nn.DataParallel(Net())\ndef main(x, device):\n    net = make()\n"
        "    net.to(device)\n    return net(x)\n"),
    "DataParallel of a parameter returned to a caller that runs it": (
        "import torch.nn as nn\ndef make(model):\n    return nn.DataParallel(model)\ndef main(x):\n    net = make(Net())\n"
        "    return net(x)\n"),
    "DataParallel returned by a method": (
        "import torch.nn as nn\nclass B:\n    def make(self):\n        return nn.DataParallel(Net())\n"
        "def make():\n    pass\nnet = make()\nout = net(x)\n"),
    "DataParallel returned by name": (
        "import torch.nn as nn\ndef make():\n    net = nn.DataParallel(Net())\n    return net\n"),
    "DataParallel returned in a dict": (
        "import torch.nn as nn\ndef make():\n    g = nn.DataParallel(Net())\n    d = nn.DataParallel(Net())\n"
        "    return {'g': g, 'd': d}\n"),
    "DataParallel stored on another object (stargan-v2's nets.fan)": (
        "import torch.nn as nn\ndef make(nets):\n    fan = nn.DataParallel(Net().eval())\n    nets.fan = fan\n"
        "    nets['g'] = nn.DataParallel(Net())\n    return nets\n"),
    "DataParallel passed to a helper": (
        "import torch.nn as nn\ndef main(loader):\n    net = nn.DataParallel(Net())\n    train(net, loader)\n"),
    # guided-diffusion's TrainLoop: the caller's model, stored on self, then wrapped.
    "DDP of self.model bound from a parameter in __init__": (
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\nclass Loop:\n"
        "    def __init__(self, model, rank):\n        self.model = model\n"
        "        self.ddp = DDP(self.model, device_ids=[rank])\n"),
    "not torch's DataParallel": "DataParallel = lambda m: m\nmodel = Net()\nmodel = DataParallel(model)\n",
    # with one device, DataParallel moves the module there itself (seen on a one-GPU H200)
    "DataParallel given one device": (
        "import torch.nn as nn\ndef main(args):\n    model = nn.DataParallel(Net(), device_ids=[args.gpu])\n"
        "    return model(x)\nm = nn.DataParallel(Net(), [0])\n"),
    "handed-in module, DDP moved as it is wrapped": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\ndef wrap(model):\n"
        "    return DDP(model).cuda()\n"),
    "helper's module wrapped with device_ids and not moved": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\ndef main(cfg, rank):\n"
        "    model = build_model(cfg)\n    return DDP(model, device_ids=[rank])\n"),
    "moved to the CPU, then rebound to a module moved to its device": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\ndef main(device):\n"
        "    model = build()\n    model.cpu()\n    model = build().cuda()\n    model = DDP(model)\n"
        "    model.to(device)\n"),
    "CPU training under DDP": (
        "from torch.nn.parallel import DistributedDataParallel as DDP\ndef main():\n"
        "    model = build()\n    model.cpu()\n    model = DDP(model)\n    return model\n"),
    "built, wrapped, moved and returned by a function told the device": (
        "import torch\ndef get_detector(path, device):\n    net = CRAFT()\n    net = torch.nn.DataParallel(net)\n"
        "    net.to(device)\n    return net\n"),
    "built, wrapped and returned by a function told nothing": (
        "import torch\ndef get_detector(path):\n    net = CRAFT()\n    net = torch.nn.DataParallel(net)\n"
        "    return net\n"),
    "wrapper moved to a device set to the CPU only where CUDA is absent": (
        "import torch\nclass T:\n    def __init__(self, model):\n        if torch.cuda.is_available():\n"
        "            self.device = torch.device('cuda:0')\n        else:\n            self.device = 'cpu'\n"
        "        self.model = torch.nn.DataParallel(model).to(self.device)\n"),
    "wrapper moved to a device set to the CPU, then to a GPU": (
        "import torch\ndef setup(model):\n    device = 'cpu'\n    device = 'cuda:0'\n"
        "    return torch.nn.DataParallel(model).to(device)\n"),
    "rebound nn": "import torch.nn as nn\nnn = fake\nmodel = Net()\nmodel = nn.DataParallel(model)\n",
    "handed-in module moved on every path": (
        "import torch.nn as nn\ndef setup(model, gpus, device):\n    if len(gpus) > 1:\n"
        "        model = nn.DataParallel(model, device_ids=gpus)\n    else:\n        model = model.to(device)\n"
        "    model = model.to(device)\n    return model\n"),
    "the other arm moves it, the wrapper handed on and then moved": (
        "import torch.nn as nn\ndef setup(model, gpus, device):\n    if len(gpus) > 1:\n"
        "        model = nn.DataParallel(model)\n        opt = make_optimizer(model)\n        model.to(device)\n"
        "    else:\n        model = model.to(device)\n    return model\n"),
    # ddim's sampler: each arm moves the model before its own wrap
    "each arm moves it before its wrap": (
        "import torch\nimport torch.nn as nn\ndef sample(self):\n    model = Model(self.config)\n"
        "    if not self.args.use_pretrained:\n        model = model.to(self.device)\n"
        "        model = nn.DataParallel(model)\n    else:\n        model.load_state_dict(torch.load(p, map_location='cpu'))\n"
        "        model.to(self.device)\n        model = nn.DataParallel(model)\n    model.eval()\n    run(model)\n"),
    "handed-in module moved to the CPU on the other arm": (
        "import torch.nn as nn\ndef setup(model, gpus):\n    if gpus:\n        model = nn.DataParallel(model)\n"
        "    else:\n        model = model.cpu()\n    return model\n"),
    # the ImageNet example: a part wrapped and the whole model moved, or the wrapper moved
    "part wrapped, whole model moved after": (
        "import torch.nn as nn\ndef setup(model, arch, gpu):\n    if gpu is not None:\n"
        "        model = model.cuda(gpu)\n    elif arch == 'vgg':\n"
        "        model.features = nn.DataParallel(model.features)\n        model.cuda()\n"
        "    else:\n        model = nn.DataParallel(model).cuda()\n    return model\n"),
    "wrapper returned in its arm, moved after the if on the straight path": (
        "import torch.nn as nn\ndef setup(model, fast, device):\n    model = nn.DataParallel(model)\n"
        "    if fast:\n        return model\n    model.to(device)\n    return model\n"),
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv401(code) == []


def test_cuda_move_inside_the_wrap_is_tdv101_only():
    # The seed articles' `nn.DataParallel(model.cuda())`: moved first, but hard-coded.
    assert lint("import torch.nn as nn\nmodel = Net()\nmodel = nn.DataParallel(model.cuda())\n") == [
        (3, 30, "TDV101")]


def test_guard_names_do_not_silence_it():
    code = "import torch.nn as nn\nmodel = Net()\nif HAS_ACCEL:\n    model = nn.DataParallel(model)\n"
    assert tdv401(code) == [(4, 12, "TDV401")]
    assert tdv401(code, guard_names=("HAS_ACCEL",)) == [(4, 12, "TDV401")]


def test_message_names_the_wrapper():
    from flake8_torchdevice.engine import Options, lint_source

    code = ("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\n"
            "ddp = DDP(model, device_ids=[rank])\n")
    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    assert finding.message.startswith("DistributedDataParallel wraps a module")
    assert "device_ids=[rank]" in finding.message


def test_dtype_cast_is_not_a_move():
    code = "import torch.nn as nn\nmodel = Net().float()\nmodel = nn.DataParallel(model)\n"
    assert tdv401(code) == [(3, 8, "TDV401")]


def test_move_chained_on_a_ddp_wrap_comes_too_late():
    # DDP(model).to(device) wraps the unmoved module; DDP checked devices already
    code = ("from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = Net()\n"
            "model = DDP(model, device_ids=[0]).to(device)\n")
    assert tdv401(code) == [(3, 8, "TDV401")]


def test_cpu_move_message_names_the_remedy():
    from flake8_torchdevice.engine import Options, lint_source

    [finding] = lint_source("import torch.nn as nn\nm = nn.DataParallel(Net()).cpu()\n", "t.py", Options(enabled=ONLY))
    assert finding.message.startswith("DataParallel moved to the CPU")


def test_all_capitals_class_is_a_constructor():
    code = "import torch.nn as nn\nm = MLP()\nm = nn.DataParallel(m)\n"
    assert tdv401(code) == [(3, 4, "TDV401")]


@pytest.mark.parametrize("guard", [
    "if torch.cuda.is_available():\n", "if torch.cuda.device_count() > 1:\n", "if use_cuda:\n",
    "if args.gpu is not None:\n", 'if opt["cuda"]:\n',
])
def test_no_guard_form_silences_it(guard):
    code = "import torch\nimport torch.nn as nn\n" + guard + "    m = nn.DataParallel(Net(), device_ids=[0, 1])\n"
    assert tdv401(code) == [(4, 8, "TDV401")]


def test_ddp_without_device_ids_moved_as_it_is_wrapped_comes_too_late():
    """pytorch-lightning's RL example: an annotated build, then `DDP(agent).to(device)`."""
    code = ("from torch.nn.parallel import DistributedDataParallel\ndef main(device):\n"
            "    agent: Agent = Agent()\n    agent = DistributedDataParallel(agent).to(device)\n    return agent\n")
    assert tdv401(code) == [(4, 12, "TDV401")]


def test_ddp_without_device_ids_on_the_cpu_is_cpu_training():
    code = ("from torch.nn.parallel import DistributedDataParallel\ndef main():\n"
            "    agent = Agent()\n    agent = DistributedDataParallel(agent)\n    return agent(3)\n")
    assert tdv401(code) == []


def test_wrapper_returned_on_the_cpu_in_an_arm_a_user_flag_chose():
    """EduNLP's set_device: `ctx == "cpu"` is the user's choice; the GPUs are still there."""
    code = ("from torch.nn import DataParallel\ndef set_device(net, ctx):\n    if ctx == 'cpu':\n"
            "        net = DataParallel(net)\n        return net.cpu()\n    return net\n")
    assert tdv401(code) == [(4, 14, "TDV401")]


def test_wrap_where_cuda_is_certainly_absent_is_a_no_op():
    code = ("import torch\nfrom torch.nn import DataParallel\ndef set_device(net):\n"
            "    if not torch.cuda.is_available():\n        net = DataParallel(net)\n        return net.cpu()\n"
            "    return net\n")
    assert tdv401(code) == []


# neutorch's trainer: a property builds the model, wraps it, loads weights and returns it;
# the class runs `self.model(x)` and nothing moves it
PROPERTY = (
    "from functools import cached_property\nimport torch\nclass Trainer:\n    @cached_property\n"
    "    def model(self):\n        model = Net()\n        if torch.cuda.is_available():\n"
    "            model = torch.nn.DataParallel(model)\n        model = load_chkpt(model, self.path)\n"
    "        return model\n    def step(self, x):\n        save_chkpt(self.model, self.path)\n"
    "        return self.model(x)\n")


def test_property_wrapper_the_class_runs_unmoved():
    assert tdv401(PROPERTY) == [(8, 20, "TDV401")]


@pytest.mark.parametrize("change", [
    ("        return self.model(x)\n", "        self.model.cuda()\n        return self.model(x)\n"),
    ("        return self.model(x)\n", "        return prepare(self.model)(x)\n"),
    ("load_chkpt(model, self.path)", "load_chkpt(model, self.path, self.device)"),
    ("    @cached_property\n", ""),
], ids=["moved by a method", "handed to a call that may move it", "loaded with a device", "not a property"])
def test_property_wrapper_not_reported(change):
    assert tdv401(PROPERTY.replace(*change)) == []


# What the eighth round taught (held-out set 10): fairscale's benchmark moves the model in
# `if kind == "sharded":` and wraps it in `if kind == "ddp" or ...:`, which never runs after the move; a test
# for the same value, or against a variable, may.
ROUND8_CASES = {
    "exclusive_values": ("""
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        def train(rank, kind, get_problem):
            model, loader, loss_fn = get_problem(rank)
            if kind == "sharded":
                model.cuda()
                sharded = Sharded(module=model)
                model = sharded
            if kind == "ddp" or kind == "oss":
                model = DDP(model, device_ids=[rank]).cuda()
            return model
""", [(7, 14, "TDV101"), (11, 16, "TDV401"), (11, 46, "TDV101")]),
    "same_values": ("""
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        def train(rank, kind, get_problem):
            model, loader, loss_fn = get_problem(rank)
            if kind == "ddp":
                model.cuda()
            if kind == "ddp":
                model = DDP(model, device_ids=[rank])
            return model
        def train2(rank, kind, other, get_problem):
            model, loader, loss_fn = get_problem(rank)
            if kind == "sharded":
                model.cuda()
            if kind == other:
                model = DDP(model, device_ids=[rank])
            return model
""", [(7, 14, "TDV101"), (14, 14, "TDV101")]),
}


@pytest.mark.parametrize("code, expected", ROUND8_CASES.values(), ids=list(ROUND8_CASES))
def test_round8_tdv401_shapes(code, expected):
    assert lint(code, enabled=select_codes()) == expected


LIBRARY_MODEL = """\
import torch
import torch.nn as nn
from torchvision import models
def main(loader):
    model = {builder}
    model = nn.DataParallel(model)
    for x, y in loader:
        out = model(x.cuda())
"""


@pytest.mark.parametrize("builder, expected", [
    # torchvision's and timm's builders make the model on the CPU and move it nowhere
    ("models.resnet50(weights=None)", [(6, 12)]),
    ("models.detection.fasterrcnn_resnet50_fpn(num_classes=3)", [(6, 12)]),
    ("timm.create_model('resnet18', pretrained=False)", [(6, 12)]),
    ("models.resnet50().eval()", [(6, 12)]),
    ("models.resnet50().cuda()", []),  # moved before the wrap
    ("timm.create_model(name, **cfg)", []),  # keywords that may carry a device
    ("build_model(name)", []),  # a function nobody knows: it may move the model
])
def test_a_model_built_by_torchvision_or_timm_is_built_here(builder, expected):
    code = LIBRARY_MODEL.format(builder=builder)
    if "timm" in builder:
        code = "import timm\n" + code
        expected = [(line + 1, col) for line, col in expected]
    assert tdv401(code) == [(line, col, "TDV401") for line, col in expected]


PER_PATH = """\
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
def main(args, rank, device):
    model = Net()
{between}
    return DDP(model, device_ids=[rank])
"""


@pytest.mark.parametrize("between, reported", [
    # a module moved (or rebuilt moved) on one arm only is still the CPU one on the other
    ("    if args.resume:\n        model = Net().to(device)", True),
    ("    if args.resume:\n        model = model.to(device)", True),
    # casts and SyncBatchNorm conversion return the same module, still where it was
    ("    model = model.eval().float()", True),
    ("    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)", True),
    ("    net = model\n    model = nn.SyncBatchNorm.convert_sync_batchnorm(net)", True),
    # moved on every arm, or before the conversion
    ("    if args.resume:\n        model = Net().to(device)\n    else:\n        model = model.to(device)", False),
    ("    model.to(device)\n    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)", False),
    ("    model = model.to(device).eval()", False),
    ("    model, head = model.cuda(), Net().cuda()\n    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)", False),
    ("    head, model = Net().cuda(), model.eval()", True),
])
def test_placement_per_path_through_rebinding_and_same_module_calls(between, reported):
    code = PER_PATH.replace("{between}", between)
    line = code.count("\n")
    assert tdv401(code) == ([(line, 11, "TDV401")] if reported else [])


def test_module_handed_in_and_moved_on_one_arm_is_not_reported():
    code = ("from torch.nn.parallel import DistributedDataParallel as DDP\n"
            "def wrap(model, rank, device, resume):\n"
            "    if resume:\n        model = Net().to(device)\n"
            "    return DDP(model, device_ids=[rank])\n")
    assert tdv401(code) == []


def test_module_handed_in_and_converted_in_init_is_not_built_there():
    code = ("import torch.nn as nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
            "class Trainer:\n    def __init__(self, model, rank):\n"
            "        self.model = nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"
            "        self.copy = model\n"
            "        self.model = DDP(self.model, device_ids=[rank])\n"
            "        self.copy = DDP(self.copy, device_ids=[rank])\n")
    assert tdv401(code) == []


OTHER_ARM = """\
from torch.nn.parallel import DistributedDataParallel as DDP
def main(cfg, device, rank{params}):
{build}    if cfg.ddp:
{build_in_arm}        model = DDP(model{ids})
    else:
        model = {other}
    return model
"""


@pytest.mark.parametrize("params, build, build_in_arm, ids, other, reported", [
    # the scope moves the module on its other path: on the DDP path it forgot to
    (", model", "", "", ", device_ids=[rank]", "model.to(device)", True),
    ("", "    model = build(cfg)\n", "", ", device_ids=[rank]", "model.to(device)", True),
    ("", "", "        model = build(cfg)\n", ", device_ids=[rank]", "build(cfg).to(device)", True),
    # without device_ids a CPU module is plain CPU training; moved on neither path, unknown
    ("", "", "        model = build(cfg)\n", "", "build(cfg).to(device)", False),
    (", model", "", "", ", device_ids=[rank]", "model", False),
])
def test_a_module_the_scope_moves_only_on_its_other_path(params, build, build_in_arm, ids, other, reported):
    code = OTHER_ARM.format(params=params, build=build, build_in_arm=build_in_arm, ids=ids, other=other)
    line = code.splitlines().index(f"        model = DDP(model{ids})") + 1
    assert tdv401(code) == ([(line, 16, "TDV401")] if reported else [])


def test_a_pretrained_model_loaded_on_the_cpu_then_wrapped():
    """robust_training's inference: `ResNetModel.from_pretrained(path)` loads on the CPU and
    `DDP(model, device_ids=[rank])` wraps it unmoved. With `device_map=` it is placed."""
    code = ("import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
            "from transformers import ResNetModel\ndef inference(rank):\n"
            "    model = ResNetModel.from_pretrained('/ckpt', local_files_only=True)\n"
            "    model = DDP(model, device_ids=[rank])\n    return model\n")
    assert lint(code, enabled=frozenset({"TDV401"})) == [(6, 12, "TDV401")]
    assert lint(code.replace("local_files_only=True", "device_map={'': rank}"), enabled=frozenset({"TDV401"})) == []
    assert lint(code.replace("    model = DDP", "    model = model.to(rank)\n    model = DDP"),
                enabled=frozenset({"TDV401"})) == []
    # a tokenizer or processor is no module
    assert lint(code.replace("ResNetModel", "AutoTokenizer"), enabled=frozenset({"TDV401"})) == []


# What the sixteenth round taught (MatchZoo's trainer, a measured row): the wrap runs under `if
# self.parallel:` and the move under a later `if not self.parallel:`, so the wrapped module is
# never moved on the path that wraps it. Two `if`s on one flag with opposite truth exclude
# each other; the same truth (or another name) does not.
FLAG_CASES = {
    "wrapped_and_moved_under_opposite_flags": ("""
        import torch
        class Trainer:
            def load(self, model, device=None, parallel=False):
                self.parallel = parallel
                if isinstance(device, list):
                    if self.parallel:
                        self.model = torch.nn.DataParallel(model, device_ids=device)
                    self.device = device[0]
                else:
                    self.device = device
                    if self.parallel:
                        self.model = torch.nn.DataParallel(model)
                if not self.parallel:
                    self.model = model.to(self.device)
        def setup(model, args, device):
            if not args.parallel:
                model.to(device)
            if args.parallel:
                model = torch.nn.DataParallel(model)
            return model
        def setup_else(model, args, device):
            if args.single:
                model.to(device)
            else:
                pass
            if not args.single:
                model = torch.nn.DataParallel(model)
            return model
""", [(8, 29), (13, 29), (20, 16), (28, 16)]),
    "same_flag_or_another_name": ("""
        import torch
        def setup(model, args, device):
            if args.parallel:
                model = torch.nn.DataParallel(model)
            if args.parallel:
                model.to(device)
            return model
        def setup2(model, args, device):
            if not args.other:
                model.to(device)
            if args.parallel:
                model = torch.nn.DataParallel(model)
            return model
""", []),
}


@pytest.mark.parametrize("code, expected", FLAG_CASES.values(), ids=list(FLAG_CASES))
def test_flags_of_opposite_truth_exclude(code, expected):
    assert [(line, col) for line, col, _ in tdv401(code)] == expected


# lobster's script (a measured row): `model, tokenizer = load_model(name)`, a function of the file
# that builds the model with `from_pretrained` and moves nothing, then DDP with device_ids.
UNPACKED_BUILDER = """
    import torch
    from torch.nn.parallel import DistributedDataParallel
    from transformers import AutoModelForCausalLM, AutoTokenizer
    def load_model(name, max_length=512):
        model = AutoModelForCausalLM.from_pretrained(name)
        tokenizer = AutoTokenizer.from_pretrained(name)
        tokenizer.max_length = max_length
        model = model.eval()
        return model, tokenizer
    def main(args, rank):
        model, tokenizer = load_model(args.name)
        return DistributedDataParallel(model, device_ids=[rank])
"""


def test_module_unpacked_from_a_builder_that_moves_nothing():
    assert [(line, col) for line, col, _ in tdv401(UNPACKED_BUILDER)] == [(13, 11)]


@pytest.mark.parametrize("change", [
    ("        return model, tokenizer\n", "        return model.to(0), tokenizer\n"),
    ("    def load_model(name, max_length=512):\n", "    def load_model(name, device, max_length=512):\n"),
    ("        model, tokenizer = load_model(args.name)\n",
     "        model, tokenizer = load_model(args.name)\n        model.to(rank)\n"),
    ("load_model(args.name)", "load_model(args.name, device_map=rank)"),
], ids=["builder moves it", "builder told a device", "moved before the wrap", "keywords may carry a device"])
def test_module_unpacked_from_a_builder_not_reported(change):
    assert tdv401(UNPACKED_BUILDER.replace(*change)) == []


def test_a_part_of_a_module_moved_before_the_wrap():
    # cnn-quantization (blind sample of set 28): the whole model is moved, then its feature
    # extractor is wrapped; the part moved with it
    code = """import torch
class Inference:
    def __init__(self, model, args):
        self.model = model
        self.model.to(args.device)
        self.model.features = torch.nn.DataParallel(self.model.features, args.device_ids)
"""
    assert tdv401(code) == []
    # a sibling of the moved part was not moved
    assert tdv401(code.replace("self.model.to(args.device)", "self.model.classifier.to(args.device)")) \
        == [(6, 30, "TDV401")]


def test_a_module_built_around_the_callers_model():
    # seq2seq.pytorch's trainers (blind sample of set 28): the loss wrapper holds the model the
    # caller handed in (moved there) and no parameters of its own
    code = """import torch
from torch.nn.parallel import DistributedDataParallel
class Trainer:
    def __init__(self, model, criterion, rank):
        self.model = model
        self.model_with_loss = AddLossModule(self.model, criterion)
        self.model_with_loss = DistributedDataParallel(self.model_with_loss, device_ids=[rank])
class NestedTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.model_with_loss = AddLossModule(self.model, self.criterion)
        self.model_with_loss = DistributedDataParallel(self.model_with_loss, device_ids=[self.rank])
"""
    assert tdv401(code) == []
    # a module built here from a configuration is on the CPU
    assert tdv401(code.replace("AddLossModule(self.model, criterion)", "Net(self.config)")) == [(7, 31, "TDV401")]
    # ... also one told what kind of output to give (TAUnSDDM's `model_output=self.model_output`)
    assert tdv401(code.replace("AddLossModule(self.model, criterion)", "Net(model_output=self.model_output)")) \
        == [(7, 31, "TDV401")]


def test_an_engine_built_around_a_model_moved_here():
    # aot-benchmark's trainer (blind sample of set 28): the engine's only sub-module is the
    # model, moved to its GPU before the engine was built around it (handed as a keyword)
    code = """import torch
from torch import nn
class Engine(nn.Module):
    def __init__(self, aot_model, gpu_id):
        super().__init__()
        self.model = aot_model
def build_engine(name, phase, **kwargs):
    return Engine(**kwargs)
class Trainer:
    def __init__(self, cfg, gpu):
        self.model = build_vos_model(cfg).cuda(gpu)
        self.engine = build_engine(cfg, "train", aot_model=self.model, gpu_id=gpu)
        self.dist_engine = torch.nn.parallel.DistributedDataParallel(self.engine, device_ids=[gpu])
"""
    assert tdv401(code) == []
    # a model not moved before the engine is built around it: the engine is on the CPU
    assert tdv401(code.replace("build_vos_model(cfg).cuda(gpu)", "VOSNet(cfg)")) == [(13, 27, "TDV401")]


def test_a_module_moved_under_the_flag_that_guards_its_wrap():
    # ProPainter's trainer (blind sample of set 29): the discriminator is built and moved under
    # `not no_dis`, and wrapped later under the same flag, read with `.get` there
    code = """import torch
from torch.nn.parallel import DistributedDataParallel as DDP
class Trainer:
    def __init__(self, config, net):
        self.config = config
        if not self.config["model"].get("no_dis", False):
            self.netD = net.Discriminator(in_channels=3)
            self.netD = self.netD.to(self.config["device"])
        if config["distributed"]:
            if not self.config["model"]["no_dis"]:
                self.netD = DDP(self.netD, device_ids=[self.config["local_rank"]])
"""
    assert tdv401(code) == []
    # built again on the CPU after the move: the wrap gets the new module
    rebuilt = code.replace('        if config["distributed"]:',
                           '        self.netD = net.Discriminator(in_channels=3)\n        if config["distributed"]:')
    assert tdv401(rebuilt) == [(12, 28, "TDV401")]
    # moved under another flag: a path reaches the wrap unmoved
    other = code.replace('.get("no_dis", False)', '.get("dis_2d", False)')
    assert tdv401(other) == [(11, 28, "TDV401")]
