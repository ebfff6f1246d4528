"""Installs client/python the way a user does, for the tests of this directory: a wheel built
by `pip wheel --no-index` from a copy of client/python (the source tree
stays clean), installed into a fresh virtual environment with the system site packages."""

import glob
import os
import shutil
import subprocess
import sys

SYSTEM_PYTHON = "/usr/bin/python3"


def clean_env():
    env = dict(os.environ)
    for k in ("PARTITA_PB2_DIR", "PYTHONPATH", "PARTITA_ROOT"):
        env.pop(k, None)
    env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 600)
    return subprocess.run(args, **kw)


def skip_unless_installable(extra_modules=()):
    """Exit 77 (meson: skipped) with a message when what pip needs is missing."""
    def need(cond, why):
        if not cond:
            print("SKIP: " + why)
            sys.exit(77)
    need(os.path.isfile(SYSTEM_PYTHON), "no /usr/bin/python3")
    mods = ["cffi", "numpy", "google.protobuf", "venv", "pip"] + list(extra_modules)
    probe = run([SYSTEM_PYTHON, "-c", "import " + ", ".join(mods)])
    need(probe.returncode == 0, "Debian's Python packages for %s are needed: %s"
         % (", ".join(mods), probe.stderr.strip()[-200:]))
    need(shutil.which("protoc") is not None, "protoc (protobuf-compiler) not installed")


def build_wheel(root, tmp):
    src = os.path.join(tmp, "src")
    shutil.copytree(os.path.join(root, "client", "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__",
                                                  "partita_pb2.py"))
    env = clean_env()
    env["PARTITA_SOURCE_ROOT"] = root
    wheels = os.path.join(tmp, "wheels")
    # as a user types it: no --no-build-isolation (there is no pyproject.toml, so pip builds
    # with the setuptools and cffi at hand), and --no-index: nothing may be fetched
    p = run([SYSTEM_PYTHON, "-m", "pip", "wheel", "--no-index", "--no-deps", "-w", wheels, src],
            env=env, cwd=tmp)
    if p.returncode != 0:
        raise AssertionError("pip wheel failed:\n" + p.stdout[-3000:] + p.stderr[-3000:])
    return glob.glob(os.path.join(wheels, "partita-*.whl"))[0]


def make_venv(tmp, wheel):
    """A fresh venv (system site packages) with the wheel installed; answers its python."""
    venv = os.path.join(tmp, "venv")
    p = run([SYSTEM_PYTHON, "-m", "venv", "--system-site-packages", venv])
    if p.returncode != 0:
        raise AssertionError("venv: " + p.stderr)
    python = os.path.join(venv, "bin", "python")
    p = run([python, "-m", "pip", "install", "--no-index", "--no-deps", wheel],
            env=clean_env(), cwd=tmp)
    if p.returncode != 0:
        raise AssertionError("pip install: " + p.stdout[-2000:] + p.stderr[-2000:])
    return venv, python
