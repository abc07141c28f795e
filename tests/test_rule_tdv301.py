"""TDV301 load-without-map-location (reported at the start of the loader call)."""

from __future__ import annotations

import pytest

from conftest import lint

ONLY = frozenset({"TDV301"})


def tdv301(code: str, **options):
    return lint(code, enabled=ONLY, **options)


REPORTED = {
    "torch.load": ("import torch\nstate = torch.load('m.pt')\n", [(2, 8)]),
    "import torch as th": ("import torch as th\nstate = th.load('m.pt')\n", [(2, 8)]),
    "from torch import load": ("from torch import load\nstate = load('m.pt')\n", [(2, 8)]),
    "from torch import load as alias": ("from torch import load as tload\nstate = tload('m.pt')\n", [(2, 8)]),
    "import inside a function": ("def f(p):\n    from torch import load\n    return load(p)\n", [(3, 11)]),
    "import torch inside a method": (
        "class T:\n    def go(self):\n        import torch\n"
        "        self.m.load_state_dict(torch.load(self.path, weights_only=True))\n", [(4, 31)]),
    "torch.serialization.load": ("import torch\nsd = torch.serialization.load(f)\n", [(2, 5)]),
    "torch.jit.load": ("import torch\nm = torch.jit.load('m.pt')\n", [(2, 4)]),
    "hub.load_state_dict_from_url": ("import torch\nsd = torch.hub.load_state_dict_from_url(URL)\n", [(2, 5)]),
    "from torch.hub import": (
        "from torch.hub import load_state_dict_from_url\nsd = load_state_dict_from_url(URL, 'dir')\n", [(2, 5)]),
    "model_zoo module alias": ("import torch.utils.model_zoo as model_zoo\nsd = model_zoo.load_url(URL)\n", [(2, 5)]),
    "load_url, two positionals": ("import torch\nsd = torch.utils.model_zoo.load_url(URL, None)\n", [(2, 5)]),
    "nested in load_state_dict": ("import torch\nmodel.load_state_dict(torch.load('model.pth'))\n", [(2, 22)]),
    "comprehension": ("import torch\nxs = [torch.load(p) for p in paths]\n", [(2, 6)]),
    "lambda": ("import torch\nf = lambda p: torch.load(p)\n", [(2, 14)]),
    "nested function": (
        "import torch\ndef a():\n    def b(p):\n        return torch.load(p)\n    return b\n", [(4, 15)]),
    "try/except is no guard": (
        "import torch\ntry:\n    state = torch.load(p)\nexcept RuntimeError:\n    state = None\n", [(3, 12)]),
    "uncalled is_available is no guard": (
        "import torch\nif torch.cuda.is_available:\n    state = torch.load(p)\n", [(3, 12)]),
    "other keywords only": ("import torch\nstate = torch.load(p, weights_only=True, mmap=True)\n", [(2, 8)]),
    "file by keyword": ("import torch\nstate = torch.load(f=p)\n", [(2, 8)]),
    # None is the default: tensors go back to the device they were saved from.
    "map_location=None": ("import torch\nstate = torch.load(p, map_location=None)\n", [(2, 8)]),
    "positional None": ("import torch\nstate = torch.load(p, None)\n", [(2, 8)]),
    "load_url positional None": ("import torch\nsd = torch.utils.model_zoo.load_url(URL, None, None)\n", [(2, 5)]),
    "comprehension over something else": ("from torch import load\nys = [load(p) for p in paths]\n", [(2, 6)]),
    "a file this module saves without moving to the CPU": (
        "import os\nimport torch\ndef dump(feats, out):\n    torch.save(feats, os.path.join(out, 'feats.pth'))\n"
        "def main(d):\n    return torch.load(os.path.join(d, 'feats.pth'))\n", [(6, 11)]),
    "another file name than the CPU dump": (
        "import os\nimport torch\ndef dump(feats, out):\n    torch.save(feats.cpu(), os.path.join(out, 'feats.pth'))\n"
        "def main(d):\n    return torch.load(os.path.join(d, 'model.pth'))\n", [(6, 11)]),
    "only an extension in common": (
        "import torch\ndef dump(x, out, i):\n    torch.save(x.cpu(), f'{out}/{i}.pth')\n"
        "def main(out, i):\n    return torch.load(f'{out}/{i}.pth')\n", [(5, 11)]),
    "same template, saved in another function": (
        "import torch\ndef dump(m, epoch):\n    torch.save(m, '{}.pkl'.format(epoch))\n"
        "def main(best):\n    return torch.load('{}.pkl'.format(best))\n", [(5, 11)]),
    "loaded before the same template is saved (a resume)": (
        "import torch\ndef main(m, epoch):\n    m = torch.load(f'ckpt_{epoch - 1}.pth')\n"
        "    torch.save(m, f'ckpt_{epoch}.pth')\n", [(3, 8)]),
    "templates that share only a folder separator": (
        "import torch\ndef main(m, a, b):\n    torch.save(m, a + '/' + b)\n    return torch.load(b + '/' + a)\n",
        [(4, 11)]),
    "weights from elsewhere": (
        "from torch.hub import load_state_dict_from_url\nsd = load_state_dict_from_url('https://example.org/m.pth')\n",
        [(2, 5)]),
    "dict with one URL from elsewhere": (
        "import torch\nurls = {'a': 'https://download.pytorch.org/models/a.pth', 'b': 'https://example.org/b.pth'}\n"
        "sd = torch.hub.load_state_dict_from_url(urls['b'])\n", [(3, 5)]),
    "torch.load of a name that holds a published URL": (
        "import torch\nURL = 'https://download.pytorch.org/models/resnet18-5c106cde.pth'\nsd = torch.load(URL)\n",
        [(3, 5)]),
    # yolov5's onnx_export.py: torch arrives through `from models.common import *`
    "torch through a star import": ("from models.common import *\nmodel = torch.load(w)['model']\n", [(2, 8)]),
    "with-as of something else": ("import torch as th\nwith th.no_grad() as g:\n    th.load(p)\n", [(3, 4)]),
}


@pytest.mark.parametrize("code, expected", REPORTED.values(), ids=list(REPORTED))
def test_reported(code, expected):
    assert tdv301(code) == [(line, col, "TDV301") for line, col in expected]


NOT_REPORTED = {
    "map_location keyword": "import torch\nstate = torch.load('m.pt', map_location='cpu')\n",
    "map_location device": "import torch\nstate = torch.load('m.pt', map_location=device)\n",
    "map_location callable": "import torch\nstate = torch.load(p, map_location=lambda s, l: s)\n",
    "map_location positional": "import torch\nstate = torch.load('m.pt', 'cpu')\n",
    "jit.load positional": "import torch\nm = torch.jit.load('m.pt', device)\n",
    "load_url third positional": "import torch\nsd = torch.utils.model_zoo.load_url(URL, None, 'cpu')\n",
    "hub keyword": "import torch\nsd = torch.hub.load_state_dict_from_url(URL, map_location='cpu')\n",
    "**kwargs": "import torch\ndef f(p, **kw):\n    return torch.load(p, **kw)\n",
    "*args": "import torch\ndef f(*a):\n    return torch.load(*a)\n",
    "json/pickle/yaml": "import json, pickle, yaml\nc = json.load(f); d = pickle.load(f); e = yaml.load(f)\n",
    "numpy": "import numpy as np\nnp.load(p)\n",
    "unimported load": "state = load(p)\n",
    "rebound at module level": "from torch import load\nload = my_loader\nload(p)\n",
    "rebound in a function": "from torch import load\ndef f(p):\n    load = my_loader\n    return load(p)\n",
    "shadowed by a parameter": "from torch import load\ndef f(load, p):\n    return load(p)\n",
    "rebound by a relative import": "from torch import load\nfrom .mylib import load\nload(p)\n",
    "star import, torch rebound": "from models.common import *\ntorch = fake\ntorch.load(p)\n",
    "star import after an import of something named torch": (
        "from . import torch\nfrom models.common import *\ntorch.load(p)\n"),
    "relative import of a torch-named module": "from . import torch\ntorch.load(p)\n",
    "rebound by a for loop": "from torch import load\nfor load in loaders:\n    load(p)\n",
    "rebound by with-as": "from torch import load\nwith opener() as load:\n    load(p)\n",
    "rebound by except-as": "from torch import load\ntry:\n    pass\nexcept Exception as load:\n    load(p)\n",
    "rebound by a comprehension": "from torch import load\nys = [load(p) for load in loaders]\n",
    "rebound in a nested comprehension": "from torch import load\nys = {k: load(p) for k in ks for load in fs}\n",
    "rebound by a walrus": "from torch import load\nif (load := pick()):\n    load(p)\n",
    "rebound by a def": "from torch import load\ndef load(p):\n    return p\nload(q)\n",
    "torch rebound": "import torch\ndef f(p):\n    torch = fake\n    return torch.load(p)\n",
    "guarded": "import torch\nif torch.cuda.is_available():\n    state = torch.load(p)\n",
    # pyGAT: one run saves every epoch's weights, then reloads the best epoch's
    "saved from the same template earlier in the function": (
        "import torch\ndef main(model, n):\n    for epoch in range(n):\n"
        "        torch.save(model.state_dict(), '{}.pkl'.format(epoch))\n        best = epoch\n"
        "    model.load_state_dict(torch.load('{}.pkl'.format(best)))\n"),
    "saved from the same f-string template": (
        "import torch\ndef main(model, d, n):\n    for i in range(n):\n"
        "        torch.save(model, f'{d}/epoch_{i}.pth')\n    return torch.load(f'{d}/epoch_{n - 1}.pth')\n"),
    "guarded by early exit": ("import torch\ndef f(p):\n    if not torch.cuda.is_available():\n"
                              "        return None\n    return torch.load(p)\n"),
    "guarded by decorator": "import torch\n@requires_cuda\ndef test_a():\n    torch.load(p)\n",
    "state_dict loader method": "model.load_state_dict(state)\n",
    # dino's eval_knn: features dumped from the CPU by one function, reloaded by another
    "a file this module dumps CPU tensors to": (
        "import os\nimport torch\ndef main(args):\n    return torch.load(os.path.join(args.cache, 'feats.pth'))\n"
        "def dump(feats, out):\n    torch.save(feats.cpu(), os.path.join(out, 'feats.pth'))\n"),
    "a file this module dumps CPU tensors to, f-string paths": (
        "import torch\ndef dump(feats, out):\n    torch.save(feats.to('cpu'), f'{out}/feats.pth')\n"
        "def main(out):\n    return torch.load(f'{out}/feats.pth')\n"),
    # PyTorch's published weights hold CPU tensors (semseg's copy of torchvision's resnet.py)
    "published weights, literal URL": (
        "from torch.hub import load_state_dict_from_url\n"
        "sd = load_state_dict_from_url('https://download.pytorch.org/models/vgg16-397923af.pth')\n"),
    "published weights through a module-level dict": (
        "import torch.utils.model_zoo as model_zoo\nmodel_urls = {\n"
        "    'resnet18': 'https://download.pytorch.org/models/resnet18-5c106cde.pth',\n"
        "    'resnet34': 'https://download.pytorch.org/models/resnet34-333f7ec4.pth',\n}\n"
        "def resnet(arch, model):\n    model.load_state_dict(model_zoo.load_url(model_urls[arch]))\n"),
    "published weights through a module-level name": (
        "import torch\nURL = 'https://download.pytorch.org/models/resnet18-5c106cde.pth'\n"
        "def f():\n    return torch.hub.load_state_dict_from_url(URL)\n"),
}


@pytest.mark.parametrize("code", NOT_REPORTED.values(), ids=list(NOT_REPORTED))
def test_not_reported(code):
    assert tdv301(code) == []


def test_extra_guard_names():
    code = "import torch\nif HAS_ACCEL:\n    state = torch.load(p)\n"
    assert tdv301(code) == [(3, 12, "TDV301")]
    assert tdv301(code, guard_names=("HAS_ACCEL",)) == []


def test_message_names_the_loader():
    from flake8_torchdevice.engine import Options, lint_source

    [finding] = lint_source("import torch as th\nm = th.jit.load(p)\n", "t.py", Options(enabled=ONLY))
    assert finding.message.startswith("torch.jit.load() without map_location")
    assert "map_location" in finding.message


def test_a_cpu_dump_in_a_function_without_loads_is_seen_by_the_fast_path():
    from flake8_torchdevice.engine import Options, lint_source

    code = ("import os\nimport torch\n\n\ndef main(args):\n    return torch.load(os.path.join(args.cache, 'f.pth'))\n\n\n"
            "def dump(feats, out):\n    torch.save(feats.cpu(), os.path.join(out, 'f.pth'))\n")
    for enabled in (ONLY, frozenset({"TDV301", "TDV101"})):
        options = Options(enabled=enabled)
        assert lint_source(code, "t.py", options) == lint_source(code, "t.py", options, fast=False) == []


def test_import_fallback_resolves_to_the_try_arm():
    """Issue 15: the `try` arm's loader runs first; torch's is only the fallback."""
    code = ("try:\n    from mmengine.runner import load_checkpoint as load\nexcept ImportError:\n"
            "    from torch import load\nstate = load('m.pt')\n")
    assert tdv301(code) == []


def test_import_fallback_to_another_loader_is_torch_first():
    code = ("try:\n    from torch import load\nexcept ImportError:\n    from mylib import load\n"
            "state = load('m.pt')\n")
    assert tdv301(code) == [(5, 8, "TDV301")]


def test_torchvision_re_export_of_the_hub_loader_in_the_try_arm():
    """stylegan2's FID Inception: torchvision's re-export first, torch's model zoo as fallback."""
    code = ("try:\n    from torchvision.models.utils import load_state_dict_from_url\nexcept ImportError:\n"
            "    from torch.utils.model_zoo import load_url as load_state_dict_from_url\n"
            "state = load_state_dict_from_url('https://example.com/w.pth', progress=True)\n")
    assert tdv301(code) == [(5, 8, "TDV301")]


MNISTM_LIKE = (
    "import os\nimport torch\nimport torch.utils.data as data\n"
    "class {name}({base}):\n    training_file = 'train.pt'\n    def __init__(self, root):\n"
    "        self.root = root\n        self.x, self.y = torch.load(os.path.join(self.root, self.training_file))\n"
    "    def download(self, images, labels):\n        data = images\n"
    "        with open(os.path.join(self.root, self.training_file), 'wb') as f:\n"
    "            torch.save((torch.ByteTensor(data), labels), f)\n")


def test_a_datasets_own_cache_loads_anywhere():
    """PyTorch-GAN's MNIST-M: the Dataset writes its processed files and reads them back."""
    assert tdv301(MNISTM_LIKE.format(name="MNISTM", base="data.Dataset")) == []


def test_a_pyg_datasets_own_cache_loads_anywhere():
    # pykale's multi-omics dataset (blind sample of set 28): PyG's `Dataset` writes `data.pt` in
    # `process()` and reads it back
    code = MNISTM_LIKE.format(name="Multiomics", base="Dataset").replace(
        "import torch.utils.data as data", "from torch_geometric.data import Dataset")
    assert tdv301(code) == []


def test_the_same_cache_in_a_class_that_is_no_dataset_is_reported():
    assert tdv301(MNISTM_LIKE.format(name="Cache", base="object")) == [(8, 25, "TDV301")]


def test_a_cpu_dump_through_an_opened_file():
    code = ("import torch\ndef dump(feats, path):\n    with open(path + '/feats.pth', 'wb') as f:\n"
            "        torch.save(feats.cpu(), f)\ndef load(d):\n    return torch.load(d + '/feats.pth')\n")
    assert tdv301(code) == []


# Issue 15 (blind sample of set 27): preprocessing scripts that write CPU tensors made from
# NumPy arrays, read back by the same script or by a training script in the same folder.
PREPROCESS = (
    "import numpy as np\nimport torch\n\n"
    "def process_topo(root, csr):\n"
    "    indptr = csr.indptr\n"
    "    indptr = torch.from_numpy(indptr).type(torch.long)\n"
    "    torch.save(indptr, f'{root}/csr/indptr.pt')\n\n"
    "def process_index(root, rows):\n"
    "    order = torch.zeros_like(torch.from_numpy(np.array(rows)))\n"
    "    order[0] = 1\n"
    "    torch.save({'order': order, 'n': len(rows)}, root + '/index/order.pt')\n\n"
    "def save_model(root, model):\n"
    "    torch.save(model.state_dict(), f'{root}/model.pt')\n\n"
    "def partition(root, probs, work):\n"
    "    parts = [None] * len(probs)\n"
    "    for i in range(len(probs)):\n"
    "        parts[i] = work(probs[i])\n"
    "    torch.save(parts, f'{root}/parts.pt')\n\n"
    "def on_the_gpu(root, n):\n"
    "    book = torch.zeros(n).type(torch.cuda.LongTensor)\n"
    "    torch.save(book, f'{root}/book.pt')\n\n"
    "def sort_rows(root):\n"
    "    indptr_path = f'{root}/csr/indptr.pt'\n"
    "    indptr = torch.load(indptr_path)\n"
    "    deg, order = torch.sort(indptr[1:] - indptr[:-1])\n"
    "    torch.save(order, f'{root}/sorted.pt')\n"
)
TRAIN = (
    "import os.path as osp\nimport torch\n\n"
    "def load_all(root):\n"
    "    indptr_root = osp.join(root, 'csr', 'indptr.pt')\n"
    "    indptr = torch.load(indptr_root)\n"
    "    order = torch.load(osp.join(root, 'index', 'order.pt'))\n"
    "    model = torch.load(f'{root}/model.pt')\n"
    "    parts = torch.load(root + '/parts.pt')\n"
    "    book = torch.load(root + '/book.pt')\n"
    "    ranks = torch.load(root + '/sorted.pt')\n"
    "    return indptr, order, model, parts, book, ranks\n"
)


def test_a_host_dump_loaded_by_the_script_that_writes_it():
    assert tdv301(PREPROCESS + TRAIN.split("\n\n", 1)[1]) == [(36, 12, "TDV301"), (37, 12, "TDV301"), (38, 11, "TDV301")]


def test_a_file_also_saved_from_what_is_not_host_data():
    # easytext's trainer: `torch.save(None, path)` when there is no scheduler, its state otherwise
    code = ("import os\nimport torch\n\n"
            "def save(self, saved_dir):\n"
            "    path = os.path.join(saved_dir, 'lr_scheduler.pt')\n"
            "    if self.scheduler is None:\n"
            "        torch.save(None, path)\n"
            "    else:\n"
            "        torch.save(self.scheduler.state_dict(), path)\n\n"
            "def load(self, saved_dir):\n"
            "    path = os.path.join(saved_dir, 'lr_scheduler.pt')\n"
            "    return torch.load(path)\n")
    assert tdv301(code) == [(13, 11, "TDV301")]
    assert tdv301(code.replace("self.scheduler.state_dict()", "0")) == []


def test_a_host_dump_of_a_script_in_the_same_folder(tmp_path):
    from conftest import lint_in_project

    (tmp_path / "setup.py").write_text("")
    found = lint_in_project(tmp_path, {"preprocess.py": PREPROCESS, "train.py": TRAIN}, "train.py", ONLY)
    # model.pt holds a model's state, parts.pt what a function computed, book.pt CUDA tensors
    assert found == [(8, 12, "TDV301"), (9, 12, "TDV301"), (10, 11, "TDV301")]


def test_a_host_dump_of_a_script_in_another_folder_says_nothing(tmp_path):
    from conftest import lint_in_project

    (tmp_path / "setup.py").write_text("")
    (tmp_path / "tools").mkdir()
    found = lint_in_project(tmp_path, {"tools/preprocess.py": PREPROCESS, "train.py": TRAIN}, "train.py", ONLY)
    assert [line for line, _, _ in found] == [6, 7, 8, 9, 10, 11]
