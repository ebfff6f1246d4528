#!/usr/bin/env python3
"""Writes a man page made from a program's --help texts.

    man.py partita  PARTITA_EXE  VERSION OUTPUT   # partita(1): the command list, then every
                                                  # command's `partita CMD --help`
    man.py partitad PARTITAD_EXE VERSION OUTPUT   # partitad(1): its usage text

The help texts are printed as they are (.nf), so the page says exactly what --help says."""

import datetime
import re
import subprocess
import sys

NAMES = {
    "partita": "Partita multibody dynamics: offline analyses and the client of partitad",
    "partitad": "Partita multibody dynamics server",
}

PARTITAD_DESCRIPTION = """\
partitad keeps live multibody models, steps them in real time or on request, and serves them
over a protobuf socket API (TCP, a Unix socket, UDP inputs and state streams): state queries
and subscriptions, inputs, inverse dynamics, linearization and equilibrium.
.PP
Under systemd (the installed partitad.service) it reports readiness, pings the watchdog and
runs as a transient user whose only privileges are CAP_SYS_NICE (SCHED_FIFO model threads)
and CAP_IPC_LOCK (mlockall). SIGHUP reopens the log file; SIGTERM answers what is in flight
and exits 0."""


def esc(text):
    """Help text as roff lines: backslashes escaped, no line read as a request."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=60).stdout


def main():
    prog, exe, version, out = sys.argv[1:5]
    date = datetime.date.today().strftime("%B %Y")
    page = ['.TH %s 1 "%s" "Partita %s" "User Commands"' % (prog.upper(), date, version),
            ".SH NAME", "%s \\- %s" % (prog, NAMES[prog])]
    top = run([exe, "--help"])
    if prog == "partita":
        page += [".SH SYNOPSIS", ".nf", esc(top), ".fi", ".SH COMMANDS"]
        names = []
        for m in re.finditer(r"^  partita ([a-z][a-z-]*)", top, re.M):
            if m.group(1) not in names:
                names.append(m.group(1))
        for name in names:
            text = run([exe, name, "--help"])
            if text.strip():
                page += [".SS %s" % name, ".nf", esc(text), ".fi"]
        page += [".SH FILES", "Example models: \\fIshare/partita/models/\\fR under the "
                 "installation prefix.", ".SH SEE ALSO", "partitad(1)"]
    else:
        page += [".SH SYNOPSIS", ".nf", esc(top), ".fi", ".SH DESCRIPTION",
                 PARTITAD_DESCRIPTION, ".SH FILES", ".TP", ".I /etc/partita/partitad.yaml",
                 "The configuration the service reads (sysconfdir of the installation): "
                 "listeners, models loaded at start, limits, real-time settings. "
                 "Command-line options override it.",
                 ".SH SEE ALSO", "partita(1), systemd.exec(5)"]
    with open(out, "w") as f:
        f.write("\n".join(page) + "\n")


if __name__ == "__main__":
    main()
