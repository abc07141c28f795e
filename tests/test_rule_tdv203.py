"""TDV203 discarded-to (reported at the start of the discarded call)."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint
from flake8_torchdevice.rules import select_codes

ONLY = frozenset({"TDV203"})


def tdv203(code: str, **options):
    return lint(code, enabled=ONLY, **options)


def function(body: str, params: str = "model, loader, device") -> str:
    """`def run(<params>):` with `body` starting on line 3 (4 spaces of indent)."""
    return "import torch\ndef run(%s):\n%s" % (params, textwrap.indent(textwrap.dedent(body), "    "))


REPORTED = {
    # torch's functions compute tensors: `torch.max(a, b)` rebinding a tensor keeps it one
    "rebound by torch.max of two tensors": (
        "import torch\ndef largest(loader, device):\n    m = torch.Tensor([0.0])\n    for data in loader:\n"
        "        m = torch.max(m, torch.max(data.edge_attr))\n    m.to(device)\n    return m\n", [(6, 4)]),
    # what the file's functions return is read from the whole file, also the functions
    # the fast path leaves out of the parse (analysis/project.py)
    "attribute from a function of the file": (
        "import torch\ndef subsequent_mask(n):\n    return torch.ones(n, n)\nclass L:\n    def __init__(self):\n"
        "        self.mask = subsequent_mask(5)\n        self.mask.cuda()\n", [(7, 8)]),
    # mozilla/TTS's synthesis: the helper returns its argument (None) or the tensor made of it
    "a helper that returns its argument made a tensor": (
        "import numpy as np\nimport torch\ndef id_to_torch(i):\n    if i is not None:\n"
        "        i = torch.from_numpy(np.asarray(i))\n    return i\n"
        "def run(model, i, use_cuda):\n    i = id_to_torch(i)\n    if use_cuda:\n        i.cuda()\n"
        "    return model(i)\n", [(10, 8)]),
    # DIG's DeepLIFT: an index from **kwargs that `.dim()` shows is a tensor
    # scvi-tools' first trainer: the loader named with its split last, its items wrapped in Variable
    "loader named with its split last, items wrapped in Variable": (
        "import torch\nfrom torch.autograd import Variable\ndef train(vae, data_loader_train):\n"
        "    for i, (x, l) in enumerate(data_loader_train):\n        x = Variable(x)\n"
        "        if torch.cuda.is_available():\n            x.cuda()\n        vae(x, l)\n", [(7, 12)]),
    # SLM-Lab's GAE: the predictions it was given meet the rewards in arithmetic
    # Auto-PyTorch's forecasting decoder: one arm of the choice is a torch.cat
    "one arm of a conditional expression is a tensor": (
        function("d = y if f is None else torch.cat([f, y], dim=-1)\nd.to(device)\nreturn model(d)\n",
                 params="model, f, y, device"), [(4, 4)]),
    # SLM-Lab's batch_to_device: the items of a batch, moved and dropped
    "the items of a batch parameter, looped over": (
        function("for k, v in batch.items():\n    v.to(device)\nreturn batch\n", params="batch, device"), [(4, 8)]),
    "a parameter used in arithmetic": (
        function("v.to('cpu')\nd = r + 0.9 * v[1:] - v[:-1]\nreturn d\n", params="r, v"), [(3, 4)]),
    "a value that .dim() shows is a tensor": (
        function("idx = kwargs.get('idx')\nif not idx.dim():\n    idx = idx.reshape(-1)\nidx.to(device)\n"
                 "return model(idx)\n", params="model, device, **kwargs"), [(6, 4)]),
    "result of a method of the class": (
        "import torch\nclass L:\n    def _mask(self, n):\n        return torch.triu(torch.ones(n, n))\n"
        "    def go(self, n, device):\n        mask = self._mask(n)\n        mask.to(device)\n"
        "        return mask\n", [(7, 8)]),
    "method returning a local it built with a chain": (
        "import torch\nclass E:\n    def __init__(self, d):\n        self.pe = self.table(d, 50)\n"
        "        self.pe.cuda()\n    def table(self, d, n):\n        pe = torch.FloatTensor(n, d).fill_(0)\n"
        "        pe[0, 0] = 1.0\n        return pe\n", [(5, 8)]),
    "function returning the name's last binding": (
        "import numpy as np\nimport torch\ndef causal(n):\n    m = np.triu(np.ones((n, n)), k=1).astype('uint8')\n"
        "    m = torch.from_numpy(m)\n    return m\ndef go(device):\n    mask = causal(5)\n    mask.cuda()\n"
        "    return mask\n", [(9, 4)]),
    "result of a function defined below its caller": (
        "import torch\ndef run(device):\n    t = make(3)\n    t.to(device)\n    return t\n"
        "def make(n):\n    return torch.zeros(n)\n", [(4, 4)]),
    "batch unpacked from a loader": (function("""\
        for x, y in loader:
            x.to(device)
            y.cuda()
            model(x, y)
        """), [(4, 8), (5, 8)]),
    "enumerate of a train_loader": (function("""\
        for i, (images, labels) in enumerate(train_loader):
            images.to(device)
        """), [(4, 8)]),
    "tqdm of a dataloader": (function("""\
        for x, y in tqdm(self.val_dataloader, desc="val"):
            y.to(device, non_blocking=True)
        """), [(4, 8)]),
    "whole batch unpacked afterwards": (function("""\
        for batch in loader:
            x, y = batch
            x.to(device)
        """), [(5, 8)]),
    "factory": (function("""\
        noise = torch.randn(4, 8)
        noise.to(device)
        return model(noise)
        """), [(4, 4)]),
    "tensor op and arithmetic": (function("""\
        z = torch.cat([a, b]) * 2
        z.cpu()
        return z
        """, "a, b"), [(4, 4)]),
    "float chain of a tensor": (function("""\
        t = torch.from_numpy(arr).float()
        t.to(device)
        return t
        """, "arr, device"), [(4, 4)]),
    "annotated parameter": (function("""\
        x.to(device)
        return x
        """, "x: torch.Tensor, device"), [(3, 4)]),
    "Optional[Tensor] parameter": (
        "from typing import Optional\nfrom torch import Tensor\ndef run(x: Optional[Tensor], device):\n"
        "    x.cuda()\n    return x\n", [(4, 4)]),
    "name used with a tensor-only method before": (function("""\
        x = x.unsqueeze(0)
        x.to(device)
        return x
        """, "x, device"), [(4, 4)]),
    "name used with a tensor-only method after": (function("""\
        x.to(device)
        return x.masked_fill(x > 0, 0)
        """, "x, device"), [(3, 4)]),
    "attribute assigned a tensor in this function": (
        "import torch\nclass A:\n    def setup(self, device):\n        self.t = torch.ones(3)\n"
        "        self.t.to(device)\n", [(5, 8)]),
    "a guard changes nothing": (function("""\
        x = torch.ones(3)
        if torch.cuda.is_available():
            x.cuda()
        """), [(5, 8)]),
    "module level": ("import torch\nx = torch.zeros(3)\nx.to('cpu')\n", [(3, 0)]),
    "items of a loader batch": (function("""\
        for t in train_loader:
            X, y = t["X"], t["y"]
            X.to(device)
            y.to(device)
            model(X)
        """), [(5, 8), (6, 8)]),
    "batch[0] of a whole batch": (function("""\
        for batch in dataloader:
            batch[0].to(device)
            x = batch[0]
            x.to(device)
        """), [(4, 8), (6, 8)]),
    "inputs unpacked from an enumerate target": (function("""\
        for i, data in enumerate(trainloader, 0):
            inputs, labels = data
            inputs.to(device)
        """), [(5, 8)]),
    "numbered loader, whole batch used as a tensor": (function("""\
        for x in train_loader_1:
            x.to(device)
            mask = torch.zeros_like(x)
        """), [(4, 8)]),
    "name bound from DataLoader(...)": (function("""\
        batches = None
        dl_train = torch.utils.data.DataLoader(ds)
        it = DataLoader(ds, batch_size=4)
        for a, b in it:
            b.cuda()
        """), [(7, 8)]),
    "parameter named batch": (
        "class Step:\n    def __call__(self, engine, batch):\n        x = batch[0]\n"
        "        if self.device: x.to(self.device)\n        return self.model(x)\n", [(4, 24)]),
    "legacy constructor and Variable": (
        "import torch\nfrom torch.autograd import Variable\ndef run(device):\n    a = torch.Tensor(3)\n"
        "    a.cuda()\n    v = Variable(a)\n    v.cuda()\n", [(5, 4), (7, 4)]),
    "tokenizer result with return_tensors": (function("""\
        enc = tokenizer(texts, return_tensors="pt", padding=True)
        enc["input_ids"].to(device)
        enc.to(device)
        """, "tokenizer, texts, device"), [(4, 4)]),
    "item assigned a sliced tensor": (function("""\
        inputs = prepare(inputs)
        inputs["input_ids"] = inputs["input_ids"][:, -n:]
        inputs['input_ids'].to(device)
        """, "inputs, n, device"), [(5, 4)]),
    "name indexed like an array": (function("""\
        x.to(device)
        return x[idx, :]
        """, "x, idx, device"), [(3, 4)]),
    "input of a known module": (
        "import torch.nn as nn\nclass Net(nn.Module):\n    pass\nclass Server(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        model = Net()\n        self.model = model\n"
        "    def forward(self, inp):\n        inp.to(self.device)\n        return self.model(inp)\n", [(10, 8)]),
    "loop over annotated tensors": (
        "from typing import Optional, Tuple\nimport torch\ndef f(xs: Optional[Tuple[torch.Tensor, ...]], device):\n"
        "    for x in xs:\n        x.to(device)\n    for t in (torch.ones(1), torch.zeros(1)):\n        t.cuda()\n",
        [(5, 8), (7, 8)]),
    "tensor attribute set in __init__": (
        "import torch\nclass P(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.pe = torch.zeros(10, 4)\n    def forward(self, x):\n        self.pe.to(x.device)\n"
        "        return x + self.pe\n", [(7, 8)]),
    "guarded cuda of a batch item": (function("""\
        for images, labels in loader:
            if torch.cuda.is_available():
                labels.cuda()
        """), [(5, 12)]),
    # issue 15, set 3: simpletransformers' FocalLoss tests the kind, then discards the move
    "narrowed by torch.is_tensor": (function("""\
        if torch.is_tensor(alpha):
            alpha.to(x.device)
        """, "x, alpha"), [(4, 8)]),
    "narrowed by isinstance(..., torch.Tensor), with and": (
        "import torch\nclass L(torch.nn.Module):\n    def forward(self, x):\n"
        "        if self.w is not None and isinstance(self.w, torch.Tensor):\n            self.w.to(x.device)\n"
        "        return x\n", [(5, 12)]),
    # pytorch-forecasting's predict: each entry of a batch dict, by a loop's key
    "batch items under a variable key": (function("""\
        for x, _ in loader:
            for name in x.keys():
                x[name].to(device)
        """), [(5, 12)]),
    # MONAI's AffineHead: a grid from a method that casts its dtype (`.to(dtype=...)` is no move)
    "attribute from a method returning a dtype cast": (
        "import torch\nclass H(torch.nn.Module):\n    def __init__(self, n):\n        super().__init__()\n"
        "        self.grid = self.make_grid(n)\n    @staticmethod\n    def make_grid(n):\n"
        "        grid = torch.stack(torch.meshgrid(torch.arange(n), torch.arange(n)))\n"
        "        return grid.to(dtype=torch.float)\n    def forward(self, f):\n"
        "        self.grid.to(device=f.device)\n        return f + self.grid\n", [(11, 8)]),
    # a batch taken with next(): of iter(loader), of an iterator bound from one, of a loader iterator
    "batch from next(iter(loader))": (function("""\
        x, y = next(iter(loader))
        x.cuda(non_blocking=True)
        batch = next(iter(loader))
        a, b = batch
        b.to(device)
        """), [(4, 4), (7, 4)]),
    "batch from next() of an iterator over a loader": (function("""\
        it = iter(loader)
        for step in range(10):
            images, labels = next(it)
            labels.to(device)
        """), [(6, 8)]),
    "batch from next() of a trainer's loader iterator": (
        "class Trainer:\n    def step(self, device):\n        real, labels = next(self.train_iter)\n"
        "        real.to(device)\n        return real\n", [(4, 8)]),
}


# The sixth round (held-out set 8): computervision-recipes' `_transform` moved a tensor made by
# torchvision's ToTensor and dropped it.
REPORTED.update({
    "an image made a tensor by a Compose holding ToTensor": (
        "import torchvision.transforms as T\nclass Learner:\n    def _transform(self, im):\n"
        "        transform = T.Compose([T.Resize(256), T.ToTensor()])\n        im = transform(im)\n"
        "        im.to(self.device)\n        return im\n", [(6, 8)]),
    "an image made a tensor by ToTensor called at once": (
        "from torchvision import transforms\ndef load(im, device):\n    im = transforms.ToTensor()(im)\n"
        "    im.to(device)\n    return im\n", [(4, 4)]),
})


# The seventh round: theseus' zeroed messages, a value of unknown kind repeated (an array or a
# tensor, and only a tensor has `.to()`) and its move dropped.
REPORTED.update({
    "bound from a method arrays and tensors share": (
        function("m = var.__class__()\nm = m.data.repeat(n)\nm.to(device=device)\nreturn model(m)\n",
                 params="model, var, n, device"), [(5, 4)]),
})


# The ninth round: loaders reached other ways than by their own name, in the shapes of the
# tutorials and research loops people write (a dict of loaders per phase, a progress bar
# bound first, two loaders zipped for domain adaptation).
REPORTED.update({
    "a loader of a dict of loaders": (function("""\
        for phase in ["train", "val"]:
            for inputs, labels in dataloaders[phase]:
                inputs.to(device)
                model(inputs)
        """), [(5, 12)]),
    "a progress bar over a loader, bound first": (function("""\
        pbar = tqdm(train_loader)
        for x, y in pbar:
            y.to(device)
        """), [(5, 8)]),
    "two loaders zipped": (function("""\
        for i, ((xs, ys), (xt, _)) in enumerate(zip(source_loader, target_loader)):
            xs.to(device)
            xt.cuda()
        """), [(4, 8), (5, 8)]),
})


# The twenty-second round (held-out set 24): GNNFlow's script read a loaded feature table's
# `.shape[1]`: only arrays and tensors have a shape, and of those only a tensor has `.cuda()`.
REPORTED.update({
    "a value whose shape is read": (
        "from feats import load_feat\nnode_feats, edge_feats = load_feat('x')\nedge_feats.cuda()\n"
        "dim = 0 if edge_feats is None else edge_feats.shape[1]\n", [(3, 0)]),
})


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv203(code) == [(line, col, "TDV203") for line, col in expected]


NOT_REPORTED = {
    "the items of a settings dict, looped over": (
        function("for k, v in cfg.items():\n    v.to(device)\nreturn cfg\n", params="cfg, device")),
    "a module named in a string format": (
        function("model.to(device)\nprint('model: %s' % model)\nreturn model\n", params="model, device")),
    "a module whose attribute does arithmetic": (
        function("net.cuda()\nscale = net.scale * 2\nreturn net(x) * scale\n", params="net, x")),
    "a helper that returns its argument, moved on one path": (
        "import torch\ndef maybe_cuda(m, use_cuda):\n    if use_cuda:\n        m = m.cuda()\n    return m\n"
        "def run(model, use_cuda):\n    model = maybe_cuda(model, use_cuda)\n    model.cuda()\n"),
    "torch's settings and queries are no tensors": (
        "import torch\ndef f(device):\n    g = torch.get_default_dtype()\n    s = torch.no_grad()\n"
        "    g.to(device)\n    s.to(device)\n"),
    "narrowing ends with its arm": function("""\
        if torch.is_tensor(alpha):
            pass
        alpha.to(x.device)
        """, "x, alpha"),
    "narrowed by a test of another name": function("""\
        if torch.is_tensor(beta):
            alpha.to(x.device)
        """, "x, alpha, beta"),
    "not narrowed by isinstance of another type": function("""\
        if isinstance(alpha, (torch.Tensor, list)):
            alpha.to(x.device)
        """, "x, alpha"),
    "an item under a variable key of an unknown container": function("""\
        for name in modules:
            modules[name].to(device)
        """, "modules, device"),
    "module moved in place": function("""\
        model.to(device)
        model.cuda()
        net = Net()
        net.to(device)
        """),
    "nn constructor": function("""\
        layer = torch.nn.Linear(3, 3)
        layer.to(device)
        """),
    "module class of the file": (
        "import torch.nn as nn\nclass Net(nn.Module):\n    pass\ndef run(device):\n    m = Net()\n"
        "    m.to(device)\n"),
    "annotated module": function("m.to(device)\n", "m: torch.nn.Module, device"),
    "unknown kind": function("""\
        x = get_input()
        x.to(device)
        thing.cuda()
        """),
    "whole batch object (PyG Data, BatchEncoding)": function("""\
        for batch in loader:
            batch.to(device)
            model(batch)
        """),
    "result used": function("""\
        for x, y in loader:
            x = x.to(device)
            out = model(y.to(device))
        return x.cuda()
        """),
    "index of enumerate is not a tensor": function("""\
        for i, batch in enumerate(loader):
            i.to(device)
        """),
    "not a loader": function("""\
        for x, y in pairs:
            x.to(device)
        """),
    "rebound to a module": function("""\
        x = torch.ones(3)
        x = Net()
        x.to(device)
        """),
    "temporary made for its side effect": function("""\
        for i in range(torch.cuda.device_count()):
            torch.zeros(1).cuda(i)
        """),
    "parameter that may be a module": function("""\
        x.to(device)
        return x
        """, "x, device"),
    "optimizer and unknown objects": function("""\
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        opt.to(device)
        criterion = make_loss()
        criterion.cuda()
        helper = Helper()
        helper.to(device)
        """),
    "tokenizer BatchEncoding moves in place": function("""\
        inputs = tokenizer(texts, return_tensors="pt")
        inputs.to(device)
        return model(**inputs)
        """, "model, tokenizer, texts, device"),
    "whole batch passed to a module (PyG Data)": (
        "import torch.nn as nn\nclass Net(nn.Module):\n    pass\ndef run(loader, device):\n    model = Net()\n"
        "    for data in loader:\n        data.to(device)\n        model(data)\n"),
    "list and dict values": function("""\
        xs = [a, b]
        xs.to(device)
        d = {"a": a}
        d["a"].to(device)
        """, "a, b, device"),
    "custom class with its own to": (
        "class Boxes:\n    def to(self, device):\n        self.t = self.t.to(device)\n        return self\n"
        "def run(device):\n    b = Boxes()\n    b.to(device)\n"),
    "sliced name rebound before the move": function("""\
        y = x[:, 0]
        x = get()
        x.to(device)
        """, "x, device"),
    "attribute assigned a module in __init__ too": (
        "import torch\nclass A:\n    def __init__(self, net):\n        self.t = torch.ones(3)\n"
        "        if net:\n            self.t = net\n    def go(self, device):\n        self.t.to(device)\n"),
    "function returning a name last bound to something unknown": (
        "import numpy as np\nimport torch\ndef causal(n):\n    m = torch.ones(n, n)\n    m = m.numpy()\n    return m\n"
        "def go(device):\n    mask = causal(5)\n    mask.cuda()\n    return mask\n"),
    "method of another class with the same name": (
        "import torch\nclass A:\n    def make(self):\n        return torch.ones(3)\nclass B:\n"
        "    def make(self):\n        return self.net\n    def go(self, device):\n        t = self.make()\n"
        "        t.to(device)\n"),
    "local function shadowing the file's": (
        "import torch\ndef make(n):\n    return torch.ones(n)\ndef run(device, make):\n    t = make(3)\n"
        "    t.to(device)\n"),
    "function returning its argument": (
        "import torch\ndef same(x):\n    return x\ndef run(device, model):\n    m = same(model)\n"
        "    m.to(device)\n"),
    "function that may return something else": (
        "import torch\ndef make(n):\n    if n:\n        return torch.ones(n)\n    return Thing()\n"
        "def run(device):\n    t = make(3)\n    t.to(device)\n"),
    "index of enumerate over a numbered loader": function("""\
        for i, x in enumerate(loader_2):
            i.to(device)
        """),
    # a whole batch may be an object that moves in place (PyG `Batch`), and next() of an
    # iterator that is not a loader's yields anything
    "whole batch from next(iter(loader))": function("""\
        data = next(iter(loader))
        data.to(device)
        """),
    "next() of other iterators": function("""\
        a, b = next(pairs)
        a.to(device)
        step = next(self.counter)
        step.to(device)
        """),
}


NOT_REPORTED.update({
    "rebound after the shared method": (
        function("m = m.data.repeat(n)\nm = build(m)\nm.to(device)\nreturn model(m)\n",
                 params="model, m, n, device")),
    "a Compose without ToTensor keeps images": (
        "import torchvision.transforms as T\ndef load(im, device):\n    transform = T.Compose([T.Resize(256)])\n"
        "    im = transform(im)\n    im.to(device)\n    return im\n"),
})



# The ninth round, from held-out set 11's misses: a copy of the moved copy dropped too
# (`x.to(device).detach()`), a Variable whatever it wraps, an attribute chain torch takes as a tensor.
REPORTED_LATE = {
    "a copy of the moved copy": (function("""\
        for i, (x, _) in enumerate(loader):
            x.to(device).detach()
            model(x)
        """), [(4, 8)]),
    "a Variable kept by the module, moved under a guard": (
        "import torch\nfrom torch.autograd import Variable\nclass Det(torch.nn.Module):\n"
        "    def __init__(self, layer):\n        super().__init__()\n"
        "        self.priors = Variable(layer.forward(), volatile=True)\n"
        "    def forward(self, x):\n        if x.is_cuda:\n            self.priors.cuda()\n"
        "        return x, self.priors\n", [(9, 12)]),
    "the parts of a module's output": (
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    pass\ndef ev(loader, device):\n"
        "    model = Net().to(device)\n    for x, y in loader:\n        colour, rot = model(x.to(device))\n"
        "        colour.to('cpu')\n", [(9, 8)]),
    "an attribute chain that torch.cat takes": (function("""\
        dataset.data.x.to(device)
        return torch.cat([dataset.data.x, enc], 1)
        """, params="dataset, enc, device"), [(3, 4)]),
    "an attribute chain that torch.cat takes, then set to the result": (function("""\
        dataset.data.x.to(device)
        dataset.data.x = torch.cat([dataset.data.x, enc], 1)
        """, params="dataset, enc, device"), [(3, 4)]),
}


@pytest.mark.parametrize("code, expected", REPORTED_LATE.values(), ids=list(REPORTED_LATE))
def test_reported_late(code, expected):
    assert tdv203(code) == [(line, col, "TDV203") for line, col in expected]


NOT_REPORTED.update({
    "a side effect after the move": function("""\
        for x, y in loader:
            x.cpu().numpy().tofile(out)
        """),
    "the parts of what an unknown callable returns": function("""\
        colour, rot = predict(x)
        colour.to("cpu")
        """, params="predict, x"),
    "an attribute chain nothing shows a tensor": function("""\
        dataset.data.to(device)
        return dataset.data.x
        """, params="dataset, device"),
    "a module's parameter of the same spelling": function("""\
        self.w.to(device)
        return torch.cat([self.w, enc], 1)
        """, params="self, enc, device"),
})


# The ninth round's loaders: what they do not make tensors
NOT_REPORTED.update({
    "a whole batch of a dict of loaders": function("""\
        for batch in dataloaders["train"]:
            batch.to(device)
        """),
    "the index of an enumerate bound first": function("""\
        steps = enumerate(loader)
        for i, batch in steps:
            i.to(device)
            batch.to(device)
        """),
    "a loader zipped with something else": function("""\
        for (x, y), w in zip(loader, weights):
            x.to(device)
            w.to(device)
        """),
    "whole batches of zipped loaders": function("""\
        for a, b in zip(loader_a, loader_b):
            a.to(device)
        """),
    "one sample of a dataset is no loader": function("""\
        for x, y in dataset[0]:
            x.to(device)
        """),
    "a dict of things that are not loaders": function("""\
        for x, y in pairs[phase]:
            x.to(device)
        """),
})

# The twenty-second round: a shape read of another value, or of this one before it is bound again
NOT_REPORTED.update({
    "a shape read of the value bound before": function("""\
        x = load(path)
        n = x.shape[0]
        x = build(n)
        x.to(device)
        """, params="path, device"),
    "a module's attribute read for its shape": function("""\
        n = model.weight.shape[0]
        model.to(device)
        """),
})


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv203(code) == []


def test_message_and_remedy():
    from flake8_torchdevice.engine import Options, lint_source

    code = function("for x, y in loader:\n    x.to(device)\n")
    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    assert finding.message == ("x.to() returns a moved copy and leaves the tensor where it was; "
                               "assign it: x = x.to(device)")


@pytest.mark.parametrize("body, line", [
    ("for x, y in loader:\n    x.cpu()\n    del x\n", 4),
    ("for x, y in loader:\n    x.cpu(); del x\n", 4),
    ("for x, y in loader:\n    y.to('cpu')\n    del x, y\n", 4),
])
def test_a_move_of_what_is_deleted_next_is_dead_code_not_a_copy_to_keep(body, line):
    """`x.cpu()` then `del x` meant to free memory: the remedy is to drop the call, and no
    fix writes `x = x.cpu()` before the `del`."""
    from flake8_torchdevice.engine import Options, lint_source
    from flake8_torchdevice.fix import fix_source

    code = function(body)
    [finding] = lint_source(code, "t.py", Options(enabled=ONLY))
    assert (finding.line, finding.col) == (line, 8)
    assert finding.message.endswith("is deleted next: remove the call")
    assert fix_source(code, "t.py").text == code
    # a `del` of another name does not change the remedy
    [finding] = lint_source(function("for x, y in loader:\n    x.cpu()\n    del y\n"), "t.py", Options(enabled=ONLY))
    assert finding.message.endswith("assign it: x = x.cpu()")


def test_a_local_annotated_with_a_class_is_an_object_of_it():
    # ai-toolkit's slider trainer: `prompt_pair: EncodedPromptPair = self.prompt_pairs[i]`, whose
    # own `to()` moves its members in place
    code = """import torch
def step(self, dtype):
    prompt_pair: EncodedPromptPair = self.prompt_pairs[torch.randint(0, 4, (1,)).item()]
    prompt_pair.to(self.device_torch, dtype=dtype)
    return prompt_pair.unsqueeze(0)
"""
    assert tdv203(code) == []
    # without the annotation, what `unsqueeze` is called on is a tensor
    assert tdv203(code.replace("prompt_pair: EncodedPromptPair =", "prompt_pair =")) == [(4, 4, "TDV203")]


def test_a_tensor_the_class_body_binds_is_what_self_reads():
    # RecTools' ranker: `epsilon: torch.Tensor = torch.tensor([1e-8])` in the class body, then
    # `self.epsilon.to(self.device)` in `__init__`, the copy dropped
    code = """import torch
class Ranker:
    epsilon: torch.Tensor = torch.tensor([1e-8])
    def __init__(self, device):
        self.device = torch.device(device)
        self.epsilon.to(self.device)
"""
    assert tdv203(code) == [(6, 8, "TDV203")]
    # a class attribute of unknown kind, or one `__init__` binds to another kind, is not known
    assert tdv203(code.replace("torch.tensor([1e-8])", "make_epsilon()")) == []
    assert tdv203(code.replace("        self.device = torch.device(device)\n",
                               "        self.device = torch.device(device)\n        self.epsilon = Eps()\n")) == []


def test_cuda_call_is_also_tdv101():
    code = function("for x, y in loader:\n    x.cuda()\n")
    found = lint(code)
    assert (4, 8, "TDV203") in found
    assert [(line, code) for line, _, code in found if code != "TDV203"] == [(4, "TDV101")]


def test_fix_assigns_the_move_back():
    from flake8_torchdevice.fix import fix_source

    code = function("""\
        for x, y in loader:
            x.to(device, non_blocking=True)  # inputs
            model(x, y)
        t = torch.zeros(3)
        t.cpu()
        """)
    result = fix_source(code, "t.py")
    assert result.text == code.replace("x.to(device, non_blocking=True)  # inputs",
                                       "x = x.to(device, non_blocking=True)  # inputs").replace(
        "    t.cpu()", "    t = t.cpu()")
    assert fix_source(result.text, "t.py").text == result.text


ROUND5_REPORTED = {
    # conversational-uptake: each item of a dict made a tensor, then moved and dropped
    "an item assigned a tensor by a variable key": (
        "import torch\ndef predict(model, inputs, device):\n    for key in ['a', 'b']:\n"
        "        inputs[key] = torch.tensor(inputs[key])\n        inputs[key].to(device)\n", [(5, 8)]),
    # GPT2-chitchat: the loader's collate function pads the ids into one tensor
    "batch of a loader whose collate_fn returns a tensor": (
        "import torch\nfrom torch.utils.data import DataLoader\ndef collate(batch):\n    return torch.tensor(batch)\n"
        "def train(model, data, device):\n    loader = DataLoader(data, collate_fn=collate)\n"
        "    for i, ids in enumerate(loader):\n        ids.to(device)\n        model(ids)\n", [(8, 8)]),
    "inline loader whose collate_fn returns a tensor": (
        "import torch\nfrom torch.utils.data import DataLoader\ndef collate(batch):\n    return torch.tensor(batch)\n"
        "def train(model, data, device):\n    for ids in DataLoader(data, collate_fn=collate):\n"
        "        ids.to(device)\n", [(7, 8)]),
}


@pytest.mark.parametrize("code, expected", ROUND5_REPORTED.values(), ids=list(ROUND5_REPORTED))
def test_round5_reported(code, expected):
    assert tdv203(code) == [(line, col, "TDV203") for line, col in expected]


ROUND5_NOT_REPORTED = {
    "the key is bound again before the move": (
        "import torch\ndef predict(model, inputs, device):\n    key = 'a'\n    inputs[key] = torch.tensor(inputs[key])\n"
        "    key = 'graph'\n    inputs[key].to(device)\n"),
    # a collate function that builds a batch object (BatchEncoding, PyG's Batch moves in place)
    "batch of a loader whose collate_fn returns a dict": (
        "import torch\nfrom torch.utils.data import DataLoader\ndef collate(batch):\n"
        "    return {'ids': torch.tensor(batch)}\n"
        "def train(model, data, device):\n    loader = DataLoader(data, collate_fn=collate)\n"
        "    for batch in loader:\n        batch.to(device)\n"),
    "batch of a loader with the default collate": (
        "from torch.utils.data import DataLoader\ndef train(model, data, device):\n"
        "    for batch in DataLoader(data):\n        batch.to(device)\n"),
}


@pytest.mark.parametrize("code", ROUND5_NOT_REPORTED.values(), ids=list(ROUND5_NOT_REPORTED))
def test_round5_not_reported(code):
    assert tdv203(code) == []


# What the eighth round taught (held-out set 10): iterating a dataset gives its samples (deepvision).
ROUND8_CASES = {
    "dataset_loop": ("""
        import torch
        class Analyzer:
            def __init__(self, model, dataset):
                self.model = model
                self.dataset = dataset
            def visualize(self):
                out = []
                for index, batch in enumerate(self.dataset):
                    images, labels = batch
                    images.to(self.model.device)
                    out.append(self.model(images))
                return out
""", [(11, 12, "TDV203")]),
}


@pytest.mark.parametrize("code, expected", ROUND8_CASES.values(), ids=list(ROUND8_CASES))
def test_round8_tdv203_shapes(code, expected):
    assert lint(code, enabled=select_codes()) == expected


def test_the_parts_of_a_batch_entry_are_tensors():
    code = ("class Trainer:\n    def step(self, batch):\n        X_supp, y_supp = batch['train']\n"
            "        X_supp.to(self.device); y_supp.to(self.device)\n        return self.model(X_supp, y_supp)\n"
            "    def other(self, data):\n        names, ids = data['meta']\n        ids.to(self.device)\n")
    assert lint(code, enabled=frozenset({"TDV203"})) == [(4, 8, "TDV203"), (4, 32, "TDV203")]


def test_the_parts_of_a_part_of_a_batch_are_tensors():
    """seq2seq-keyphrase's beam-search evaluation: a batch of two tuples, each unpacked again."""
    code = ("import torch\ndef evaluate(model, data_loader):\n    for i, batch in enumerate(data_loader):\n"
            "        one2many, one2one = batch\n        src, trg, _ = one2many\n"
            "        if torch.cuda.is_available():\n            src.cuda()\n        model(src)\n"
            "def train(model, loader, device):\n    for inputs, targets in loader:\n        a, b = inputs\n"
            "        a.to(device)\n        model(a, b)\n")
    assert tdv203(code) == [(7, 12, "TDV203"), (12, 8, "TDV203")]
    # a part bound again to something else is no part of the batch any more
    assert tdv203(code.replace("        a, b = inputs\n", "        inputs = make(inputs)\n        a, b = inputs\n")) \
        == [(7, 12, "TDV203")]


def test_the_outputs_of_a_name_used_as_a_module():
    """hvqa's evaluation: `model.eval()`, then `preds, rot = model(images)` and bare
    `preds.to("cpu")`. A name whose `.eval()` or `.parameters()` is called is a module."""
    code = ("import torch\ndef eval_model(model, loader, device):\n    model.eval()\n"
            "    for x, y in loader:\n        colour, rot = model(x.to(device))\n        colour.to('cpu')\n")
    assert tdv203(code) == [(6, 8, "TDV203")]
    script = ("import torch\nmodel = build()\nmodel.eval()\nfor x, y in loader:\n"
              "    colour, rot = model(x)\n    colour.to('cpu')\n")
    assert tdv203(script) == [(6, 4, "TDV203")]
    # a trainer's `.train()` says nothing: what it returns may move in place
    assert tdv203(code.replace("model.eval()", "model.train()")) == []


def test_a_tuple_of_bare_moves():
    """FunASR's FsmnVAD.inference: `speech.to(device=d), speech_lengths.to(device=d)` as one
    statement discards both copies. Reported without a fix (two assignments to write)."""
    code = ("import torch\ndef infer(model, audio, device):\n    speech, lengths = extract(audio)\n"
            "    speech.to(device=device), lengths.to(device=device)\n    return model(speech.unsqueeze(0), lengths)\n")
    assert tdv203(code) == [(4, 4, "TDV203")]
    code = code.replace("model(speech.unsqueeze(0), lengths)", "model(speech.unsqueeze(0), lengths.long())")
    assert tdv203(code) == [(4, 4, "TDV203"), (4, 30, "TDV203")]
    from flake8_torchdevice.engine import Options
    from flake8_torchdevice.fix import fix_source
    assert fix_source(code, "t.py", Options(enabled=frozenset({"TDV203"}))).text == code


def test_a_value_rebound_from_its_own_tensor_method_was_a_tensor():
    """WhisperSpeech's vocoder: `atoks.to('cpu')`, then `atoks = atoks.permute(1, 0, 2)`."""
    code = ("import torch\nclass Vocoder:\n    def decode(self, atoks):\n        if self.has_mps:\n"
            "            atoks.to('cpu')\n        atoks = atoks.permute(1, 0, 2)\n        return self.vocos(atoks)\n")
    assert tdv203(code) == [(5, 12, "TDV203")]
    # bound to something else between the move and the tensor method: that says nothing of it
    assert tdv203(code.replace("        atoks = atoks.permute", "        atoks = self.prepare(atoks)\n"
                                                                 "        atoks = atoks.permute")) == []


def test_an_asserted_tensor_is_a_tensor():
    code = ("import torch\ndef prepare(d, device):\n    assert 'x' in d and isinstance(d['x'], torch.Tensor)\n"
            "    x = d['x']\n    x.to(device)\n    return x\n")
    assert tdv203(code) == [(5, 4, "TDV203")]
    assert tdv203(code.replace("isinstance(d['x'], torch.Tensor)", "isinstance(d['x'], list)")) == []


ENUMERATED = """import torch
from tqdm import tqdm
def train(model, train_loader, device, nb):
    pbar = enumerate(train_loader)
    pbar = tqdm(pbar, total=nb)
    for i, (imgs, targets, _) in pbar:
        targets.to(device)
        imgs = imgs.to(device).float() / 255
        model(imgs, targets)
"""


def test_a_loop_over_a_named_enumeration_of_a_loader_unpacks_its_batches():
    # yolov5-style training scripts: `pbar = tqdm(enumerate(train_loader))` in two steps
    assert tdv203(ENUMERATED) == [(7, 8, "TDV203")]
    assert tdv203(ENUMERATED.replace("pbar = enumerate(train_loader)\n    pbar = tqdm(pbar, total=nb)",
                                     "pbar = tqdm(enumerate(train_loader), total=nb)")) == [(6, 8, "TDV203")]
    # enumerating something that is no loader: its items are unknown
    assert tdv203(ENUMERATED.replace("enumerate(train_loader)", "enumerate(records)")) == []


def test_a_buffers_bare_move_is_discarded():
    # chronos' RoPE: `self.inv_freq.to(x.device)` leaves the buffer where it was for this call
    code = """import torch
import torch.nn as nn
class RoPE(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("inv_freq", torch.arange(0, dim, 2).float(), persistent=False)
        self.lin = nn.Linear(dim, dim)
    def forward(self, x):
        self.inv_freq.to(x.device)
        self.lin.to(x.device)
        return self.lin(x) * self.inv_freq
"""
    assert tdv203(code) == [(9, 8, "TDV203")]  # the sub-module's move is in place


@pytest.mark.parametrize("made, expected", [
    # mammoth's replay `Buffer(size, "cpu")`, a class of the project with its own in-place `.to()`
    ('Buffer(500, "cpu")', []),
    ("nn.Buffer(torch.zeros(3))", [(8, 8, "TDV203")]),  # torch's registered buffer is a tensor
])
def test_only_torchs_buffer_is_a_tensor(made, expected):
    code = f"""import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.buffer = {made}
    def end_task(self, device):
        self.buffer.to(device)
"""
    assert tdv203(code) == expected


def test_a_move_of_what_is_a_tensor_on_one_way_through_an_if():
    # FunASR's VAD: the features are the caller's tensor on one arm and what a feature extractor
    # returns on the other; the bare moves after the `if` are no-ops on the tensor's arm
    code = """import torch
def generate(data_in, data_lengths=None, **kwargs):
    if isinstance(data_in, torch.Tensor):
        speech, speech_lengths = data_in, data_lengths
    else:
        speech, speech_lengths = extract_fbank(data_in)
    speech.to(device=kwargs["device"]), speech_lengths.to(device=kwargs["device"])
    return encode(speech, speech_lengths)
"""
    assert tdv203(code) == [(7, 4, "TDV203")]
    assert tdv203(code.replace('    speech.to(device=kwargs["device"]), speech_lengths.to(device=kwargs["device"])\n',
                               '    speech = speech.to(device=kwargs["device"])\n')) == []
    # one name bound to a tensor and then, on the same way, to something else: the later value is moved
    assert tdv203(code.replace("    else:\n        speech, speech_lengths = extract_fbank(data_in)\n",
                               "    speech, speech_lengths = extract_fbank(data_in)\n")) == []


def test_a_move_after_an_in_place_method_is_discarded_too():
    # Deep RL Hands-On's Atari GAN: the generator's noise filled in place, then moved in a bare
    # statement: the in-place method returns the tensor, whose moved copy is dropped
    code = """import torch
def step(net_gener, device, n):
    gen_input_v = torch.FloatTensor(n, 100, 1, 1)
    gen_input_v.normal_(0, 1).to(device)
    return net_gener(gen_input_v)
"""
    assert tdv203(code) == [(4, 4, "TDV203")]
    assert tdv203(code.replace("    gen_input_v.normal_(0, 1).to(device)",
                               "    gen_input_v = gen_input_v.normal_(0, 1).to(device)")) == []
    # a module's in-place `requires_grad_` returns the module, which `.to()` moves in place
    assert tdv203("""import torch
def freeze(model, device):
    model.requires_grad_(False).to(device)
    return model
""") == []


# What the sixteenth round taught (held-out set 18, read after it was measured).
def test_the_output_of_a_torch_layer_is_a_tensor():
    code = """import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.device = device
        self.feature_in = nn.Linear(3, 4)
        self.rnn = nn.LSTM(4, 4)

    def forward(self, x):
        h = self.feature_in(x)
        h.to(self.device)
        out = self.rnn(x)
        out.to(self.device)
        return h, out
"""
    # (an LSTM gives a tuple, which has no `.to()`: unknown, not reported)
    assert tdv203(code) == [(12, 8, "TDV203")]


def test_the_pieces_of_a_split_tensor_are_tensors():
    code = """import torch
def evaluate_model(model, conditions, batch_size):
    device = next(model.parameters()).device
    predictions = []
    for batch in torch.split(conditions, batch_size):
        batch.to(device)
        predictions.append(model.sample(batch))
    return predictions
"""
    assert tdv203(code) == [(6, 8, "TDV203")]
    assert tdv203(code.replace("torch.split(conditions, batch_size)", "make_batches(conditions, batch_size)")) == []


def test_what_a_torch_library_loads_is_a_tensor():
    # encodec's command line: `torchaudio.load` gives the waveform (a tensor) and its rate
    code = """import torch
import torchaudio
def encode(model, path):
    wav, sr = torchaudio.load(path)
    if torch.cuda.is_available():
        model.to("cuda")
        wav.to("cuda")
        sr.to("cuda")
    return model(wav)
"""
    assert tdv203(code) == [(7, 8, "TDV203")]  # (the rate is a number: its `.to` is unknown)


def test_a_part_of_a_tuple_a_project_function_returns():
    # a crystal diffusion model's EGNN score network: `get_edges_batch` returns the edge
    # lists and a `torch.ones` attribute tensor, whose `.to()` the network then discards
    code = """import torch
def get_edges_batch(n_nodes, batch_size):
    edges = [list(range(n_nodes)), list(range(n_nodes))]
    edge_attr = torch.ones(n_nodes * batch_size, 1)
    return edges, edge_attr

def score(coordinates):
    edges, edge_attr = get_edges_batch(coordinates.shape[1], coordinates.shape[0])
    edge_attr.to(coordinates.device)
    return edges, edge_attr
"""
    assert tdv203(code) == [(9, 4, "TDV203")]
    # the part that is a list of lists is no tensor; a part whose kind some return leaves open, unsure
    assert tdv203(code.replace("edge_attr.to(coordinates.device)", "edges.to(coordinates.device)")) == []
    assert tdv203(code.replace("    return edges, edge_attr\n",
                               "    if batch_size > 1:\n        return edges, load_attr()\n"
                               "    return edges, edge_attr\n")) == []



SIGNAL = """\
import torch
from audiotools import AudioSignal


def test_to_from_ops(path):
    signal = AudioSignal(path)
    signal.stft()
    signal = signal.to("cpu")
    assert isinstance(signal.numpy(), object)
    signal.cpu()
"""


def test_an_object_of_a_class_that_mimics_tensors_is_no_tensor():
    """audiotools (set 25's precision sample): an `AudioSignal` has `.stft()`, `.numpy()` and an
    in-place `.cpu()`; built by its class (and moved by its own `.to()`), it stays that object.
    Bound from a function whose result is unknown, the same uses show a tensor."""
    assert tdv203(SIGNAL) == []
    assert tdv203(SIGNAL.replace("AudioSignal(path)", "load_signal(path)")) == [(10, 4, "TDV203")]


def test_an_input_fed_to_a_model_the_method_calls_eval_on():
    # TorchCP's predictor: `self._model.eval()` shows a module, and what it is fed is a tensor
    code = """import torch
class Predictor:
    def __init__(self, model, device):
        self._model = model
        self._device = device
    def predict(self, x_batch):
        self._model.eval()
        x_batch.to(self._device)
        return self._model(x_batch)
"""
    assert tdv203(code) == [(8, 8, "TDV203")]
    assert tdv203(code.replace("        self._model.eval()\n", "")) == []


def test_what_a_to_tensor_method_returns_is_a_tensor():
    # easytext's accuracy metric (set 28): the counts come back from `to_tensor()` and the move
    # for NCCL was thrown away
    code = """import torch
class AccMetric:
    def _distributed_data(self):
        distributed_tensor = self._data.to_tensor()
        distributed_tensor.to(torch.distributed.get_rank())
        torch.distributed.all_reduce(distributed_tensor)
"""
    assert tdv203(code) == [(5, 8, "TDV203")]
    # what another method returns is unknown
    assert tdv203(code.replace("to_tensor()", "to_device()")) == []


def test_what_a_called_and_moved_model_is_fed_is_a_tensor():
    # facenet-pytorch-glint360k's forward pass (set 29): `model` is called and moved, which a
    # tensor never is, so what it is fed (moved on its way in) is a tensor
    code = """def forward_pass(imgs, model):
    model.cuda()
    embeddings = model(imgs.cuda())
    imgs.cpu()
    return embeddings
"""
    assert tdv203(code) == [(4, 4, "TDV203")]
    # a callable never moved tells nothing of its inputs
    assert tdv203(code.replace("    model.cuda()\n", "")) == []


def test_what_a_policy_creator_makes_is_no_tensor():
    # DH-MAML's RPC trainer (blind sample of set 29): `policy_creator` builds the policy, a module
    # whose `.to()` works in place; the name says it makes a policy, not that it is one
    code = """import torch.nn as nn
class Policy(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
class PolicyCreator:
    def __call__(self):
        return Policy(3), True
class Trainer:
    def __init__(self, spec):
        policy_creator = PolicyCreator()
        self.agent_policy, self.is_continuous = policy_creator()
        self.agent_policy.to(spec.get("device"))
"""
    assert tdv203(code) == []
