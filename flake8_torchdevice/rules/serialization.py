"""Family 3: checkpoints that only load where the GPU they were saved on exists."""

from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from ..analysis import (children, dotted_name, first_argument, has_star_kwargs, keyword, last_identifier, method_call,
                        moves_to_cpu, positional_args, string_value)
from ..analysis.dumps import FILE_NAME_RE, dumps_host_data
from .base import CallTrigger, Fix, Rule, any_word

# Loader -> index of its positional `map_location` parameter.
LOADERS = {
    "torch.load": 1,
    "torch.serialization.load": 1,
    "torch.jit.load": 1,
    "torch.hub.load_state_dict_from_url": 2,
    "torch.utils.model_zoo.load_url": 2,
    # torchvision's re-export of torch.hub's (older torchvision; stylegan2's FID Inception)
    "torchvision.models.utils.load_state_dict_from_url": 2,
}


SAVERS = {"torch.save", "torch.serialization.save", "torch.jit.save"}
URL_LOADERS = {"torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url",
               "torchvision.models.utils.load_state_dict_from_url"}
# PyTorch's own published weights (torchvision's model zoo) hold CPU tensors: torchvision
# itself loads them without map_location on every machine.
CPU_WEIGHTS_URL = "https://download.pytorch.org/models/"


# Where the dataset classes come from (PyG's `InMemoryDataset` writes `processed/data.pt` too).
_DATASET_MODULES = ("torch.utils.data.", "torch_geometric.data.", "torchvision.datasets.", "dgl.data.")


def _file_key(node: cst.CSTNode) -> Optional[str]:
    """`buffer`, `tmp.name`, `"model.ckpt"` -> `buffer`, `tmp`, `"model.ckpt"`: what a save
    and a load both name."""
    path = string_value(node)
    if path is not None:
        return repr(path)  # quoted, so a path never equals a variable's name
    name = dotted_name(node)
    if name is not None and name.endswith(".name"):
        name = name[: -len(".name")]
    return name


def _file_keys(node: cst.CSTNode) -> List[str]:
    """What a save and a load of the same file both name: the variable or string
    (`_file_key`), and for a path built from a template (`"{}.pkl".format(epoch)`,
    `f"{d}/best.pth"`, `d + "/best.pth"`) the template's text, whatever fills it: a
    function that saves `"{}.pkl".format(epoch)` and loads `"{}.pkl".format(best)` is
    one run reading its own file."""
    keys = [key for key in (_file_key(node),) if key]
    if string_value(node) is None and not isinstance(node, (cst.Name, cst.Attribute)):
        pieces = _string_pieces(node)
        if any(piece.strip("/\\._-") for piece in pieces):
            keys.append("template:" + "\0".join(pieces))
    return keys


def _names_in(path: cst.CSTNode) -> List[str]:
    """"passed:<name>" for each variable a path expression reads (`path + "/ckpt.pth"`)."""
    if isinstance(path, (cst.Name, cst.Attribute)):
        name = dotted_name(path)
        return [f"passed:{name}"] if name else []
    return [key for child in children(path) for key in _names_in(child)]


def _string_pieces(path: cst.CSTNode) -> List[str]:
    """The literal text in a path expression, in order."""
    pieces: List[str] = []

    class Strings(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            pieces.append(node.evaluated_value if isinstance(node.evaluated_value, str) else "")

        def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
            pieces.append(node.value)

    path.visit(Strings())
    return pieces


def _file_name(path: cst.CSTNode) -> Optional[str]:
    """The file name a path expression ends with: `os.path.join(d, "feats.pth")`,
    `f"{d}/feats.pth"`, `d + "/feats.pth"` -> `feats.pth`."""
    pieces = _string_pieces(path)
    match = FILE_NAME_RE.search(pieces[-1]) if pieces else None
    return match.group(1) if match else None


def _path_tail(path: cst.CSTNode) -> Optional[str]:
    """The variable a path ends with, when it names no file literally:
    `os.path.join(self.root, self.training_file)` -> `self.training_file`."""
    if isinstance(path, cst.Call) and dotted_name(path.func) in ("os.path.join", "path.join", "join") and path.args:
        path = path.args[-1].value
    name = dotted_name(path) if isinstance(path, cst.Attribute) else None
    return f"variable:{name}" if name else None


def _cpu_weights(value: cst.BaseExpression) -> bool:
    """`"https://download.pytorch.org/models/resnet18-5c106cde.pth"`, or a dict whose
    values are all such URLs."""
    if isinstance(value, cst.Dict):
        return bool(value.elements) and all(
            isinstance(element, cst.DictElement) and _cpu_weights(element.value) for element in value.elements)
    return (string_value(value) or "").startswith(CPU_WEIGHTS_URL)


class LoadWithoutMapLocation(Rule):
    """`torch.load` and friends without `map_location=`.

    ## What it does
    Reports calls to `torch.load`, `torch.serialization.load`, `torch.jit.load`,
    `torch.hub.load_state_dict_from_url` and `torch.utils.model_zoo.load_url`
    (however they were imported) that do not say where the loaded tensors go.

    ## Why is this bad
    A checkpoint remembers the device each tensor was saved from. Loaded without
    `map_location` on a machine without CUDA, a checkpoint saved on a GPU raises
    `RuntimeError: Attempting to deserialize object on a CUDA device but
    torch.cuda.is_available() is False. If you are running on a CPU-only machine,
    please use torch.load with map_location=torch.device('cpu') to map your storages
    to the CPU.` A checkpoint saved on `cuda:1` fails the same way on a machine with
    one GPU. Whether the code works depends on where the file was written, so
    it passes every test with a CPU checkpoint and breaks on a user's. Passing
    `weights_only=True` does not change this.

    ## Example
    ```python
    state = torch.load("model.pt")
    model.load_state_dict(state)
    ```

    ## Use instead
    ```python
    state = torch.load("model.pt", map_location="cpu")
    model.load_state_dict(state)
    model.to(device)
    ```
    or `map_location=device` to load straight onto the device chosen at run time.

    ## When it is not reported
    - `map_location` is given, by keyword or by position
      (`torch.load(f, "cpu")`; the third argument of `load_state_dict_from_url`
      and `load_url`). `map_location=None` is the default and still reported.
    - `**kwargs` or `*args` are forwarded, which may carry it.
    - A load of the file or buffer that the same function (or module-level script)
      wrote with `torch.save` (or `module.save`) just before, named by the same
      variable, the same string or the same template (`"{}.pkl".format(epoch)` saved,
      `"{}.pkl".format(best_epoch)` loaded): a round trip on one machine. Also a load
      of a path built from a variable that the function passed, just before, to a
      saver of the project (a function or class of the project that calls
      `torch.save`, like an early-stopping helper: `stopper(loss, model, path)`).
    - A load of a file that the same file saves CPU tensors to, anywhere
      (`torch.save(feats.cpu(), os.path.join(out, "feats.pth"))`, also through
      `with open(path, "wb") as f:`), named by the same file name
      (`torch.load(os.path.join(cache, "feats.pth"))`) or the same variable at the end
      of the path (`self.training_file`): a cache of CPU tensors loads on any machine.
      What a dataset class saves counts as such a cache (data-pipeline code: MNIST-M's
      processed files; a `torch.utils.data`, PyG, torchvision or DGL `Dataset`).
    - A load of a file that this file, or a Python file in the same folder (a
      preprocessing script beside the training script), saves host data to: tensors
      made from NumPy arrays or by factories without `device=`, what torch computes
      from those only, `.cpu()` results, NumPy arrays, numbers, and containers of them
      (`indptr = torch.from_numpy(csr.indptr).long()`, then
      `torch.save(indptr, f"{root}/indptr.pt")`). A model's `state_dict()`, a value a
      function returned, or a container filled with either is not known to be on the
      host, and its load stays reported.
    - `load_state_dict_from_url` / `load_url` of PyTorch's published weights
      (`https://download.pytorch.org/models/...`, given literally or through a
      module-level name or dict of such URLs, `model_urls[arch]`): they hold CPU
      tensors.
    - Other `load` functions (`json.load`, `pickle.load`, `yaml.load`,
      `from .utils import load`) and names rebound locally (`load = my_loader`);
      a `try:` import of another loader with torch's as the `except ImportError:`
      fallback resolves to the `try` arm, which runs first.
    - Code under a CUDA guard (`if torch.cuda.is_available():`, ...; TDV101's page
      lists them all), where CUDA checkpoints load fine; likewise a module that is
      CUDA-only on purpose (`accelerators/cuda.py`, or one whose top raises without
      CUDA; TDV101's page says which).

    ## Fix
    `flake8-torchdevice fix` adds `map_location=` with the device-aware value in
    scope (in `forward(self, x)` the input's `x.device`, in a method of a module with
    parameters `next(self.parameters()).device`, a `device` variable or parameter, a
    tensor parameter's `.device`, `self.device` set in `__init__`, ...), else
    `map_location="cpu"`; a
    `map_location=None` gets the same value. The call keeps its layout: one argument
    per line stays so, a trailing comma and comments stay.

    ## How to silence it
    - One line: `state = torch.load(path)  # noqa: TDV301`.
    - A whole project: `extend-ignore = TDV301` in the `[flake8]` section.
    - Your own guards: `torchdevice-guard-names = HAS_ACCEL, requires_accelerator`
      (or `--guard-names`); code they guard is then not reported.
    """

    code = "TDV301"
    silenced_by_guards = True
    name = "load-without-map-location"
    message = ("{name}() without map_location fails on a CPU-only machine when the checkpoint was saved "
               'on a GPU; pass map_location="cpu" (then .to(device)) or map_location=device')
    # `save` too: a function that dumps CPU tensors to a file makes its loads elsewhere safe.
    triggers = any_word(("load", "load_url", "load_state_dict_from_url", "save"))
    trigger_words = ("load", "save")
    # `torch.save` before a load, and module-level dicts of PyTorch's published weights
    module_data_words = r"save|download\.pytorch\.org"
    call_trigger = CallTrigger(frozenset(name.rsplit(".", 1)[-1] for name in LOADERS) | {"save"},
                               frozenset({None}))

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

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # file names this module saves CPU tensors to, and the loads of named files
        self._cpu_dumps: Set[str] = set()
        self._loads_of_named_files: List[Tuple[cst.Call, str, Fix, str, Tuple[str, ...]]] = []
        self._datasets: Set[str] = set()  # classes of this file that are torch Datasets

    def visit_Assign(self, node: cst.Assign) -> None:
        # module-level `model_urls = {"resnet18": "https://download.pytorch.org/..."}`
        if self.ctx.scope.kind == "module" and len(node.targets) == 1 \
                and isinstance(node.targets[0].target, cst.Name) and _cpu_weights(node.value):
            self.ctx.scope.note("CPU weight URLs", set).add(node.targets[0].target.value)
        # `indices_root = osp.join(data_dir, "csr", "indices.pt")`: the file a later load may name
        # (read only then: most names bound hold no path)
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.ctx.function_scope().note("bound values", dict)[node.targets[0].target.value] = node.value

    def _is_cpu_weights_url(self, url: Optional[cst.BaseExpression]) -> bool:
        """A literal URL of PyTorch's published weights, or a module-level name (or dict of
        them, `model_urls[arch]`) holding only such URLs."""
        if isinstance(url, cst.Subscript):
            url = url.value
        if isinstance(url, cst.Name):
            return url.value in self.ctx.scopes[0].notes.get("CPU weight URLs", ())
        return url is not None and _cpu_weights(url)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.resolve(node.func)
        # torch.save(obj, f) / script_module.save(f): remember f for a later load.
        saved_to = None
        if qualified in SAVERS and len(node.args) >= 2:
            saved_to = node.args[1].value
        elif method_call(node, "save") is not None and node.args:
            saved_to = node.args[0].value
        if saved_to is not None:
            self.ctx.function_scope().note("saved to", set).update(_file_keys(saved_to))
            path = self._opened_path(saved_to) or saved_to  # `with open(path, "wb") as f: torch.save(x, f)`
            name = _file_name(path) or _path_tail(path)
            if name and qualified in SAVERS and (moves_to_cpu(node.args[0].value) or self._in_dataset()):
                # torch.save(feats.cpu(), os.path.join(d, "feats.pth")); a Dataset's own cache
                self._cpu_dumps.add(name)
            return
        index = LOADERS.get(qualified or "")
        if index is None:
            self._note_project_save(node)
            return
        if self.ctx.guarded:
            return
        if has_star_kwargs(node) or any(arg.star == "*" for arg in node.args):
            return
        positional = positional_args(node)
        location = keyword(node, "map_location") or (positional[index] if len(positional) > index else None)
        if location is not None and not (isinstance(location.value, cst.Name) and location.value.value == "None"):
            return  # `map_location=None` is the default: tensors go back where they were saved
        source = first_argument(node, "url" if qualified in URL_LOADERS else "f")
        if source is not None and self._saved_before(_file_keys(source) + _names_in(source)):
            return  # a round trip: this function saved it, on this machine, a moment ago
        if qualified in URL_LOADERS and self._is_cpu_weights_url(source):
            return  # torchvision's published weights
        # The fix: the device chosen at run time when one is in scope, else the CPU.
        found = self.device_for_fix(node, add=False)
        value = found[0] if found else '"cpu"'
        fix = Fix().replace(location.value, value) if location is not None else Fix().add_keyword(
            node, "map_location", value)
        name = (_file_name(source) or _path_tail(source) or self._named_path(source)) if source is not None else None
        if name:  # decided at the end of the file: a function further down may dump it from the CPU
            self._loads_of_named_files.append((node, self.message.format(name=qualified), fix, name,
                                               self.ctx.enclosing_functions()))
        else:
            self.report(node, self.message.format(name=qualified), fix=fix)

    def _named_path(self, source: cst.BaseExpression) -> Optional[str]:
        """The file name a path variable was bound to in this function (or at module level)."""
        if not isinstance(source, cst.Name):
            return None
        for scope in (self.ctx.function_scope(), self.ctx.scopes[0]):
            bound = scope.notes.get("bound values", {})
            if source.value in bound:
                return _file_name(bound[source.value])
        return None

    def _opened_path(self, handle: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """`path` of the enclosing `with open(path, "wb") as f:` that binds `handle` (`f`)."""
        if not isinstance(handle, cst.Name):
            return None
        for outer in reversed(self.ctx.stack):
            if isinstance(outer, (cst.FunctionDef, cst.ClassDef)):
                return None
            if isinstance(outer, cst.With):
                for item in outer.items:
                    opened = item.item
                    if isinstance(item.asname, cst.AsName) and isinstance(item.asname.name, cst.Name) \
                            and item.asname.name.value == handle.value and isinstance(opened, cst.Call) \
                            and dotted_name(opened.func) == "open" and opened.args:
                        return opened.args[0].value
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # bases resolved where the class is defined (a method may rebind `data` locally)
        if any((self.ctx.resolve(base.value) or "").startswith(_DATASET_MODULES)
               and (last_identifier(base.value) or "").endswith("Dataset") for base in node.bases):
            self._datasets.add(node.name.value)

    def _in_dataset(self) -> bool:
        """In a method of a `torch.utils.data.Dataset` (data-pipeline code: its caches
        hold the CPU data it read, MNIST-M's processed files)."""
        info = self.ctx.current_class
        return info is not None and info.name in self._datasets

    def _note_project_save(self, call: cst.Call) -> None:
        """`stopper(val_loss, model, path)` where `stopper` is an `EarlyStopping` of the
        project whose method calls `torch.save`: a later load of a path built from `path`
        reads what this run wrote. Most calls are never followed by such a load: the
        project index (which parses the callee's file) is asked only when one is."""
        names = {"passed:" + name for arg in call.args for name in (dotted_name(arg.value),) if name}
        if not names:
            return
        callee = self.ctx.kinds.class_of(call.func) or call.func
        ask = self.ctx.project_question(callee, "saves")
        if ask is not None:
            self.ctx.function_scope().note("project saves", list).append((ask, names))

    def _saved_before(self, keys: List[str]) -> bool:
        """Did this function save to one of `keys` before here: `torch.save(obj, path)`, or
        a project function or object that saves, handed `path`?"""
        scope = self.ctx.function_scope()
        if not scope.note("saved to", set).isdisjoint(keys):
            return True
        return any(not names.isdisjoint(keys) and ask() for ask, names in scope.notes.get("project saves", ()))

    def leave_Module(self, node: cst.Module) -> None:
        for call, message, fix, name, within in self._loads_of_named_files:
            if name not in self._cpu_dumps and (name.startswith("variable:")
                                                or not dumps_host_data(self.ctx.project, name)):
                self.report(call, message, fix=fix, within=within)
