import os
import subprocess
import sys

from ocolearn.fastloops import OPTION, THRESHOLD, with_fast_loops

SETTING = f"{OPTION}={THRESHOLD}"


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
    done = python("import os, ocolearn; print(os.environ.get('XLA_FLAGS'))", OCOLEARN_FAST_CPU_LOOPS="0")
    assert done.stdout.strip() == "None"


def test_import_after_jax_started_warns():
    done = python("import jax; jax.numpy.ones(1).block_until_ready(); import ocolearn")
    assert "import ocolearn first" in done.stderr
