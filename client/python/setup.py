"""Builds the `partita` package: the daemon client (pure Python), its protocol module
partita_pb2 generated from proto/partita.proto with protoc, and the engine compiled into the
extension partita._engine (cffi, API mode; engine_build.py).

    pip install ./client/python         # Debian: python3-cffi, python3-setuptools, protobuf-compiler

Everything comes from Debian packages; nothing is fetched. There is deliberately no
pyproject.toml: with one, pip would build in an isolated environment and try to download
setuptools and cffi from PyPI (offline, that fails) unless given --no-build-isolation;
without one it builds with the setuptools and cffi installed (Debian's)."""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.environ.get("PARTITA_SOURCE_ROOT", os.path.join(HERE, "..", "..")))
PROTO = os.path.join(ROOT, "proto", "partita.proto")


class BuildPyWithProto(build_py):
    """build_py, plus partita/partita_pb2.py generated with protoc."""

    def run(self):
        super().run()
        protoc = shutil.which("protoc")
        if protoc is None:
            raise RuntimeError("protoc not found (Debian: protobuf-compiler)")
        if not os.path.isfile(PROTO):
            raise RuntimeError("%s not found: build from a source checkout or set "
                               "PARTITA_SOURCE_ROOT" % PROTO)
        out = os.path.join(self.build_lib, "partita")
        os.makedirs(out, exist_ok=True)
        subprocess.run([protoc, "-I", os.path.dirname(PROTO), "--python_out", out, PROTO],
                       check=True)


def version():
    with open(os.path.join(ROOT, "src", "include", "partita", "partita.h")) as f:
        for line in f:
            if line.startswith("#define PT_VERSION"):
                return line.split('"')[1]
    return "0"


setup(
    name="partita",
    version=version(),
    description="Partita multibody dynamics: the engine (Model, Data, inverse dynamics, "
                "linearization, equilibrium) and the client of partitad",
    license="MIT",
    packages=["partita"],
    python_requires=">=3.9",
    install_requires=["numpy", "protobuf"],
    cffi_modules=["engine_build.py:ffibuilder"],
    cmdclass={"build_py": BuildPyWithProto},
    zip_safe=False,
)
