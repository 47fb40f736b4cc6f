"""Theano's graph and function names (issue 17): clone, gof.graph walks, Function.copy,
maker.fgraph, printing.Print/pp/pydotprint, scalar.upcast, Rop/Lop, MonitorMode, grad_clip,
and the sandbox.cuda / gpuarray probes."""
import os
import shutil

import numpy as np
import pytest

import theon as theano
import theon.tensor as T
from theon.gof import graph


# ---- graph walks ----

def test_owner_inputs_and_ancestors_follow_theanos_order():
    x, y = T.dvector("x"), T.dvector("y")
    s = theano.shared(np.ones(3), name="s")
    z = (x * 2 + y) * s
    assert x.owner is None and s.owner is None
    assert str(z.owner.op) == "Elemwise{mul}" and z.owner.outputs == [z]
    assert z.owner.inputs[1] is s  # the user's own wrapper comes back
    leaves = graph.inputs([z])
    assert leaves[0] is x and y in leaves and leaves[-1] is s  # depth first, inputs left to right
    assert any(isinstance(v, T.TensorConstant) and v.data.size == 1 and v.data.item() == 2.0 for v in leaves)
    anc = graph.ancestors([z])
    assert anc[0] is z and x in anc and len(anc) == len(set(anc))
    assert x not in graph.ancestors([z * 1], blockers=[z])  # the walk stops at a blocker
    order = graph.io_toposort([x, y], [z])
    assert order[0].inputs[0] is x and str(order[0].op) == "Elemwise{mul}"  # x * 2 first
    assert order[-1] == z.owner and len(order) == len(set(order))
    assert [str(n.op) for n in order].index("Elemwise{add}") > 0
    assert graph.orphans([x, y], [z]) and all(v.owner is None for v in graph.orphans([x, y], [z]))
    assert graph.is_in_ancestors(z.owner, (x * 2 + y).owner) is False  # a different node
    add = z.owner.inputs[0].owner
    assert graph.is_in_ancestors(z.owner, add)


def test_is_same_graph_compares_structure_constants_and_givens():
    x, y, w = T.dmatrix("x"), T.dmatrix("y"), T.dmatrix("w")
    assert graph.is_same_graph(T.exp(x) + y, T.exp(x) + y)
    assert not graph.is_same_graph(T.exp(x) + y, T.exp(x) + w)
    assert not graph.is_same_graph(x * (y * w), (x * y) * w)
    assert graph.is_same_graph(x * 2.0, x * 2.0) and not graph.is_same_graph(x * 2.0, x * 3.0)
    assert graph.is_same_graph(T.exp(x) + y, T.exp(x) + w, givens={y: w})
    assert not graph.is_same_graph(x.sum(axis=0), x.sum(axis=1))
    assert graph.equal_computations([x + y], [x + w], in_xs=[y], in_ys=[w])


def test_clone_replaces_and_leaves_the_original_unchanged():
    x, w = T.dvector("x"), T.dvector("w")
    y = T.exp(x) * 2
    y.name = "y"
    c = theano.clone(y, replace={x: w})
    assert c is not y and c.name == "y" and w in graph.inputs([c]) and x not in graph.inputs([c])
    assert x in graph.inputs([y])
    v = np.array([0.5, -1.0])
    np.testing.assert_allclose(theano.function([w], c)(v), np.exp(v) * 2)
    # A replacement built from the replaced variable (x -> x * 3).
    c2 = theano.clone(y, replace={x: x * 3})
    np.testing.assert_allclose(theano.function([x], c2)(v), np.exp(v * 3) * 2)
    # share_inputs=False: new inputs of the same type and name.
    c3 = theano.clone([y], share_inputs=False)[0]
    (new_x,) = [i for i in graph.inputs([c3]) if i.name == "x"]
    assert new_x is not x and new_x.type == x.type
    np.testing.assert_allclose(theano.function([new_x], c3)(v), np.exp(v) * 2)


def test_gof_graph_clone_between_inputs_and_outputs():
    from theon.gof import graph
    x, y = T.dvector("x"), T.dvector("y")
    out = T.exp(x) * y + 1
    (nx,), (nout,) = graph.clone([x], [out])
    assert nx is not x and nx.type == x.type and nx.name == "x"
    assert nout is not out
    ins = graph.inputs([nout])
    assert nx in ins and y not in ins  # the orphan y is copied too (copy_orphans follows copy_inputs)
    (ny,) = [v for v in ins if v.name == "y"]
    f = theano.function([nx, ny], nout)
    np.testing.assert_allclose(f(np.zeros(2), np.array([2.0, 3.0])), [3.0, 4.0])
    (sx,), (sout,) = graph.clone([x], [out], copy_inputs=False)
    assert sx is x and {x, y} <= set(graph.inputs([sout])) and sout is not out
    (cx,), (cout,) = graph.clone([x], [out], copy_inputs=True, copy_orphans=False)
    assert cx is not x and y in graph.inputs([cout])
    assert theano.clone is graph.clone_replace


def test_clone_checks_replacement_types():
    x = T.dvector("x")
    with pytest.raises(TypeError, match="dtype must match"):
        theano.clone(x * 2, replace={x: T.fvector("f")})
    with pytest.raises(TypeError, match="rank must match"):
        theano.clone(x * 2, replace={x: T.dmatrix("m")})
    with pytest.raises(TypeError, match="rank must match"):
        theano.clone(x * 2, replace={x: T.dmatrix("m")}, strict=False)
    s3 = T.TensorType("float64", shape=(3,))("s3")
    with pytest.raises(TypeError, match="strict=False"):
        theano.clone(s3 * 2, replace={s3: x})
    c = theano.clone(s3 * 2, replace={s3: x}, strict=False)
    np.testing.assert_allclose(theano.function([x], c)(np.ones(3)), 2 * np.ones(3))
    c4 = theano.clone(s3 * 2, replace={s3: T.TensorType("float64", shape=(4,))("s4")}, strict=False)
    assert c4.type.shape == (4,)


def test_clone_strict_false_retypes_the_graph_as_theano():
    # Theano re-makes each node above a replacement of another type (make_node): a float64
    # replacement for a float32 input gives float64 results, computed in float64.
    x = T.fvector("x")
    y = T.nnet.softmax(T.exp(x).dimshuffle("x", 0) * 2).sum(axis=0) + x.mean()
    d = T.dvector("d")
    c = theano.clone(y, replace={x: d}, strict=False)
    assert y.dtype == "float32" and c.dtype == "float64"
    v = np.array([0.1234567890123, -1.0, 2.5])
    e = np.exp(v)[None, :] * 2
    ref = (np.exp(e) / np.exp(e).sum(axis=1, keepdims=True)).sum(axis=0) + v.mean()
    np.testing.assert_allclose(theano.function([d], c)(v), ref, rtol=1e-14)
    # an op whose type cannot be re-made for another dtype says so
    with pytest.raises(NotImplementedError, match="CumSum"):
        theano.clone(T.cumsum(x) * 2, replace={x: d}, strict=False)
    # a row replaced by a matrix: the graph above is re-typed, not left claiming a size-1 dim
    r = T.row("r")
    m = T.matrix("m")
    out = theano.clone((r * 3).sum(axis=1), replace={r: m}, strict=False)
    assert out.broadcastable == (False,)
    np.testing.assert_allclose(theano.function([m], out)(np.ones((4, 2), dtype=m.dtype)), [6.0] * 4)


# ---- functions ----

def test_function_copy_swap_and_delete_updates():
    x = T.dscalar("x")
    acc = theano.shared(np.float64(0.0), name="acc")
    f = theano.function([x], acc * 1, updates={acc: acc + x}, name="f")
    assert f.maker.fgraph.inputs == [x] and len(f.maker.fgraph.outputs) == 1
    assert [str(n.op) for n in f.maker.fgraph.toposort()]
    g = f.copy()
    assert g.name == "f copy"
    f(1.0)
    g(2.0)  # the same shared variable
    assert acc.get_value() == 3.0
    other = theano.shared(np.float64(10.0), name="other")
    h = f.copy(swap={acc: other}, name="h")
    assert h.name == "h" and h(5.0) == 10.0
    assert other.get_value() == 15.0 and acc.get_value() == 3.0
    d = f.copy(delete_updates=True)
    assert d(100.0) == 3.0 and acc.get_value() == 3.0
    s = f.copy(share_memory=True)
    assert s._fn is f._fn and s.name == "f copy"
    s(1.0)
    assert acc.get_value() == 4.0
    with pytest.raises(TypeError, match="same type"):
        f.copy(swap={acc: theano.shared(np.zeros(2), name="v")})


# ---- printing ----

def test_print_reports_the_value_and_passes_it_through(capsys):
    x = T.dvector("x")
    p = theano.printing.Print("x is", attrs=("shape", "sum"))(x)
    y = (p * 2).sum()
    f = theano.function([x], y)
    assert f(np.arange(4.0)) == 12.0
    out = capsys.readouterr().out
    assert "x is shape = (4,)" in out and "x is sum = 6.0" in out
    seen = []
    q = theano.printing.Print("q", global_fn=lambda op, v: seen.append((op.message, v.copy())))(x * 3)
    g = theano.function([x], [q.sum(), theano.grad((q ** 2).sum(), x)])
    total, dx = g(np.ones(2))
    np.testing.assert_allclose(dx, [18.0, 18.0])  # gradients pass through: 2 * 3x * 3
    assert total == 6.0
    assert seen[0][0] == "q" and np.allclose(seen[0][1], [3.0, 3.0])


def test_print_order_follows_the_graph(capsys):
    x = T.dscalar("x")
    a = theano.printing.Print("first")(x + 1)
    b = theano.printing.Print("second")(a * 2)
    theano.function([x], b)(1.0)
    out = capsys.readouterr().out
    assert out.index("first") < out.index("second") and "second __str__ = 4.0" in out


def test_print_runs_before_a_later_failure_and_its_errors_are_named(capsys):
    x = T.dvector("x")
    checked = T.specify_shape(theano.printing.Print("reached")(x * 2), (3,))
    f = theano.function([x], checked)
    with pytest.raises(ValueError):
        f(np.ones(2))
    assert "reached __str__ = [2. 2.]" in capsys.readouterr().out  # printed as the node ran

    def boom(op, value):
        raise ZeroDivisionError("no")

    acc = theano.shared(np.zeros(1), name="acc")
    g = theano.function([x], theano.printing.Print("bad", global_fn=boom)(x).sum(), updates=[(acc, acc + 1)])
    with pytest.raises(RuntimeError, match="Print 'bad'.*ZeroDivisionError"):
        g(np.ones(2))
    assert acc.get_value()[0] == 0.0  # the failed call committed nothing


def test_pp_prints_expressions():
    x, y = T.dvector("x"), T.dvector("y")
    assert theano.printing.pp(x + y * 2) == "(x + (y * TensorConstant{2.0}))"
    assert theano.printing.pp([x - y, -x]) == "(x - y)\n(-x)"  # Theano parenthesizes every operator
    assert theano.printing.pp(T.exp(x)) == "exp(x)"
    named = T.exp(x)
    named.name = "e"
    assert theano.printing.pp(named + 1).startswith("(e + ")
    assert theano.printing.pp(named) == "exp(x)"  # the printed variable itself is expanded


def test_pprinter_tables_as_theano():
    from theon.printing import (PPrinter, PrinterState, OperatorPrinter, PatternPrinter, FunctionPrinter,
                                MemberPrinter, IgnorePrinter, LeafPrinter, DefaultPrinter, default_printer,
                                leaf_printer, pprint, greek, special)
    x, y = T.dvector("x"), T.dvector("y")
    m = T.dmatrix("m")
    assert pprint(T.dot(m, x)) == "(m \\dot x)"
    assert pprint(x ** 2 / y) == "((x ** TensorConstant{2.0}) / y)"
    assert pprint(m[1:3, 0] * 2) == "(m[1:3, 0] * TensorConstant{2.0})"
    i = T.lscalar("i")
    assert pprint(m[i]).startswith("Subtensor{")  # a symbolic index: the op as it prints
    assert pprint(T.cast(x, "float32")) == "convert_to_float32(x)"
    assert pprint(x.sum()).startswith("Sum{")  # no printer of its own: the op as it prints
    alpha = T.dscalar("alpha")
    assert pprint(alpha * x) == "(\\alpha * x)" and greek["alpha"] == "\\alpha"
    assert special["middle_dot"] == "\\dot"
    # assign: by op (node.op) or by condition; the most recent wins; clone_assign leaves pprint as it was
    p = pprint.clone_assign((T.exp(x)).owner.op, FunctionPrinter("e**"))
    assert p(T.exp(x) + 1) == "(e**(x) + TensorConstant{1.0})"
    assert pprint(T.exp(x) + 1) == "(exp(x) + TensorConstant{1.0})"
    p.assign(lambda pstate, r: r.owner is not None and r.owner.op.kind == "Sum", PatternPrinter("sum[%(0)s]"))
    assert p(x.sum()) == "sum[x]"
    p.assign(lambda pstate, r: r.owner is not None and r.owner.op.kind == "DimShuffle", MemberPrinter("T"))
    assert p(m.T) == "m.T" and pprint(m.T) == "m.T"
    assert pprint(m.dimshuffle("x", 0, 1) + 1).startswith("(m + ")
    assert pprint(T.dtensor3("t").dimshuffle(1, 0, 2)) == "DimShuffle{1, 0, 2}(t)"
    p.assign(lambda pstate, r: r.owner is not None and str(r.owner.op) == "Elemwise{neg}", IgnorePrinter())
    assert p(-x) == "x"
    q = PPrinter()
    q.assign(lambda pstate, r: True, DefaultPrinter())
    q.assign(lambda pstate, r: r.name is not None, LeafPrinter())
    assert q(T.exp(x)) == "Elemwise{exp}(x)"
    with pytest.raises(TypeError, match="condition"):
        q.assign("exp", leaf_printer)
    with pytest.raises(ValueError, match="assoc"):
        OperatorPrinter("+", 0, "sideways")
    # a PrinterState given explicitly: its memo is what was printed
    state = PrinterState(pprinter=pprint)
    assert pprint(x + y, state) == "(x + y)" and (x + y) not in state.memo
    assert default_printer.process(x, PrinterState(pprinter=pprint)) == "x"
    # process_graph: a small program, named results by name, updates with <-
    s = theano.shared(np.zeros(2), name="s")
    h = T.exp(x)
    h.name = "h"
    text = pprint([x], [h * 2], {s: s + h})
    assert text.splitlines() == ["h = exp(x)", "s <- (s + h)", "return (h * TensorConstant{2.0})"]
    assert pprint([x], [h * 2, h], [], True).splitlines()[0] == "inputs: x"


def test_pydotprint_writes_a_png(tmp_path):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed (scripts/setup.sh installs graphviz)")
    x = T.dmatrix("x")
    f = theano.function([x], T.tanh(x).sum())
    out = tmp_path / "graph.png"
    theano.printing.pydotprint(f, outfile=str(out), print_output_file=False)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = theano.printing.pydotprint([T.exp(x) * 2], format="svg", return_image=True)
    assert b"<svg" in svg and b"exp" in svg.lower()
    assert theano.printing.pydot_imported is True
    with pytest.raises(NotImplementedError, match="ifelse or scan"):
        theano.printing.pydotprint(f, outfile=str(out), cond_highlight=True)


def test_pydotprint_styles():
    from theon.printing import _dot_source, default_colorCodes
    x = T.dvector("x")
    e = T.exp(x)
    named = e * 2
    named.name = "twice"
    y = T.sum(named + 1)
    compact = _dot_source([y])
    full = _dot_source([y], compact=False)
    # compact: named intermediates only ("twice"); full: the unnamed ones too (exp's, add's).
    assert "twice TensorType(float64, vector)" in compact and compact.count("shape=ellipse") == 5
    assert full.count("shape=ellipse") == 7
    assert f'fillcolor="{default_colorCodes["Elemwise"]}"' in compact and 'fillcolor="green"' in compact
    outlined = _dot_source([y], high_contrast=False, colorCodes={"Sum": "orange", "Input": "cyan"})
    assert 'color="orange"' in outlined and 'color="cyan"' in outlined and "fillcolor" not in outlined
    simple = _dot_source([y], var_with_name_simple=True)
    assert 'label="twice"' in simple and 'label="x"' in simple
    if theano.printing.pydot_imported:
        png = theano.printing.pydotprint(y, compact=False, colorCodes={"Sum": "orange"}, return_image=True)
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(TypeError, match="colorCodes"):
        theano.printing.pydotprint(y, colorCodes=["red"], return_image=True)


# ---- gradients ----

def _fd_jvp(fun, x, v, eps=1e-6):
    return (fun(x + eps * v) - fun(x - eps * v)) / (2 * eps)


@pytest.mark.parametrize("name,build,np_fun", [
    ("tanh_dot", lambda x, W: T.tanh(T.dot(W, x)), lambda x, W: np.tanh(W @ x)),
    ("softmax", lambda x, W: T.nnet.softmax((W @ x).dimshuffle("x", 0))[0] if hasattr(T, "nnet") else None,
     lambda x, W: np.exp(W @ x) / np.exp(W @ x).sum()),
    ("prod_sqr", lambda x, W: T.sqr(x) * T.prod(x), lambda x, W: x ** 2 * np.prod(x)),
    ("cumsum_log", lambda x, W: T.cumsum(T.log(x + 3.0)), lambda x, W: np.cumsum(np.log(x + 3.0))),
])
def test_rop_and_lop_match_finite_differences(name, build, np_fun):
    rng = np.random.default_rng(3)
    x, v, u = T.dvector("x"), T.dvector("v"), T.dvector("u")
    W = T.dmatrix("W")
    y = build(x, W)
    xv, vv = rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 4)
    Wv = rng.uniform(-1, 1, (4, 4))
    jvp = theano.function([x, W, v], theano.Rop(y, x, v), on_unused_input="ignore")(xv, Wv, vv)
    np.testing.assert_allclose(jvp, _fd_jvp(lambda a: np_fun(a, Wv), xv, vv), rtol=1e-6, atol=1e-8)
    uv = rng.uniform(-1, 1, 4)
    vjp = theano.function([x, W, u], theano.Lop(y, x, u), on_unused_input="ignore")(xv, Wv, uv)
    # Lop is the transpose: u . J, checked against J built column by column from differences.
    J = np.stack([_fd_jvp(lambda a: np_fun(a, Wv), xv, e) for e in np.eye(4)], axis=1)
    np.testing.assert_allclose(vjp, uv @ J, rtol=1e-6, atol=1e-8)


def test_rop_of_several_outputs_and_wrt_and_errors():
    x, y = T.dvector("x"), T.dvector("y")
    vx, vy = T.dvector("vx"), T.dvector("vy")
    outs = theano.Rop([x * y, T.sin(x)], [x, y], [vx, vy])
    f = theano.function([x, y, vx, vy], outs)
    a, b, c, d = np.array([1.0, 2.0]), np.array([3.0, -1.0]), np.array([0.5, 1.0]), np.array([2.0, 0.0])
    r = f(a, b, c, d)
    np.testing.assert_allclose(r[0], b * c + a * d)
    np.testing.assert_allclose(r[1], np.cos(a) * c)
    with pytest.raises(ValueError, match="rank"):
        theano.Rop(x * 2, x, T.dmatrix("m"))
    with pytest.raises(ValueError, match="does not depend"):
        theano.Rop(T.dvector("z") * 2, x, vx)
    zeros = theano.Rop(T.dvector("z") * 2, x, vx, disconnected_outputs="ignore")
    z = [i for i in graph.inputs([zeros]) if i.name == "z"]
    assert theano.function(z, zeros, on_unused_input="ignore")(np.ones(3)).tolist() == [0, 0, 0]


def test_grad_clip_and_grad_scale():
    x = T.dvector("x")
    c = theano.gradient.grad_clip(x, -1.0, 1.0)
    g = theano.function([x], [c, theano.grad((c ** 2).sum(), x)])
    val, grad = g(np.array([-3.0, 0.25, 2.0]))
    np.testing.assert_allclose(val, [-3.0, 0.25, 2.0])
    np.testing.assert_allclose(grad, [-1.0, 0.5, 1.0])  # 2x clipped to [-1, 1]
    s = theano.gradient.grad_scale(x, -2.0)
    np.testing.assert_allclose(theano.function([x], theano.grad((s ** 2).sum(), x))(np.array([1.0, 3.0])),
                               [-4.0, -12.0])
    with pytest.raises(ValueError, match="lower bound"):
        theano.gradient.grad_clip(x, 1.0, -1.0)
    theano.gradient.verify_grad(lambda a: T.tanh(theano.gradient.grad_clip(a, -10.0, 10.0)), [np.array([0.3, -0.2])])


def test_consider_constant_gives_zero_gradient():
    x = T.dvector("x")
    g = theano.grad((theano.gradient.consider_constant(x) * x).sum(), x)
    np.testing.assert_allclose(theano.function([x], g)(np.array([2.0, 5.0])), [2.0, 5.0])


# ---- MonitorMode ----

def test_monitor_mode_calls_around_each_node_with_values():
    from theon.compile.monitormode import MonitorMode
    x = T.dvector("x")
    s = theano.shared(np.array([1.0, 2.0]), name="s")
    log = []

    def pre(i, node, fn):
        log.append(("pre", i, str(node.op), [v[0].copy() for v in fn.inputs], fn.outputs[0][0]))

    def post(i, node, fn):
        log.append(("post", i, str(node.op), [v[0].copy() for v in fn.outputs]))

    # optimizer=None: the nodes as built (no fusion), so each op is a node of its own
    f = theano.function([x], T.exp(x) * s, updates={s: s + 1},
                        mode=MonitorMode(pre_func=pre, post_func=post, optimizer=None))
    np.testing.assert_allclose(f(np.zeros(2)), [1.0, 2.0])
    assert [e[:3] for e in log] == [("pre", 0, "Elemwise{exp}"), ("post", 0, "Elemwise{exp}"),
                                    ("pre", 1, "Elemwise{mul}"), ("post", 1, "Elemwise{mul}"),
                                    ("pre", 2, "Elemwise{add}"), ("post", 2, "Elemwise{add}")]
    assert log[0][4] is None  # outputs are empty before the node runs
    np.testing.assert_allclose(log[1][3][0], [1.0, 1.0])
    np.testing.assert_allclose(log[3][3][0], [1.0, 2.0])
    np.testing.assert_allclose(s.get_value(), [2.0, 3.0])  # the update applied once


def test_monitor_mode_sees_the_compiled_program():
    # The nodes are those that run (after fusion), in the order explain() lists them, and
    # node.inputs/outputs are the optimized graph's variables (debugprint shows what ran).
    from theon.compile.monitormode import MonitorMode
    from theon.printing import debugprint
    x = T.dvector("x")
    y = T.dvector("y")
    seen = []

    def post(i, node, fn):
        seen.append((i, str(node.op), debugprint(node, file="str"), [o[0].copy() for o in fn.outputs],
                     [v[0].copy() for v in fn.inputs]))

    f = theano.function([x, y], T.exp(x) * y + 1, mode=MonitorMode(post_func=post))
    xv, yv = np.array([0.0, 1.0]), np.array([2.0, 3.0])
    out = f(xv, yv)
    ran = [str(n.op) for n in f.maker.fgraph.toposort()]
    assert [s[1] for s in seen] == ran and len(ran) == 1 and "Composite" in ran[0]
    assert "x" in seen[0][2] and "y" in seen[0][2]
    np.testing.assert_allclose(seen[0][3][0], out)
    np.testing.assert_allclose(seen[0][4][0], xv)
    np.testing.assert_allclose(seen[0][4][1], yv)
    # the values handed to the callbacks are copies: keeping them is safe across calls
    f(np.array([5.0, 5.0]), yv)
    np.testing.assert_allclose(seen[0][3][0], out)
    # the fast call path (exact NumPy arrays) runs the monitor too
    seen.clear()
    f(xv, yv)
    assert len(seen) == 1


def test_monitor_mode_post_func_sees_inputs_an_inplace_node_overwrote():
    from theon.compile.monitormode import MonitorMode
    x = T.dmatrix("x")
    seen = []

    def post(i, node, fn):
        seen.append((str(node.op), [v[0].copy() for v in fn.inputs], [o[0].copy() for o in fn.outputs]))

    # sin runs in place over cumsum's buffer: post_func still sees the values sin read.
    f = theano.function([x], T.sin(T.cumsum(x, axis=0)), mode=MonitorMode(post_func=post))
    assert "inplace" in str(f.maker.fgraph.toposort()[-1].op)
    xv = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(f(xv), np.sin(np.cumsum(xv, axis=0)))
    (op0, ins0, outs0), (op1, ins1, outs1) = seen
    assert op0.startswith("CumSum") and "sin" in op1
    np.testing.assert_allclose(ins1[0], np.cumsum(xv, axis=0))
    np.testing.assert_allclose(outs1[0], np.sin(np.cumsum(xv, axis=0)))


def test_monitor_mode_callbacks_do_not_keep_the_function_alive():
    import gc
    import weakref
    from theon.compile.monitormode import MonitorMode
    x = T.dvector("x")
    calls = []
    f = theano.function([x], x * 2, mode=MonitorMode(post_func=lambda i, node, fn: calls.append(f)))
    f(np.ones(2))
    assert calls == [f]
    ref = weakref.ref(f)
    del f, calls[:]
    gc.collect()
    assert ref() is None


def test_monitor_mode_detects_nan_before_updates():
    from theon.compile.monitormode import MonitorMode
    x = T.dvector("x")
    s = theano.shared(np.float64(0.0), name="s")

    def detect_nan(i, node, fn):
        for out in fn.outputs:
            if np.isnan(out[0]).any():
                raise FloatingPointError(f"NaN from {node.op}")

    f = theano.function([x], T.log(x).sum(), updates={s: s + 1}, mode=MonitorMode(post_func=detect_nan))
    assert f(np.ones(3)) == 0.0 and s.get_value() == 1.0
    with pytest.raises(FloatingPointError, match="log"):
        f(np.array([-1.0, 1.0]))
    assert s.get_value() == 1.0
    with pytest.raises(NotImplementedError):
        MonitorMode(linker="c")


def test_detect_nan_prints_the_node(capsys):
    from theon.compile.monitormode import MonitorMode, detect_nan
    x = T.dvector("x")
    f = theano.function([x], T.log(x) * 2, mode=MonitorMode(post_func=detect_nan))
    f(np.array([1.0, 2.0]))
    assert "NaN" not in capsys.readouterr().out
    out = f(np.array([-1.0, 2.0]))
    assert np.isnan(out[0])
    text = capsys.readouterr().out
    assert "*** NaN detected ***" in text and "log" in text and "Inputs : [array([-1.,  2.]), array([2.])]" in text and "Composite{mul(log(i0),i1)}" in text


# ---- scalar, devices ----

def test_scalar_upcast_and_types():
    assert theano.scalar.upcast("int8", "float32") == "float32"
    assert theano.scalar.upcast("int32", "int64") == "int64"
    assert theano.scalar.upcast("uint8", "int8") == "int16"
    assert theano.scalar.upcast("float32") == "float32"
    assert theano.scalar.upcast("floatX", "float64") == "float64"
    assert theano.scalar.float64("a").ndim == 0 and theano.scalar.float64("a").dtype == "float64"
    assert theano.scalar.float32 in theano.scalar.float_types


def test_device_probes_answer_from_theons_state():
    import theon.gpuarray
    import theon.sandbox.cuda as cuda
    ok = theano.cuda_status().ok
    assert cuda.cuda_available is bool(ok)
    theano.config.device = "cpu"
    assert cuda.cuda_enabled is False and theon.gpuarray.pygpu_activated is False
    theano.config.device = "cuda"
    assert cuda.cuda_enabled is bool(ok) and theon.gpuarray.pygpu_activated is bool(ok)
    theano.config.device = "cpu"
    if not ok:
        with pytest.raises(EnvironmentError, match="no CUDA device"):
            cuda.use("gpu", force=True)
    cuda.use("gpu0")
    assert theano.config.device == "cuda0"
    with pytest.raises(AttributeError):
        cuda.CudaNdarrayType  # noqa: B018


def test_walks_compute_no_test_values():
    x = T.dvector("x")
    y = T.exp(x * 2) + 1
    theano.config.compute_test_value = "raise"  # x has no test value: making a wrapper must not evaluate
    assert len(graph.ancestors([y])) == 6
    assert graph.inputs([y])[0] is x
