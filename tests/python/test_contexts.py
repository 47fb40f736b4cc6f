"""Contexts as users meet them (docs/guide/contexts.md): the `contexts` flag and its errors,
print_active_device, shared(target=), transfer(name), `with theon.context(name):`, gradients
through transfers, and the seed's programs (examples/seeds/seed4_two_contexts.py and
seed5_explicit_transfer.py) on two cpu contexts, and on two simulated GPUs where there are.
"""
import os
import runpy
import subprocess
import sys
import threading

import numpy as np
import pytest

import theon
import theon.gpuarray  # noqa: F401  (theano.gpuarray.type.get_context, list_contexts)
import theon.tensor as T
from theon import errors
from conftest import ROOT, subprocess_env

SEEDS = os.path.join(ROOT, "examples", "seeds")
STATUS = theon.cuda_status()
needs_two_gpus = pytest.mark.skipif(not STATUS.ok or STATUS.device_count < 2,
                                    reason=f"needs two CUDA devices: {STATUS.reason or STATUS.device_count}")


@pytest.fixture
def two_cpu_contexts():
    theon.config.print_active_device = False
    theon.config.contexts = "dev0->cpu;dev1->cpu"


def run(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(**env),
                          timeout=120)


# ---------------------------------------------------------------- the flag

MALFORMED = [  # (map, what the error says about the mapping at fault)
    ("dev0", "'dev0' is not of the form name->device"),
    ("dev0->cpu;dev1", "'dev1' is not of the form name->device"),
    ("a->b->cpu", "has more than one '->'"),
    ("->cpu", "'->cpu' has no name before '->'"),
    ("dev0->cpu;", "'' is an empty entry"),
    ("dev0->gpu0", "maps to 'gpu0', which is not a device"),
    ("dev0->opencl0:0", "maps to 'opencl0:0', which is not a device"),
    ("dev0->cpu;dev0->cpu", "'dev0->cpu' defines 'dev0' again (it maps to cpu)"),
    ("cuda0->cpu", "uses the name 'cuda0': names may not begin with 'cuda' or 'opencl'"),
    ("opencl1->cpu", "uses the name 'opencl1': names may not begin with 'cuda' or 'opencl'"),
    ("cpu->cpu", "uses the name 'cpu', the CPU's own context"),
]
if STATUS.ok:  # a GPU index past the last device; without any usable device, on_fallback decides (below)
    MALFORMED.append(("far->cuda99", "'far->cuda99' maps to cuda99, but there"))


@pytest.mark.parametrize("spec,why", MALFORMED)
def test_a_malformed_map_is_a_config_error_where_it_is_first_used(spec, why):
    theon.config.print_active_device = False
    theon.config.contexts = spec  # accepted when set: checked where used
    assert theon.config.contexts == spec
    x = T.fvector("x")
    uses = [lambda: theon.function([x], x * 2),
            lambda: theon.shared(np.ones(2, dtype=np.float32), target="cpu"),
            lambda: x.transfer("cpu"),
            lambda: theon.context("cpu").__enter__(),
            lambda: theon.gpuarray.type.list_contexts()]
    for use in uses:
        with pytest.raises(errors.ConfigError) as e:
            use()
        assert why in str(e.value)
        assert f"contexts='{spec}'" in str(e.value)
    assert isinstance(e.value, ValueError)
    assert (x * 2).owner is not None  # no scope was left entered


def test_a_gpu_context_without_its_device(capfd):
    # Where CUDA devices exist, an index past the last one is a ConfigError at the map's first
    # use. Where none can be used, a GPU context is what device=cuda0 is there: the map
    # resolves; compiling raises (on_fallback=raise) naming the context, or warns and runs on
    # the CPU (warn), the value kept on the host meanwhile.
    theon.config.print_active_device = False
    if STATUS.ok:
        theon.config.contexts = f"far->cuda{STATUS.device_count}"
        with pytest.raises(errors.ConfigError, match=f"maps to cuda{STATUS.device_count}, but there"):
            theon.shared(np.arange(3, dtype=np.float32), name="w", target="far")
        return
    theon.config.contexts = "far->cuda0"
    w = theon.shared(np.arange(3, dtype=np.float32), name="w", target="far")
    assert w.target == "far"
    saved = theon.config.on_fallback
    try:
        theon.config.on_fallback = "raise"
        with pytest.raises(errors.DeviceError, match=r"context far \(cuda0\)"):
            theon.function([], w * 2)
        theon.config.on_fallback = "warn"
        capfd.readouterr()
        f = theon.function([], w * 2)
        assert "context far (cuda0)" in capfd.readouterr().err
        np.testing.assert_array_equal(f(), np.arange(3, dtype=np.float32) * 2)
    finally:
        theon.config.on_fallback = saved


def test_every_malformed_map_fails_from_the_environment_too():
    # THEANO_FLAGS and THEON_FLAGS: importing works and prints nothing; the first use fails.
    code = ("import numpy as np, theon\n"
            "try:\n"
            "    theon.shared(np.ones(2), target='dev0')\n"
            "except theon.errors.ConfigError as e:\n"
            "    print('ConfigError:', e)\n")
    for variable, spec, why in [("THEANO_FLAGS", "dev0->cpu;dev1", "'dev1' is not of the form name->device"),
                                ("THEON_FLAGS", "dev0->cpu;dev1", "'dev1' is not of the form name->device"),
                                ("THEON_FLAGS", "cudax->cpu", "names may not begin with 'cuda' or 'opencl'"),
                                ("THEON_FLAGS", " d -> cuda01 ", "maps to 'cuda01', which is not a device")]:
        r = run(code, **{variable: "contexts=" + spec})
        assert r.returncode == 0, r.stderr
        assert "ConfigError: contexts: " in r.stdout and why in r.stdout and f"contexts='{spec.strip()}'" in r.stdout, \
            r.stdout
        assert r.stderr == "", r.stderr
    # A ',' ends the flag's value (Theano's format): the rest is a malformed flag, refused at import.
    r = run("import theon", THEON_FLAGS="contexts=dev0->cpu,dev1->cpu")
    assert r.returncode != 0 and "malformed entry 'dev1->cpu'" in r.stderr, r.stderr


def test_context_threads_errors_and_budgets(two_cpu_contexts):
    theon.config.context_threads = "dev0=1;dev1=1"
    f = theon.function([], theon.shared(np.ones(2), target="dev0") * 2)
    np.testing.assert_array_equal(f(), [2, 2])
    for spec, why in [("dev0=0", "gives '0' threads"), ("dev0", "is not of the form name=threads"),
                      ("dev3=2", "'dev3=2' names no context"), ("dev0=1;dev0=2", "a budget again")]:
        theon.config.context_threads = spec
        with pytest.raises(errors.ConfigError, match="context_threads: ") as e:
            theon.function([], theon.shared(np.ones(2)) * 2)
        assert why in str(e.value) and f"context_threads='{spec}'" in str(e.value)


def test_print_active_device_prints_each_mapping_once_to_stderr():
    # Nothing at import (and the CUDA library stays unloaded); each mapping once, on stderr,
    # when the map is first used; nothing with print_active_device=False.
    code = ("import numpy as np, theon\n"
            "maps = open('/proc/self/maps').read()\n"
            "print('cuda loaded at import:', 'libtheon_cuda' in maps, flush=True)\n"
            "import sys; print('--first use--', file=sys.stderr, flush=True)\n"
            "v = theon.shared(np.ones(2, dtype='float32'), target='dev0')\n"
            "maps = open('/proc/self/maps').read()\n"
            "print('cuda loaded by a cpu map:', 'libtheon_cuda' in maps, flush=True)\n"
            "print('--second use--', file=sys.stderr, flush=True)\n"
            "theon.function([], v.transfer('dev1') * 2)()\n")
    cpu = theon.gpuarray.type.get_context("cpu").description  # "cpu: <model>"
    r = run(code, THEON_FLAGS="contexts=dev0->cpu; dev1 -> cpu")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "cuda loaded at import: False\ncuda loaded by a cpu map: False\n"
    assert r.stderr == (f"--first use--\nMapped name dev0 to device {cpu}\nMapped name dev1 to device {cpu}\n"
                        "--second use--\n"), r.stderr
    r = run(code, THEANO_FLAGS="contexts=dev0->cpu;dev1->cpu,print_active_device=False")
    assert r.returncode == 0, r.stderr
    assert r.stderr == "--first use--\n--second use--\n"
    # A new map, set in the program, is printed at its first use.
    r = run("import theon, sys\n"
            "theon.config.print_active_device = True\n"
            "theon.config.contexts = 'big->cpu'\n"
            "print('--set--', file=sys.stderr, flush=True)\n"
            "theon.tensor.fvector().transfer('big')\n")
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"--set--\nMapped name big to device {cpu}\n"


def test_the_device_flag_names_the_default_context(two_cpu_contexts):
    theon.config.device = "cpu"
    assert theon.gpuarray.type.get_context(None).name == "cpu"
    assert theon.gpuarray.type.list_contexts() == ["dev0", "dev1"]
    assert theon.gpuarray.get_context("dev1") == ("dev1", "cpu", theon.gpuarray.type.get_context("cpu").description)
    with pytest.raises(theon.gpuarray.type.ContextNotDefined, match="context 'dev2' is not defined"):
        theon.gpuarray.type.get_context("dev2")
    assert issubclass(theon.gpuarray.type.ContextNotDefined, ValueError)


# ---------------------------------------------------------------- shared(target=)

def test_shared_target_stores_the_variable_on_the_context(two_cpu_contexts):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = theon.shared(a, "v", target="dev1")
    assert v.target == "dev1"
    assert theon.shared(a).target is None
    assert theon.shared(a, target="cpu").target == "cpu"
    np.testing.assert_array_equal(v.get_value(), a)
    v.set_value(a * 2)
    np.testing.assert_array_equal(v.get_value(), a * 2)
    f = theon.function([], v + 1, updates=[(v, v * 10)])
    np.testing.assert_array_equal(f(), a * 2 + 1)
    np.testing.assert_array_equal(v.get_value(), a * 20)
    with pytest.raises(ValueError) as e:
        theon.shared(a, "w", target="dev9")
    assert "context 'dev9' is not defined; the contexts are dev0 (cpu), dev1 (cpu), and each device by its name" \
        in str(e.value)
    assert "shared('w', target='dev9')" in str(e.value)
    with pytest.raises(TypeError):
        theon.shared(a, target=0)


# ---------------------------------------------------------------- transfer

def test_transfer_takes_context_names(two_cpu_contexts):
    x = T.fmatrix("x")
    for name in ("dev1", "cpu", "cuda0"):
        y = x.transfer(name)
        assert isinstance(y, theon.TensorVariable) and y.type == x.type
        assert theon._core.var_context(y._v) == name
    assert theon._core.var_context(T.transfer(x, "dev0")._v) == "dev0"
    assert theon._core.var_context(theon.shared(np.ones(2)).transfer("dev0")._v) == "dev0"
    for bad in ("dev2", "gpu", ""):
        with pytest.raises(ValueError, match=f"context '{bad}' is not defined") as e:
            x.transfer(bad)
        assert f"transfer(x, '{bad}')" in str(e.value)
    with pytest.raises(TypeError, match="a context name is a str"):
        x.transfer(1)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = theon.function([x], x.transfer("dev1").transfer("cpu") * 2)
    np.testing.assert_array_equal(f(a), a * 2)


def test_gradients_flow_through_transfers(two_cpu_contexts):
    x = T.fvector("x")
    w = theon.shared(np.array([1.0, 2.0, 3.0], dtype=np.float32), "w", target="dev0")
    y = (x.transfer("dev0") * w).transfer("dev1")
    cost = T.sum(y ** 2)
    gx, gw = theon.grad(cost, [x, w])
    f = theon.function([x], [cost, gx, gw])
    a = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    c, dx, dw = f(a)
    wv = w.get_value()
    np.testing.assert_allclose(c, np.sum((a * wv) ** 2), rtol=1e-6)
    np.testing.assert_allclose(dx, 2 * a * wv * wv, rtol=1e-6)
    np.testing.assert_allclose(dw, 2 * a * a * wv, rtol=1e-6)


# ---------------------------------------------------------------- context scopes

def test_a_context_scope_pins_the_nodes_made_inside_it(two_cpu_contexts):
    x = T.fvector("x")
    ctx = theon._core.var_context
    with theon.context("dev1") as scope:
        assert repr(scope) == "theon.context('dev1')"
        y = x * 2
        with theon.context("dev0"):
            z = y + 1
        back = z.transfer("cpu")  # a transfer keeps its target
        w = z - 1
        seen = []
        t = threading.Thread(target=lambda: seen.append(ctx((x * 3)._v)))
        t.start()
        t.join()
        f = theon.function([x], w)  # compiled inside a scope
    assert seen == [""]  # a scope is per thread
    assert [ctx(v._v) for v in (x, y, z, back, w, x * 4)] == ["", "dev1", "dev0", "cpu", "dev1", ""]
    np.testing.assert_array_equal(f(np.array([1, 2], dtype=np.float32)), [2, 4])
    with pytest.raises(ValueError, match="context 'dev5' is not defined"):
        with theon.context("dev5"):
            pass
    assert ctx((x * 5)._v) == ""
    with pytest.raises(TypeError):
        theon.context(None)
    # One object may be entered again, nested.
    c = theon.context("dev0")
    with c:
        with c:
            assert ctx((x + 1)._v) == "dev0"
        assert ctx((x + 1)._v) == "dev0"
    assert ctx((x + 1)._v) == ""


# ---------------------------------------------------------------- the seed's programs

def seed_program(path, contexts, size=None):
    """Runs a seed program under a context map; `size` replaces its 1024 x 1024 matrices (on the
    simulated GPU, whose reference GEMM takes seconds per 1024^3 product, the text is otherwise
    the seed's)."""
    theon.config.print_active_device = False
    theon.config.contexts = contexts
    if size is None:
        return runpy.run_path(path)
    with open(path) as f:
        code = f.read()
    assert code.count("(1024, 1024)") == 4
    g = {"__name__": "__seed__"}
    exec(compile(code.replace("(1024, 1024)", f"({size}, {size})"), path, "exec"), g)
    return g


# The simulated GPU (THEON_GPU_SIM=1) runs the seed program on 128 x 128 matrices.
GPU_SEED_SIZE = 128 if os.environ.get("THEON_GPU_SIM") == "1" else None


def check_seed_results(g):
    outs = g["f"]()
    want = [np.dot(g["v01"].get_value(), g["v02"].get_value()), np.dot(g["v11"].get_value(), g["v12"].get_value())]
    assert [o.shape for o in outs] == [w.shape for w in want] and all(o.dtype == np.float32 for o in outs)
    for got, expected in zip(outs, want):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)
    assert g["v01"].target == "dev0" and g["v12"].target == "dev1"


def check_transfer_seed(g):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = theon.function([g["v"]], [g["gv"] * 2, g["cv"]])
    gv2, cv = f(a)
    np.testing.assert_array_equal(gv2, a * 2)
    np.testing.assert_array_equal(cv, a)
    gx = theon.function([g["v"]], theon.grad(T.sum(g["cv"] * g["gv"]), g["v"]))(a)
    np.testing.assert_allclose(gx, 2 * a)


def test_the_seed_program_on_two_cpu_contexts():
    g = seed_program(os.path.join(SEEDS, "seed4_two_contexts.py"), "dev0->cpu;dev1->cpu")
    assert g["v01"].get_value().shape == (1024, 1024)  # the seed's text as it is
    check_seed_results(g)


def test_the_seed_transfer_example_on_a_cpu_context():
    check_transfer_seed(seed_program(os.path.join(SEEDS, "seed5_explicit_transfer.py"), "gpudev->cpu"))


@needs_two_gpus
@pytest.mark.parametrize("contexts", ["dev0->cuda0;dev1->cuda1", "dev0->cuda0;dev1->cuda0"])
def test_the_seed_program_on_gpus(contexts):
    g = seed_program(os.path.join(SEEDS, "seed4_two_contexts.py"), contexts, GPU_SEED_SIZE)
    check_seed_results(g)
    # Each product runs on its variables' context's device (placement: the first input with a context).
    dots = [n.device for n in g["f"].maker.fgraph.toposort() if str(n.op) == "Dot"]
    assert sorted(dots) == sorted(m.split("->")[1] for m in contexts.split(";")), dots


@needs_two_gpus
def test_the_seed_transfer_example_on_gpus():
    g = seed_program(os.path.join(SEEDS, "seed5_explicit_transfer.py"), "gpudev->cuda1")
    check_transfer_seed(g)
    f = theon.function([g["v"]], g["gv"] * 2)
    assert [n.device for n in f.maker.fgraph.toposort() if not str(n.op).startswith("Transfer")] == ["cuda1"]
    theon.config.contexts = "dev0->cuda0;dev1->cuda1"
    v = theon.shared(np.ones((2, 2), dtype=np.float32), target="dev1")
    assert v.target == "dev1"
    v.set_value(np.full((2, 2), 3, dtype=np.float32))
    np.testing.assert_array_equal(v.get_value(), np.full((2, 2), 3))
