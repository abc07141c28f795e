"""The mistakes and the recommended templates from the seed articles (blog posts on
moving PyTorch code between GPU and CPU machines), rewritten as small programs.

Every mistake must be caught with the right code at the right place, and every
recommended template must be clean: a linter that flags the advice users were
given would teach them to turn it off.
"""

from __future__ import annotations

import pytest

from conftest import lint

# ------------------------------------------------------------------- mistakes

MISTAKES = {
    # A checkpoint loaded and pushed to the GPU in one go (article on device mismatches).
    "load then cuda": (
        """\
        import torch
        net = torch.load("weights.pth").cuda()
        """,
        [(2, 6, "TDV301"), (2, 32, "TDV101")]),
    # Multi-GPU code written for a GPU server (article on CPU-only machines).
    "DataParallel of model.cuda()": (
        """\
        import torch.nn as nn
        net = build_net()
        net = nn.DataParallel(net.cuda())
        """,
        [(3, 26, "TDV101")]),
    "random tensor pushed with cuda()": (
        """\
        import torch
        noise = torch.randn(16).cuda()
        """,
        [(2, 24, "TDV101")]),
    "tensor and model with cuda()": (
        """\
        import torch
        import torch.nn as nn
        layer = nn.Linear(8, 2).cuda()
        batch = torch.randn(4, 8).cuda()
        out = layer(batch)
        """,
        [(3, 24, "TDV101"), (4, 26, "TDV101")]),
    "hard-coded device string": (
        """\
        import torch
        device = torch.device("cuda")
        ids = torch.tensor([4, 5, 6], device="cuda:0")
        """,
        [(2, 22, "TDV102"), (3, 37, "TDV102")]),
    # The "load the state dict, then move the model" advice still loads without
    # map_location: by the rule catalog this is TDV301.
    "load_state_dict(torch.load(...))": (
        """\
        import torch
        net = SmallNet()
        net.load_state_dict(torch.load("weights.pth"))
        net.to(device)
        """,
        [(3, 20, "TDV301")]),
    # A wrapper that is moved only after wrapping, with no GPU check around it.
    # DataParallel wrapped, then moved, is fine (it checks devices at its first
    # forward, see the templates); DistributedDataParallel checks when it is built.
    "wrap then move, distributed": (
        """\
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        net = SmallNet()
        net = DDP(net, device_ids=[rank])
        net = net.to(device)
        """,
        [(4, 6, "TDV401")]),
    # A constant built inside forward lands on the CPU while the input is on the GPU.
    "constant in forward": (
        """\
        import torch
        import torch.nn as nn
        class Scale(nn.Module):
            def forward(self, x):
                weights = torch.tensor([0.5, 1.0, 2.0])
                return x * weights
        """,
        [(5, 18, "TDV201")]),
}


@pytest.mark.parametrize("code, expected", MISTAKES.values(), ids=list(MISTAKES))
def test_mistake_is_caught(code, expected):
    assert lint(code) == expected


def test_cpu_input_to_a_gpu_model():
    code = """\
    import torch
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = SmallNet().to(device)
    sample = torch.tensor([1.0, 2.0, 3.0])
    result = net(sample)
    """
    assert lint(code) == [(4, 9, "TDV201")]


# ------------------------------------------------------------------ templates

TEMPLATES = {
    "device selection and one move": """\
        import torch
        import torch.nn as nn
        class SmallNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(10, 5)
            def forward(self, x):
                return self.fc(x)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        net = SmallNet().to(device)
        """,
    "selection with an MPS fallback": """\
        import torch
        device = torch.device("cuda" if torch.cuda.is_available()
                              else "mps" if torch.backends.mps.is_available() else "cpu")
        net = SmallNet().to(device)
        grid = torch.randn(10, 10).to(device)
        """,
    "multi-GPU under a device_count guard": """\
        import torch
        import torch.nn as nn
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        net = SmallNet()
        if torch.cuda.device_count() > 1:
            print("GPUs:", torch.cuda.device_count())
            net = nn.DataParallel(net)
        net = net.to(device)
        """,
    "DataParallel wrapped, then moved before use": """\
        import torch
        import torch.nn as nn
        net = SmallNet()
        net = nn.DataParallel(net)
        net = net.to(device)
        """,
    "load on the CPU, then move": """\
        import torch
        state = torch.load("weights.pth", map_location="cpu")
        net.load_state_dict(state)
        net = net.to(device)
        """,
    "training loop moving each batch": """\
        import torch
        import torch.nn as nn
        import torch.optim as optim
        def train(loader, epochs=3):
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            net = SmallNet().to(device)
            opt = optim.Adam(net.parameters(), lr=1e-3)
            loss_fn = nn.MSELoss()
            xs = torch.randn(100, 10)
            ys = torch.randn(100, 1)
            xs, ys = xs.to(device), ys.to(device)
            for _ in range(epochs):
                for inputs, labels in loader:
                    inputs, labels = inputs.to(device), labels.to(device)
                    opt.zero_grad()
                    loss = loss_fn(net(inputs), labels)
                    loss.backward()
                    opt.step()
            return net(xs) - ys
        """,
    "tensor moved right after creation": """\
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        values = torch.tensor([7, 8, 9])
        values = values.to(device)
        made_there = torch.tensor([7, 8, 9], device=device)
        """,
    "config module and flags": """\
        import torch
        DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        USE_CUDA = torch.cuda.is_available()
        if USE_CUDA:
            torch.backends.cudnn.benchmark = True
        net = Model().to(DEVICE)
        """,
    "device helper class": """\
        import torch
        import torch.nn as nn
        class Mover:
            def __init__(self, preferred=None):
                self.device = preferred or torch.device(
                    "cuda" if torch.cuda.is_available() else "cpu")
            def __call__(self, obj):
                if isinstance(obj, (torch.Tensor, nn.Module)):
                    return obj.to(self.device)
                return obj
        """,
    "pick a device with early returns": """\
        import torch
        def pick_device():
            if torch.cuda.is_available():
                return torch.device(f"cuda:{torch.cuda.current_device()}")
            if torch.backends.mps.is_available():
                return torch.device("mps")
            return torch.device("cpu")
        """,
    "a decorator that requires CUDA": """\
        import torch
        def needs_gpu(fn):
            def inner(*args, **kwargs):
                if not torch.cuda.is_available():
                    raise EnvironmentError("CUDA is required")
                return fn(*[a.cuda() for a in args], **kwargs)
            return inner
        """,
    "CUDA kernel behind a check": """\
        import torch
        def run(x):
            if torch.cuda.is_available():
                return fast_kernel(x.cuda())
            return slow_path(x)
        """,
    "device checks while debugging": """\
        import torch
        print(f"model on {next(net.parameters()).device}, input on {x.device}, cuda: {x.is_cuda}")
        def ensure_on(x, device):
            return x.to(device) if torch.is_tensor(x) else x
        """,
    "DDP with the move first": """\
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        def setup(rank):
            net = SmallNet().to(rank)
            return DDP(net, device_ids=[rank])
        """,
}


@pytest.mark.parametrize("code", TEMPLATES.values(), ids=list(TEMPLATES))
def test_template_is_clean(code):
    assert lint(code) == []
