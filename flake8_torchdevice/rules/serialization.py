"""Family 3: checkpoints that only load where the GPU they were saved on exists."""

from __future__ import annotations

import libcst as cst

from ..analysis import has_star_kwargs, keyword, positional_args
from .base import Rule

# Loader -> index of its positional `map_location` parameter.
LOADERS = {
    "torch.load": 1,
    "torch.serialization.load": 1,
    "torch.jit.load": 1,
    "torch.hub.load_state_dict_from_url": 2,
    "torch.utils.model_zoo.load_url": 2,
}


class LoadWithoutMapLocation(Rule):
    """`torch.load` and friends without `map_location=`."""

    code = "TDV301"
    name = "load-without-map-location"
    message = ("{name}() without map_location fails on a CPU-only machine when the checkpoint was saved "
               'on a GPU; pass map_location="cpu" (then .to(device)) or map_location=device')
    triggers = r"\b(?:load|load_url|load_state_dict_from_url)\b"

    VALID = [
        "import torch\nstate = torch.load('m.pt', map_location='cpu')\n",
        "import torch\nstate = torch.load('m.pt', 'cpu')\n",
        "import torch\ndef f(path, **kw):\n    return torch.load(path, **kw)\n",
        "import json\nconfig = json.load(open('c.json'))\n",
    ]
    INVALID = [
        "import torch\nstate = torch.load('m.pt')  # expect: TDV301\n",
        "from torch.hub import load_state_dict_from_url\nsd = load_state_dict_from_url(URL)  # expect: TDV301\n",
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.resolve(node.func)
        index = LOADERS.get(qualified or "")
        if index is None or self.ctx.guarded:
            return
        if keyword(node, "map_location") is not None or has_star_kwargs(node):
            return
        if any(arg.star == "*" for arg in node.args) or len(positional_args(node)) > index:
            return
        self.report(node, self.message.format(name=qualified))
