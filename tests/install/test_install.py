#!/usr/bin/env python3
"""`meson install` into a temporary DESTDIR, then use the installation the way a C developer
and an administrator would: every public header compiles on its own, a program built with
`pkg-config --cflags --libs partita` loads a model and steps it (same numbers as
`partita simulate`), one built against partita-client talks to the installed partitad, the
shared libraries carry their soname, the man pages and the systemd unit are there and the unit
passes `systemd-analyze verify` (when systemd-analyze is installed).

Environment (tests/install/meson.build): BUILD_ROOT, PREFIX, LIBDIR, INCLUDEDIR, BINDIR,
SYSCONFDIR, MANDIR, DATADIR, SANITIZE (the build's -fsanitize flags, or empty), CC."""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

ENV = os.environ
BUILD = ENV["BUILD_ROOT"]
PREFIX = ENV["PREFIX"]


def under(root, *parts):
    """root + an absolute or prefix-relative install path."""
    path = os.path.join(*parts)
    if not os.path.isabs(path):
        path = os.path.join(PREFIX, path)
    return root + path


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 300)
    return subprocess.run(args, **kw)


PROGRAM = r"""
#include <partita/partita.h>
#include <math.h>
#include <stdio.h>
int main(int argc, char **argv) {
  pt_model *m; pt_error e;
  if (argc < 2 || pt_model_load_file(argv[1], NULL, &m, &e)) return 1;
  pt_data *d = pt_data_new(m);
  for (long i = 0, n = lround(1.0 / pt_model_dt(m)); i < n; i++) pt_step(m, d);
  printf("%s %.17g %.17g\n", pt_coord_name(m, 0), pt_time(d), pt_coords(d)[0]);
  pt_data_free(d); pt_model_free(m);
  return 0;
}
"""

CLIENT_PROGRAM = r"""
#include <partita/partita_client.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  char err[256];
  if (argc < 2) return 2;
  ptc_client *c = ptc_connect_addr(argv[1], 5000, err, sizeof(err));
  if (!c) { fprintf(stderr, "%s\n", err); return 1; }
  Partita__V1__Request rq = PARTITA__V1__REQUEST__INIT;
  Partita__V1__ListModels lm = PARTITA__V1__LIST_MODELS__INIT;
  rq.op_case = PARTITA__V1__REQUEST__OP_LIST_MODELS;
  rq.list_models = &lm;
  Partita__V1__ServerMessage *msg;
  if (ptc_call(c, &rq, &msg, 5000) != PTC_OK) { fprintf(stderr, "%s\n", ptc_error(c)); return 1; }
  Partita__V1__Response *r = msg->response;
  if (r->payload_case != PARTITA__V1__RESPONSE__PAYLOAD_MODEL_LIST) return 1;
  for (size_t i = 0; i < r->model_list->n_models; i++)
    printf("%s\n", r->model_list->models[i]->name);
  ptc_free(msg);
  ptc_close(c);
  return 0;
}
"""


class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="partita-install-")
        cls.dest = os.path.join(cls.tmp, "root")
        p = run(["meson", "install", "-C", BUILD, "--destdir", cls.dest, "--no-rebuild",
                 "--quiet"])
        if p.returncode != 0:
            raise AssertionError("meson install failed:\n" + p.stdout + p.stderr)
        cls.libdir = under(cls.dest, ENV["LIBDIR"])
        cls.incdir = under(cls.dest, ENV["INCLUDEDIR"])
        cls.bindir = under(cls.dest, ENV["BINDIR"])
        cls.env = dict(os.environ)
        cls.env["PKG_CONFIG_PATH"] = os.path.join(cls.libdir, "pkgconfig")
        cls.env["PKG_CONFIG_SYSROOT_DIR"] = cls.dest   # -I and -L point into the DESTDIR
        cls.env["LD_LIBRARY_PATH"] = cls.libdir
        cls.cc = ENV.get("CC") or "cc"
        cls.sanitize = ENV.get("SANITIZE", "").split()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def pkg(self, *args):
        p = run(["pkg-config"] + list(args), env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.split()

    def compile(self, name, source, package):
        src = os.path.join(self.tmp, name + ".c")
        exe = os.path.join(self.tmp, name)
        with open(src, "w") as f:
            f.write(source)
        args = ([self.cc, "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror"] +
                self.sanitize + [src, "-o", exe] + self.pkg("--cflags", "--libs", package) +
                ["-lm"])
        p = run(args, env=self.env)
        self.assertEqual(p.returncode, 0, " ".join(args) + "\n" + p.stderr)
        return exe

    def test_files(self):
        for path in [(ENV["BINDIR"], "partita"), (ENV["BINDIR"], "partitad"),
                     (ENV["SYSCONFDIR"], "partita", "partitad.yaml"),
                     (ENV["MANDIR"], "man1", "partita.1"), (ENV["MANDIR"], "man1", "partitad.1"),
                     ("lib", "systemd", "system", "partitad.service"),
                     (ENV["DATADIR"], "partita", "models", "pendulum.yaml"),
                     (ENV["LIBDIR"], "pkgconfig", "partita.pc"),
                     (ENV["LIBDIR"], "pkgconfig", "partita-client.pc")]:
            self.assertTrue(os.path.isfile(under(self.dest, *path)), path)
        # no static archives of the internal libraries
        self.assertEqual([f for f in os.listdir(self.libdir) if f.endswith(".a")], [])

    def test_soname(self):
        for lib in ["libpartita", "libpartita-client"]:
            so = os.path.join(self.libdir, lib + ".so")
            self.assertTrue(os.path.islink(so), so)
            self.assertEqual(os.readlink(so), lib + ".so.0")
            p = run(["readelf", "-d", os.path.realpath(so)])
            if p.returncode != 0:
                self.skipTest("readelf not available")
            self.assertIn("Library soname: [%s.so.0]" % lib, p.stdout)
        # the engine exports exactly the functions its installed headers declare
        p = run(["nm", "-D", "--defined-only", os.path.join(self.libdir, "libpartita.so")])
        exported = {line.split()[-1].split("@")[0] for line in p.stdout.splitlines()
                    if line.strip()} - {"PARTITA_0"}
        declared = set()
        for h in ["partita.h", "pt_spec.h", "pt_inverse.h", "pt_linearize.h"]:
            with open(os.path.join(self.incdir, "partita", h)) as f:
                text = re.sub(r"//[^\n]*", "", f.read())
            declared |= set(re.findall(r"\b(pt_[a-z0-9_]+)\s*\(", text))
        self.assertIn("pt_step", exported)
        self.assertEqual(sorted(exported - declared), [], "exported but not declared")
        self.assertEqual(sorted(declared - exported), [], "declared but not exported")

    def test_headers_standalone(self):
        headers = sorted(os.listdir(os.path.join(self.incdir, "partita")))
        self.assertEqual(headers, ["partita.h", "partita.pb-c.h", "partita_client.h",
                                   "pt_inverse.h", "pt_linearize.h", "pt_spec.h"])
        for h in headers:
            pkg = "partita-client" if h.startswith("partita_client") or "pb-c" in h else "partita"
            src = os.path.join(self.tmp, "h.c")
            with open(src, "w") as f:
                f.write("#include <partita/%s>\n" % h)
            flags = ["-Wall", "-Wextra", "-Werror"]
            if "pb-c" not in h:   # protoc-c's generated header is not -Wpedantic clean
                flags.append("-Wpedantic")
            p = run([self.cc, "-std=c11", "-fsyntax-only"] + flags + [src] +
                    self.pkg("--cflags", pkg), env=self.env)
            self.assertEqual(p.returncode, 0, h + ":\n" + p.stderr)

    def test_engine_program(self):
        exe = self.compile("step", PROGRAM, "partita")
        # linked to the installed shared library, not to anything in the build tree
        p = run(["ldd", exe], env=self.env)
        self.assertRegex(p.stdout, r"libpartita\.so\.0 => " + re.escape(self.libdir))
        model = under(self.dest, ENV["DATADIR"], "partita", "models", "pendulum.yaml")
        p = run([exe, model], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        name, t, q = p.stdout.split()
        # the installed CLI on the same file: the same engine, the same numbers
        cli = run([os.path.join(self.bindir, "partita"), "simulate", model, "--json"],
                  env=self.env)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        out = json.loads(cli.stdout)
        last = out["rows"][-1]
        self.assertEqual(float(t), last[out["columns"].index("t")])
        self.assertEqual(float(q), last[out["columns"].index(name)])
        self.assertNotEqual(float(q), 0.0)

    def test_client_program(self):
        exe = self.compile("models", CLIENT_PROGRAM, "partita-client")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        addr = "127.0.0.1:%d" % port
        model = under(self.dest, ENV["DATADIR"], "partita", "models", "pendulum.yaml")
        log = open(os.path.join(self.tmp, "partitad.log"), "w+")
        daemon = subprocess.Popen([os.path.join(self.bindir, "partitad"), "--listen", addr,
                                   "--model", model], stdout=log, stderr=subprocess.STDOUT,
                                  env=self.env)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    self.assertIsNone(daemon.poll(), "partitad exited")
                    self.assertLess(time.monotonic(), deadline, "partitad did not listen")
                    time.sleep(0.05)
            p = run([exe, addr], env=self.env)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.split(), ["pendulum"])
        finally:
            daemon.terminate()
            self.assertEqual(daemon.wait(timeout=30), 0)
            log.seek(0)
            text = log.read()
            log.close()
            self.assertNotIn("Sanitizer", text)

    def test_man_pages(self):
        man = under(self.dest, ENV["MANDIR"], "man1", "partita.1")
        text = open(man).read()
        for cmd in ["check", "simulate", "inverse", "linearize", "equilibrium", "watch"]:
            self.assertIn(".SS %s\n" % cmd, text)
        self.assertIn("usage: partita linearize", text)

    def test_service_unit(self):
        unit = under(self.dest, "lib", "systemd", "system", "partitad.service")
        text = open(unit).read()
        exec_start = re.search(r"^ExecStart=(\S+) --config (\S+)$", text, re.M)
        self.assertIsNotNone(exec_start)
        self.assertEqual(exec_start.group(1), os.path.join(PREFIX, ENV["BINDIR"], "partitad"))
        self.assertEqual(exec_start.group(2),
                         os.path.join(PREFIX, ENV["SYSCONFDIR"], "partita", "partitad.yaml"))
        settings = dict(re.findall(r"^(\w+)=(.*)$", text, re.M))
        self.assertEqual(settings["DynamicUser"], "yes")
        self.assertEqual(settings["ProtectSystem"], "strict")
        self.assertEqual(settings["Type"], "notify")
        for key in ["CapabilityBoundingSet", "AmbientCapabilities"]:
            self.assertEqual(sorted(settings[key].split()), ["CAP_IPC_LOCK", "CAP_SYS_NICE"])
        analyze = shutil.which("systemd-analyze")
        if analyze is None:
            self.skipTest("systemd-analyze not installed")
        # verify the unit as installed, its ExecStart pointed at the DESTDIR's partitad
        # (verify checks that the program exists)
        copy = os.path.join(self.tmp, "partitad.service")
        with open(copy, "w") as f:
            f.write(text.replace("ExecStart=" + exec_start.group(1),
                                 "ExecStart=" + os.path.join(self.bindir, "partitad")))
        p = run([analyze, "verify", "--man=no", copy])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout + p.stderr, "")


if __name__ == "__main__":
    unittest.main(verbosity=2)
