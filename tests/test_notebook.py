"""Jupyter notebooks: code cells linted as one program, IPython syntax skipped in
place, findings at (cell, line, col), changed cells written back in the file's layout."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from flake8_torchdevice.engine import Options, SourceError
from flake8_torchdevice.fix import fix_notebook_text
from flake8_torchdevice.notebook import (cells_from_program, json_layout, lint_notebook,
                                         lint_notebook_text, parse_notebook, program, python_cell, write_cells)


def code(source, **extra):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source, **extra}


def markdown(source):
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def notebook(*cells, language="python"):
    return {"cells": list(cells),
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"}},
            "nbformat": 4, "nbformat_minor": 5}


def as_file(data, indent=1, ensure_ascii=False):
    """As Jupyter writes notebooks (one-space indent, non-ASCII kept, final newline)."""
    return json.dumps(data, indent=indent, ensure_ascii=ensure_ascii) + "\n"


def found(data, **options):
    """(cell, line, 1-based col, code) as `check` prints them."""
    results = lint_notebook_text(as_file(data), "n.ipynb", Options(**options))
    return [(cell, f.line, f.col + 1, f.code) for cell, f in results]


def lines(text):
    """Cell source as Jupyter stores it: a list of lines, each but the last with its newline."""
    return textwrap.dedent(text).strip("\n").splitlines(keepends=True)


# ------------------------------------------------------------------ positions


def test_cells_numbered_as_ruff_does_lines_and_columns_within_the_cell():
    data = notebook(
        markdown("# Training"),
        code(lines("""
            import torch
            model = Net()
        """)),
        markdown(["Move it:\n", "on the GPU"]),
        code("x = 1\nmodel = model.cuda()"),  # `source` as one string
        code([]),
        code(lines("""
            def step(batch):
                return batch.cuda(non_blocking=True)
        """)),
    )
    assert found(data) == [(4, 2, 15, "TDV101"), (6, 2, 18, "TDV101")]


def test_cells_are_one_program_a_flag_set_in_cell_1_guards_cell_5():
    guarded = notebook(
        code(["import torch\n", "ready = torch.cuda.device_count() > 0"]),
        markdown("text"), code("y = 2"), markdown("more"),
        code(["if ready:\n", "    model = model.cuda()"]),
    )
    assert found(guarded) == []
    # the same cell without the flag's definition before it is reported
    unguarded = notebook(code(["import torch\n", "x = 1"]), code(["if ready:\n", "    model = model.cuda()"]))
    assert found(unguarded) == [(2, 2, 19, "TDV101")]


def test_noqa_in_a_cell():
    data = notebook(code(["import torch\n", "a = m.cuda()  # noqa: TDV101\n", "b = m.cuda()  # noqa: E501\n",
                          "c = m.cuda()  # noqa"]))
    assert found(data) == [(1, 3, 7, "TDV101")]


def test_options_apply():
    data = notebook(code(["import torch\n", "a = m.cuda()\n", "d = torch.device('cuda')"]))
    assert found(data) == [(1, 2, 7, "TDV101"), (1, 3, 18, "TDV102")]
    assert found(data, enabled=frozenset({"TDV102"})) == [(1, 3, 18, "TDV102")]


# ------------------------------------------------------------------ IPython syntax


def test_ipython_lines_become_pass_keeping_lines_and_columns():
    cell = python_cell(0, textwrap.dedent("""\
        %matplotlib inline
        !pip install torch
        files = !ls -la
        out = %sx echo hi
        ?torch.zeros
        torch.zeros?
        torch.zeros??
        %time y = m.cuda()
        for i in range(3):
            !echo {i} \\
        continued
            %time z = m.cuda()
        value = (a
        %b)
        text = '''
        !not a shell escape
        '''
        r = a % b  # what?
        x = m.cuda()
    """))
    assert cell.python == textwrap.dedent("""\
        pass
        pass
        pass
        pass
        pass
        pass
        pass
        pass
        for i in range(3):
            pass
            pass
            pass
        value = (a
        %b)
        text = '''
        !not a shell escape
        '''
        r = a % b  # what?
        x = m.cuda()
    """)
    assert cell.escaped == [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11]


def test_findings_after_ipython_lines_keep_their_positions():
    data = notebook(code(["%load_ext autoreload\n", "!nvidia-smi\n", "x = m.cuda()\n", "%time y = n.cuda()\n",
                          "    z = k.cuda()"]))
    # line 4 is a magic (not linted), line 5 an unexpected indent
    assert found(data) == [(1, 5, 5, "E999")]
    data = notebook(code(["%load_ext autoreload\n", "!nvidia-smi\n", "x = m.cuda()\n", "%time y = n.cuda()\n",
                          "z = k.cuda()"]))
    assert found(data) == [(1, 3, 7, "TDV101"), (1, 5, 7, "TDV101")]


def test_cell_magics_with_a_python_body_are_linted_others_are_not():
    data = notebook(
        code(["%%timeit\n", "y = torch.ones(2).cuda()"]),
        code(["%%time -o result\n", "x = m.cuda()"]),
        code(["%%capture captured\n", "x = m.cuda()"]),
        code(["%%bash\n", "echo x.cuda()\n", "python -c 'import torch; torch.zeros(1).cuda()'"]),
        code(["%%writefile train.py\n", "model = model.cuda()"]),
        code(["%%html\n", "<b>x.cuda()</b>"]),
    )
    assert found(data) == [(1, 2, 19, "TDV101"), (2, 2, 7, "TDV101"), (3, 2, 7, "TDV101")]


def test_cell_of_magics_only_and_blank_cells():
    data = notebook(code("%pwd"), code("\n\n"), code(""), code(["!ls\n", "!pwd"]), code("x = m.cuda()"))
    assert found(data) == [(5, 1, 7, "TDV101")]


# ------------------------------------------------------------------ broken and unusual notebooks


def test_a_cell_python_cannot_parse_is_reported_the_others_are_linted():
    data = notebook(
        code(["import torch\n", "a = m.cuda()"]),
        code(["def broken(:\n", "    pass"]),
        code(["for x in y:\n", "print(x)"]),
        code("b = n.cuda()"),
    )
    assert found(data) == [(1, 2, 7, "TDV101"), (2, 1, 13, "E999"), (3, 2, 2, "E999"), (4, 1, 7, "TDV101")]
    results = lint_notebook_text(as_file(data))
    assert results[1][1].message == "SyntaxError: invalid syntax"
    assert results[2][1].message == "IndentationError: expected an indented block after 'for' statement on line 1"


def test_a_cell_that_only_parses_with_the_next_one_is_a_syntax_error():
    # Jupyter runs cells one by one: an open bracket does not continue into the next cell
    data = notebook(code("x = (1,"), code("2)\ny = m.cuda()"))
    assert [(cell, code) for cell, _, _, code in found(data)] == [(1, "E999"), (2, "E999")]


@pytest.mark.parametrize("data", [
    notebook(),
    notebook(markdown("# only text"), {"cell_type": "raw", "metadata": {}, "source": "x.cuda()"}),
    notebook(code([]), code("")),
    notebook(code("x = m.cuda()"), language="R"),
    {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
    {"cells": [code("x = 1")]},  # no metadata at all
])
def test_nothing_to_report(data):
    assert found(data) == []


@pytest.mark.parametrize("text, reason", [
    ("", "not a Jupyter notebook: invalid JSON: Expecting value: line 1 column 1 (char 0)"),
    ("import torch\nx.cuda()\n", "not a Jupyter notebook: invalid JSON: Expecting value: line 1 column 1 (char 0)"),
    ('{"cells": [', "not a Jupyter notebook: invalid JSON: Expecting value: line 1 column 12 (char 11)"),
    ('{"worksheets": []}', "not a Jupyter notebook in nbformat 4: no list of cells"),
    ("[1, 2]", "not a Jupyter notebook in nbformat 4: no list of cells"),
    ('{"cells": [{"cell_type": "code", "source": 3}]}',
     "not a Jupyter notebook: cell 1 has a source that is not text"),
])
def test_not_a_notebook(text, reason):
    with pytest.raises(SourceError) as raised:
        lint_notebook_text(text)
    assert raised.value.reason == reason


def test_lint_notebook_reads_the_file_with_a_bom_and_crlf(tmp_path):
    path = tmp_path / "n.ipynb"
    text = as_file(notebook(code(["import torch\r\n", "x = m.cuda()"]))).replace("\n", "\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert [(cell, f.line, f.col, f.code) for cell, f in lint_notebook(str(path))] == [(1, 2, 6, "TDV101")]
    path.write_bytes(b'{"cells": ["\xff"]}')
    with pytest.raises(SourceError, match="not UTF-8"):
        lint_notebook(str(path))


# ------------------------------------------------------------------ writing back


NON_ASCII = notebook(
    markdown("Température: 25°C"),
    code(["import torch\n", "# modèle\n", "%matplotlib inline\n", "model = Net().cuda()"],
         outputs=[{"name": "stdout", "output_type": "stream", "text": ["ok ✓\n"]}], execution_count=3),
    code("y = 2\n"),
)


@pytest.mark.parametrize("indent", [1, 2, 4, "\t", None])
@pytest.mark.parametrize("ensure_ascii", [False, True])
@pytest.mark.parametrize("final_newline", [True, False])
def test_write_back_changes_only_the_cell_and_keeps_the_layout(indent, ensure_ascii, final_newline):
    original = json.dumps(NON_ASCII, indent=indent, ensure_ascii=ensure_ascii) + ("\n" if final_newline else "")
    parsed = parse_notebook(original)
    new = write_cells(parsed, {1: "import torch\n# modèle\n%matplotlib inline\nmodel = Net().to(device)"})
    expected = json.loads(original)
    expected["cells"][1]["source"] = ["import torch\n", "# modèle\n", "%matplotlib inline\n",
                                      "model = Net().to(device)"]
    assert new == json.dumps(expected, indent=indent, ensure_ascii=ensure_ascii) + ("\n" if final_newline else "")
    assert write_cells(parsed, {}) == original


def test_write_back_keeps_key_order_and_a_string_source():
    data = {"nbformat": 4, "nbformat_minor": 2, "metadata": {"z": 1, "a": 2},
            "cells": [{"source": "x = m.cuda()\n", "outputs": [], "cell_type": "code", "metadata": {},
                       "execution_count": 1}]}
    original = json.dumps(data, indent=2)
    new = write_cells(parse_notebook(original), {0: "x = m.to(device)\n"})
    data["cells"][0]["source"] = "x = m.to(device)\n"
    assert new == json.dumps(data, indent=2)


def test_layout_of_a_file_no_candidate_reproduces_falls_back_to_its_indent():
    text = '{\n   "cells": [],   "metadata": {}\n}'
    layout = json_layout(text, json.loads(text))
    assert (layout.indent, layout.final_newline) == (3, False)


def test_program_edits_map_back_to_cells():
    nb = parse_notebook(as_file(notebook(
        code(["import torch\n", "!pip install x"]),
        markdown("between"),
        code(["%time a = 1\n", "model = model.cuda()\n"]),
        code("unchanged = 1"),
    )))
    joined = program(nb.cells)
    assert joined.source == "import torch\npass\npass\nmodel = model.cuda()\nunchanged = 1\n"
    edited = ("import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\npass\n"
              "pass\nmodel = model.to(device)\nunchanged = 1\n")
    # the added lines go to the cell before them; IPython lines come back; cells keep their final newline or not
    assert cells_from_program(joined, edited) == {
        0: "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n!pip install x",
        2: "%time a = 1\nmodel = model.to(device)\n",
    }
    assert cells_from_program(joined, joined.source) == {}


def test_end_positions_move_with_the_finding_into_the_cell():
    data = notebook(code("x = 1"), code(["import torch\n", "y = torch.load(\n", "    'm.pt')"]))
    ((cell, finding),) = lint_notebook_text(as_file(data))
    assert (cell, finding.line, finding.col, finding.end_line, finding.end_col) == (2, 2, 4, 3, 11)


def test_fix_writes_back_only_the_changed_cells():
    data = notebook(
        code(["import torch\n", "%load_ext autoreload\n", "a = torch.load('a.pt')"],
             outputs=[{"name": "stdout", "output_type": "stream", "text": ["loaded ✓\n"]}], execution_count=1),
        markdown("Now the model:"),
        code("model = Net()\nmodel = model.cuda()\n"),
        code(["!ls\n", "b = torch.load('b.pt')  # noqa: TDV301\n", "c = torch.load('c.pt')"]),
        code(["def broken(:\n", "    torch.load('d.pt')"]),
    )
    text = as_file(data)
    new_text, fixed, remaining = fix_notebook_text(text, "n.ipynb")
    expected = json.loads(text)
    expected["cells"][0]["source"][2] = "a = torch.load('a.pt', map_location=\"cpu\")"
    expected["cells"][3]["source"][2] = "c = torch.load('c.pt', map_location=\"cpu\")"
    assert new_text == as_file(expected)
    assert [(cell, f.line, f.col, f.code) for cell, f in fixed] == [(1, 3, 4, "TDV301"), (4, 3, 4, "TDV301")]
    assert [(cell, f.line, f.col, f.code) for cell, f in remaining] == [(3, 2, 14, "TDV101")]
    # nothing left to fix: the same text back
    assert fix_notebook_text(new_text, "n.ipynb")[0] == new_text


def test_fix_command_rewrites_a_notebook_file_and_lists_what_is_left(tmp_path, capsys):
    from flake8_torchdevice.fix import run_fix

    data = notebook(code(["import torch\n", "a = torch.load('a.pt')"]), markdown("then"),
                    code("model = model.cuda()"))
    path = tmp_path / "n.ipynb"
    original = json.dumps(data, indent=2, ensure_ascii=True)  # not Jupyter's layout, no final newline
    path.write_bytes(b"\xef\xbb\xbf" + original.encode("utf-8"))
    assert run_fix([str(path)], Options()) == 1
    out, err = capsys.readouterr()
    assert out == f"{path}:cell 3:1:15: TDV101 " + lint_notebook(str(path))[0][1].message + "\n"
    assert err == "Fixed 1 finding in 1 file.\n"
    data["cells"][0]["source"][1] = "a = torch.load('a.pt', map_location=\"cpu\")"
    assert path.read_bytes() == b"\xef\xbb\xbf" + json.dumps(data, indent=2, ensure_ascii=True).encode("utf-8")
    assert run_fix([str(path)], Options()) == 0  # nothing left to fix
    assert capsys.readouterr() == (out, "Fixed 0 findings in 0 files.\n")
    path.write_text("{not json")
    assert run_fix([str(path)], Options()) == 1
    assert capsys.readouterr().err.startswith(f"{path}: skipped: not a Jupyter notebook: invalid JSON")


# ------------------------------------------------------------------ the commands


def test_check_finds_notebooks_in_folders_and_prints_cells(tmp_path):
    from conftest import run_module

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("import torch\nx = m.cuda()\n")
    (tmp_path / "src" / "explore.ipynb").write_text(as_file(notebook(
        markdown("# Exploring"), code(["import torch\n", "%matplotlib inline\n", "model = Net().cuda()"]),
        code(["def broken(:\n", "    pass"]))))
    (tmp_path / "src" / "notes.txt").write_text("x.cuda()\n")
    # Jupyter's autosave copies: the notebook is skipped (flake8 reads no notebooks),
    # a .py file is linted as flake8 lints it
    (tmp_path / "src" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "src" / ".ipynb_checkpoints" / "explore-checkpoint.ipynb").write_text(
        (tmp_path / "src" / "explore.ipynb").read_text())
    (tmp_path / "src" / ".ipynb_checkpoints" / "train-checkpoint.py").write_text("import torch\ny = m.cuda()\n")
    (tmp_path / "bad.ipynb").write_text("{not json")
    result = run_module("flake8_torchdevice", ["check", "src", "bad.ipynb"], cwd=str(tmp_path))
    message = ".cuda() hard-codes CUDA and fails without a GPU; use .to(device) with a device chosen at run time"
    assert result.stdout.splitlines() == [
        os.path.join("src", ".ipynb_checkpoints", "train-checkpoint.py") + f":2:7: TDV101 {message}",
        os.path.join("src", "explore.ipynb") + f":cell 2:3:15: TDV101 {message}",
        os.path.join("src", "explore.ipynb") + ":cell 3:1:13: E999 SyntaxError: invalid syntax",
        os.path.join("src", "train.py") + f":2:7: TDV101 {message}",
    ]
    assert result.stderr.startswith("bad.ipynb: skipped: not a Jupyter notebook: invalid JSON")
    assert result.returncode == 1
    named = os.path.join("src", ".ipynb_checkpoints", "explore-checkpoint.ipynb")
    result = run_module("flake8_torchdevice", ["check", named], cwd=str(tmp_path))
    assert result.stdout.splitlines()[0] == named + f":cell 2:3:15: TDV101 {message}"


def test_fix_command_on_a_notebook(tmp_path):
    from conftest import run_module

    data = notebook(code(["import torch\n", "!nvidia-smi\n", "state = torch.load('m.pt')"]))
    (tmp_path / "n.ipynb").write_text(as_file(data))
    result = run_module("flake8_torchdevice", ["fix", "."], cwd=str(tmp_path))
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "Fixed 1 finding in 1 file.\n")
    data["cells"][0]["source"][2] = "state = torch.load('m.pt', map_location=\"cpu\")"
    assert (tmp_path / "n.ipynb").read_text() == as_file(data)
