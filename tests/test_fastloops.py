import os
import subprocess
import sys

import pytest

from ocolearn.fastloops import (
    EMITTERS_OFF,
    OPTION,
    THRESHOLD,
    jaxlib_version,
    with_fast_compiles,
    with_fast_loops,
)

SETTING = f"{OPTION}={THRESHOLD}"
EMITTERS_ADDED = with_fast_compiles("", jaxlib_version()) == EMITTERS_OFF  # for the jaxlib installed


def test_flag_is_added_or_merged():
    assert with_fast_loops("") == f"--xla_backend_extra_options={SETTING}"
    assert with_fast_loops("--xla_cpu_foo=1") == f"--xla_cpu_foo=1 --xla_backend_extra_options={SETTING}"
    merged = with_fast_loops("--xla_backend_extra_options=a=1 --x=2")
    assert merged == f"--xla_backend_extra_options=a=1,{SETTING} --x=2"
    kept = f"--xla_backend_extra_options={OPTION}=5"
    assert with_fast_loops(kept) == kept


def python(code, **env):
    environ = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "OCOLEARN_FAST_CPU_LOOPS")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**environ, **env})
    assert done.returncode == 0, done.stderr
    return done


def test_import_sets_the_flag_before_jax_starts():
    done = python("import os, ocolearn, jax; jax.numpy.ones(1).block_until_ready(); print(os.environ['XLA_FLAGS'])")
    assert SETTING in done.stdout
    assert (EMITTERS_OFF in done.stdout) == EMITTERS_ADDED
    done = python("import os, ocolearn; print(os.environ.get('XLA_FLAGS'))", OCOLEARN_FAST_CPU_LOOPS="0")
    assert done.stdout.strip() == "None"


def test_import_after_jax_started_warns():
    done = python("import jax; jax.numpy.ones(1).block_until_ready(); import ocolearn")
    assert "import ocolearn first" in done.stderr


def test_the_fusion_emitters_go_off_only_where_jaxlib_is_known_to_have_the_flag():
    # XLA stops the process on a flag it does not know: never added outside EMITTERS_KNOWN.
    assert with_fast_compiles("", (0, 10)) == EMITTERS_OFF
    assert with_fast_compiles("--a=1", (0, 7)) == f"--a=1 {EMITTERS_OFF}"
    for version in [(0, 6), (0, 11), (1, 0), None]:
        assert with_fast_compiles("--a=1", version) == "--a=1"
    own = "--xla_cpu_use_fusion_emitters=true"
    assert with_fast_compiles(own, (0, 10)) == own


def test_jaxlib_version_is_read_without_importing_jaxlib():
    import jaxlib.version

    assert jaxlib_version() == tuple(int(part) for part in jaxlib.version.__version__.split(".")[:2])
    done = python("import sys, ocolearn; print('jaxlib' in sys.modules)")
    assert done.stdout.strip() == "False"


def runs():
    """Dense runs with a ball, AdaGrad's per-coordinate rates, sparse Pegasos (gathers and
    scatters), multiclass MIRA: every leaf of their results, as hexadecimal bytes."""
    import jax
    import numpy as np

    from ocolearn import MIRA, OGD, AdaGrad, L2Ball, Pegasos, Sparse, run

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 8)).astype(np.float32)
    y = np.sign(X @ rng.normal(size=8)).astype(np.float32)
    columns = rng.integers(0, 2**12, size=(3000, 5)).astype(np.int32)
    sparse = Sparse(columns, rng.random((3000, 5)).astype(np.float32), 2**12)
    results = [
        run(OGD(projection=L2Ball(1.5)), X, X[:, 0] - X[:, 1], trace=False),
        run(AdaGrad(0.5, projection=L2Ball(0.7)), X, y, trace=False),
        run(Pegasos(1e-3, True), sparse, y),
        run(MIRA(classes=3), X, (y > 0).astype(np.int32) + (X[:, 2] > 1), trace=False),
    ]
    return [np.asarray(leaf).tobytes().hex() for leaf in jax.tree.leaves(results)]


@pytest.mark.slow
@pytest.mark.skipif(not EMITTERS_ADDED, reason="the flag is not added for the jaxlib installed")
def test_the_fusion_emitters_change_no_bit():
    # This process runs with them off (ocolearn's default); a process of its own with them on
    # (the user's own XLA_FLAGS win) gives the same bits.
    assert EMITTERS_OFF in os.environ["XLA_FLAGS"]
    code = "import ocolearn, test_fastloops; print(test_fastloops.runs())"
    on = python(code, XLA_FLAGS="--xla_cpu_use_fusion_emitters=true", PYTHONPATH=os.path.dirname(__file__))
    assert on.stdout.strip() == str(runs()) and len(on.stdout) > 1000
