"""Locate and import the generated protobuf module partita_pb2.

The build writes partita_pb2.py into its build directory (proto/meson.build). It is looked up,
in order, in this package's directory, in the directory named by env PARTITA_PB2_DIR, and
finally generated with `protoc --python_out` into a temporary directory from proto/partita.proto
found relative to this file (or under env PARTITA_ROOT).
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

_MODULE = "partita_pb2"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_from(path):
    spec = importlib.util.spec_from_file_location(_MODULE, path)
    module = importlib.util.module_from_spec(spec)
    # Registered before exec so a second import finds it: the descriptor pool refuses to
    # register the same .proto file twice.
    sys.modules[_MODULE] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_MODULE]
        raise
    return module


def _find_proto():
    candidates = []
    root = os.environ.get("PARTITA_ROOT")
    if root:
        candidates.append(os.path.join(root, "proto", "partita.proto"))
    candidates.append(os.path.join(_HERE, "..", "..", "..", "proto", "partita.proto"))
    for path in candidates:
        if os.path.isfile(path):
            return os.path.abspath(path)
    return None


def _generate():
    proto = _find_proto()
    if proto is None:
        raise ImportError("partita_pb2 not found: build the project (meson) and set "
                          "PARTITA_PB2_DIR, or set PARTITA_ROOT to the source tree")
    protoc = shutil.which("protoc")
    if protoc is None:
        raise ImportError("partita_pb2 not found and protoc is not installed")
    outdir = tempfile.mkdtemp(prefix="partita_pb2_")
    proc = subprocess.run([protoc, "-I", os.path.dirname(proto), "--python_out", outdir, proto],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise ImportError("protoc failed on %s: %s" % (proto, proc.stderr.strip()))
    return os.path.join(outdir, _MODULE + ".py")


def load():
    if _MODULE in sys.modules:
        return sys.modules[_MODULE]
    dirs = [_HERE]
    if os.environ.get("PARTITA_PB2_DIR"):
        dirs.append(os.environ["PARTITA_PB2_DIR"])
    for d in dirs:
        path = os.path.join(d, _MODULE + ".py")
        if os.path.isfile(path):
            return _load_from(path)
    path = _generate()
    try:
        return _load_from(path)
    finally:
        # The loaded module no longer needs its file.
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


pb = load()
