#!/usr/bin/python3
"""tools/check_layers.py must fail on a file that includes a header of a folder above its own
(and name it as FILE:LINE), pass when the includes keep to the layers, and refuse a folder that
tools/layers.txt does not place. Run on small trees made here, with the real layers file."""
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK = os.path.join(ROOT, "tools", "check_layers.py")
RULES = os.path.join(ROOT, "tools", "layers.txt")


def run(files):
    with tempfile.TemporaryDirectory() as d:
        for path, text in files.items():
            os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(d, path), "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, CHECK, d, "--rules", RULES], capture_output=True,
                           text=True)
        return p.returncode, p.stdout


BASE = {
    "src/include/partita/partita.h": "",
    "src/util/ptu.h": "",
    "src/core/engine.h": '#include "partita.h"\n',
    "src/partition/partition.h": '#include "engine.h"\n',
    "src/core/data.c": '#include "engine.h"\n#include "ptu.h"\n',
}


class CheckLayers(unittest.TestCase):
    def test_passes_when_every_include_points_down(self):
        rc, out = run(BASE)
        self.assertEqual(rc, 0, out)
        self.assertIn("0 problems", out)

    def test_fails_on_an_include_from_above(self):
        rc, out = run(dict(BASE, **{"src/core/data.c": '#include "engine.h"\n'
                                                         '#include "partition.h"\n'}))
        self.assertEqual(rc, 1, out)
        self.assertIn('src/core/data.c:2: #include "partition.h" (src/partition): not listed below '
                      'src/core', out)
        self.assertIn("1 problems", out)

    def test_fails_on_a_sibling_analysis(self):
        rc, out = run(dict(BASE, **{"src/analysis/inverse/inverse_internal.h": "",
                                    "src/analysis/linearize/l.c":
                                        '#include "inverse_internal.h"\n'}))
        self.assertEqual(rc, 1, out)
        self.assertIn("src/analysis/linearize/l.c:1:", out)

    def test_fails_on_a_generated_header_the_folder_may_not_use(self):
        rc, out = run(dict(BASE, **{"src/util/error.c": '#include "partita.pb-c.h"\n'}))
        self.assertEqual(rc, 1, out)
        self.assertIn('src/util/error.c:1: #include "partita.pb-c.h" (proto)', out)

    def test_fails_on_a_folder_without_a_line(self):
        rc, out = run(dict(BASE, **{"elsewhere/x.c": '#include "engine.h"\n'}))
        self.assertEqual(rc, 0, out)   # not a scanned top folder: not checked
        rc, out = run(dict(BASE, **{"client/tool/x.c": '#include "partita.h"\n'}))
        self.assertEqual(rc, 1, out)
        self.assertIn("client/tool/x.c: its folder has no line", out)

    def test_fails_on_the_bridge_reaching_into_the_engine(self):
        rc, out = run(dict(BASE, **{"bridge/x.c": '#include "partita.h"\n#include "engine.h"\n'}))
        self.assertEqual(rc, 1, out)
        self.assertIn('bridge/x.c:2: #include "engine.h" (src/core)', out)
        self.assertIn("1 problems", out)

    def test_daemon_folders_one_way(self):
        tree = dict(BASE, **{"daemon/net/conn.h": "", "daemon/base/log.h": "",
                             "daemon/model/sim.c": '#include "base/log.h"\n',
                             "daemon/main.c": '#include "net/conn.h"\n#include "model/sim.h"\n',
                             "daemon/model/sim.h": ""})
        rc, out = run(tree)
        self.assertEqual(rc, 0, out)   # the top (`daemon`, two lines) may use both
        tree["daemon/model/sim.c"] += '#include "net/conn.h"\n'   # net sits beside model
        rc, out = run(tree)
        self.assertEqual(rc, 1, out)
        self.assertIn('daemon/model/sim.c:2: #include "net/conn.h" (daemon/net)', out)

    def test_fails_on_a_header_it_cannot_find(self):
        rc, out = run(dict(BASE, **{"src/core/data.c": '#include "nosuch.h"\n'}))
        self.assertEqual(rc, 1, out)
        self.assertIn('src/core/data.c:1: #include "nosuch.h": no such header', out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
