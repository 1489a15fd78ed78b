"""`python3 -m venv .venv` as `--install` runs it: pip and the rest ensurepip installs
copied in from the interpreter's own installation of them, not installed afresh.

ensurepip installs its wheels by running pip, which byte-compiles some 1,000 modules: 3.5-8
s of every `--install` on this kind of machine, most of a small project's set-up. When the
interpreter has the very versions ensurepip carries installed (a fresh Python has), they
are copied from there with their byte-code and times, a tenth of the time. Each file is
the one the wheel holds: it is copied only if its hash is its record's, and otherwise
taken from ensurepip's wheel (its byte-code then left behind: a machine that added its own
certificate to pip's bundle gets the bundle pip shipped). The environment then holds what
ensurepip would have made, file for file, pip's scripts written as pip writes them and its
record rewritten for them, so a proof of the environment against its records holds. A
distribution that is not there at that version, a record naming a file outside `purelib`,
or a file neither copy nor wheel holds as recorded: ensurepip's way, as before.

The script runs isolated (`-I`): the workspace's directory is not on its import path.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Replaces `python3 -m venv DIR`: its one argument is `DIR`. Standard library only; it
#: runs in the sandbox, under whatever Python `python3` is there.
VENV_WITH_OWN_PIP = r"""import base64, csv, hashlib, os, re, shutil, sys, sysconfig, venv, zipfile
from importlib.util import source_from_cache
site = sysconfig.get_path("purelib")
try:
    import ensurepip
    bundled = os.path.join(os.path.dirname(ensurepip.__file__), "_bundled")
    wheels = sorted(w for w in os.listdir(bundled) if w.endswith(".whl"))
except (ImportError, OSError):  # venv then says what to install (Debian: python3-venv)
    wheels = []
BIN = "../../../bin/"
def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None
def installed(wheel):
    # (name, version, the record's rows, the files whose content comes from the wheel), or
    # None when the distribution at the wheel's version is not there to copy.
    try:
        return copied(wheel)
    except Exception:  # anything unforeseen: ensurepip's way, which is always right
        return None
def copied(wheel):
    m = re.match(r"([^-]+)-([^-]+)-.*[.]whl$", wheel)
    if not m:
        return None
    name, version = m.groups()
    record = read(os.path.join(site, "%s-%s.dist-info" % (name, version), "RECORD"))
    if record is None:
        return None
    rows = [r for r in csv.reader(record.decode().splitlines()) if r and r[0]]
    pristine = {}
    with zipfile.ZipFile(os.path.join(bundled, wheel)) as whl:
        members = set(whl.namelist())
        for path, hashed, *_ in [r + ["", ""] for r in rows]:
            if name == "pip" and path.startswith(BIN):
                continue
            if os.path.isabs(path) or os.path.normpath(path).startswith(".."):
                return None
            copy = read(os.path.join(site, path)) if hashed else None
            if not hashed or (copy is not None and digest(copy) == hashed):
                continue
            data = whl.read(path) if path in members else b""
            if digest(data) != hashed:
                return None
            pristine[path] = data
    return name, version, rows, pristine
found = [installed(w) for w in wheels]
own = bool(found) and None not in found
SCRIPT = '''#!%s
# -*- coding: utf-8 -*-
import re
import sys
from pip._internal.cli.main import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
'''
def compiled_from(path, pristine):
    try:
        return source_from_cache(path)[len(site) + 1:] in pristine
    except ValueError:
        return False
class OwnPip(venv.EnvBuilder):
    def post_setup(self, context):
        if not own:
            return
        into = os.path.join(context.env_dir, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
        text = (SCRIPT % getattr(context, "env_exec_cmd", context.env_exe)).encode()
        for name, version, rows, pristine in found:
            kept = [row for row in rows if not (name == "pip" and row[0].startswith(BIN))]
            for path, *_ in kept:
                source, target = os.path.join(site, path), os.path.join(into, path)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                if path in pristine:
                    with open(target, "wb") as f:
                        f.write(pristine[path])
                elif os.path.isfile(source) and not compiled_from(source, pristine):
                    shutil.copy2(source, target)
            if name != "pip":
                continue
            scripts = ("pip", "pip3", "pip%d.%d" % sys.version_info[:2])
            for script in scripts:
                with open(os.path.join(context.bin_path, script), "wb") as f:
                    f.write(text)
                os.chmod(os.path.join(context.bin_path, script), 0o755)
            written = [[BIN + script, digest(text), str(len(text))] for script in scripts]
            with open(os.path.join(into, "pip-%s.dist-info" % version, "RECORD"), "w", newline="") as f:
                csv.writer(f).writerows(written + kept)
OwnPip(symlinks=True, with_pip=not own).create(sys.argv[1])
"""


def venv_made_with_own_pip(argv: Sequence[str]) -> tuple[str, ...] | None:
    """`python3 -m venv DIR` (just that: no options) as the command that makes it with the
    interpreter's own pip; None for any other command."""
    if len(argv) == 4 and argv[1:3] == ("-m", "venv") and not argv[3].startswith("-"):
        return (argv[0], "-I", "-c", VENV_WITH_OWN_PIP, argv[3])
    return None
