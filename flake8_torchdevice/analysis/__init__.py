"""The semantic model: what every rule needs to know about the code, built in the one
traversal that also runs the rules (`walker.Analyzer`). A rule is a query on it.

Read bottom-up, each module a layer of the model:

- `syntax`: context-free questions about one expression (dotted names, literals,
  arguments, `"cuda:" + str(r)` is a CUDA string);
- `devices`: device values and the calls that move something to a device;
- `project`: the file in its project. What the file's own functions and methods
  return (read from the whole file's `ast`, also the functions the fast path leaves
  out of the parse) and, for names imported from the project's other files, whether a
  class is an `nn.Module` through its bases, what a function returns (a tensor, a
  module, something moved, a NumPy array; each part of the tuples it returns), whether
  it moves its argument, gives back what lives on its argument's device (`hat(v)`), which of
  its arguments it computes on together (`radius_graph_pbc(..., pos, cell, n_atoms)`), or calls
  `torch.save`, whether a class keeps the device it was told and uses it (itself or
  through a base class: an agent's `self.device = device`), whether the file sets the
  default device for new tensors;
- `dumps`: the files a script (or a script in the same folder) saves host data to
  with `torch.save`: tensors made from NumPy or without a device, `.cpu()` results;
  their loads need no `map_location`;
- `scopes`: names and what they resolve to (imports, relative ones too; an import
  with an `except ImportError:` fallback is the `try` arm's), and the
  per-scope facts in statement order: *placement* per path, the dotted names on their
  device at the statement being visited (`self.<attr>` included; after an `if`, only
  those moved on every arm that falls through, an arm that only runs without CUDA
  aside; also a name built by a project function that returns it moved or by a class
  that moves itself), the names moved on some path (`ever_moved`), CUDA flags;
- `guards`: where code can only run with CUDA (`guarded`; everywhere in a module that
  is CUDA-only on purpose: `accelerators/cuda.py`, or one whose top raises without
  CUDA) or only without it (`cpu_only`); `helpers`: the private helpers only guarded
  code calls, whose findings a guard would have silenced go when the module is walked;
- `kinds`: *values*. For every name, `self.<attr>` and constant subscript of a
  function, what it holds at the statement being visited: tensor (with the evidence:
  a factory or tensor op, an annotation, a tensor-only method, an argument of
  `torch.cat`/`F.*`, a data-loader batch or its items, an input of a known module),
  module, device, number, a fixed-device tensor (made without a run-time device),
  the class it was built from, or unknown. Flow-sensitive: rebinding, tuple
  unpacking, loop and `with` targets, comprehensions, and narrowing (inside
  `if torch.is_tensor(x):` / `if isinstance(x, torch.Tensor):`, `x` is a tensor);
- `origins`: where each tensor of a function comes from, and what the function is
  for: its role (device-sensitive code such as `forward` or a loss, a plain helper
  receiving tensors, or neither: builders, data pipelines), its inputs (parameters that
  may hold the caller's tensors), the locals derived from them or made here, the names
  on a run-time device, the device values in scope, and the new CPU tensors whose fate
  a rule follows. Kept only when an enabled rule reads it;
- `classes`: per class, whether it is an `nn.Module` (its base may be in another
  file), what each method assigns to `self`, registers, reads and returns, which
  methods run while it is built;
- `walker`: `Analyzer`, the traversal that keeps all of the above current and
  dispatches each node to the rules. Its queries: `resolve`, `import_reference`,
  `project_says` (and `project_question`, the same question asked only when a rule
  needs the answer later), `kinds.kind_of`, `function_scope().moved`, `origins.current`, `guarded`,
  `cpu_only`, `current_class`, `device_in_scope`.

Unknown is an answer: a rule that needs a fact the model does not have does not report.
"""

from .classes import ClassInfo, class_is_module
from .devices import is_device_move, is_device_name, move_target, moves_to_cpu
from .guards import GuardModel, is_exit_statement
from .kinds import DEVICE, FACTORIES, MODULE, NUMBER, TENSOR, ValueKinds
from .project import ProjectIndex, index_for
from .scopes import Scope
from .syntax import (block_statements, children, dotted_name, first_argument, has_star_kwargs, is_cuda_literal,
                     is_static_or_class_method, keyword, last_identifier, method_call, number_value,
                     parameter_names, positional_args, root_name, string_prefix, string_value)
from .walker import Analyzer

__all__ = [
    "DEVICE", "FACTORIES", "MODULE", "NUMBER", "TENSOR", "Analyzer", "ClassInfo", "GuardModel", "ProjectIndex", "Scope",
    "ValueKinds", "class_is_module", "block_statements", "children", "dotted_name", "first_argument",
    "has_star_kwargs", "is_cuda_literal", "is_device_move", "is_device_name", "is_exit_statement",
    "is_static_or_class_method", "keyword", "last_identifier", "method_call", "move_target", "moves_to_cpu", "number_value",
    "index_for", "parameter_names", "positional_args", "root_name", "string_prefix", "string_value",
]
