"""Graph nodes: labels, run-time shapes and their errors, output structures."""

import pytest
from cupric.jit._graph import Graph, build_output, node_shape, reduced_shape


def test_reduced_shapes():
    assert reduced_shape((3, 4, 5), (0, 2), False) == (4,)
    assert reduced_shape((3, 4, 5), (0, 2), True) == (1, 4, 1)


def test_a_broadcast_error_names_the_op_and_the_line():
    g = Graph()
    a = g.add("input", (), {"index": 0}, None, 1, (False,), None)
    b = g.add("input", (), {"index": 1}, None, 1, (False,), None)
    n = g.add("ufunc", (a.id, b.id), {"name": "add"}, None, 1, (False,), ("model.py", 12, "    return a + b\n"))
    shapes = {a.id: (3,), b.id: (4,)}
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\).*in add at model.py:12: return a \+ b"):
        node_shape(n, shapes.get)
    shapes[b.id] = (1,)
    assert node_shape(n, shapes.get) == (3,)


def test_output_structures_rebuild():
    env = {0: "a", 1: "b"}
    out = ("dict", {"x": ("node", 0), "y": ("tuple", [("node", 1), ("literal", 3)]), "z": ("list", [])})
    assert build_output(out, env) == {"x": "a", "y": ("b", 3), "z": []}
    g = Graph()
    g.output = out
    assert g.output_ids() == [0, 1]
