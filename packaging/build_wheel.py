#!/usr/bin/env python3
"""Builds envdoctor's wheel from a Release build, offline, with the standard library alone.

The wheel (PyPA "Binary distribution format", PEP 427) holds:
  envdoctor-V.data/scripts/envdoctor          the binary (pip installs it as ENV/bin/envdoctor)
  envdoctor-V.data/data/share/envdoctor/...   the knowledge tables (ENV/share/envdoctor, which the
                                              binary reads from beside its bin/)
  envdoctor-V.data/data/share/man/man1/...    the man page, and the bash and zsh completions
                                              (BUILD/packaging/, written by generate_docs.py)
  envdoctor/__init__.py, __main__.py          `python -m envdoctor` runs the binary
  envdoctor-V.dist-info/METADATA, WHEEL, RECORD

Its platform tag is the one the binary earns, as `envdoctor wheel-tag` computes it by auditwheel's
policy (data/auditwheel/); once written, the wheel is audited by `envdoctor wheel-tag` and removed
if its tag claims more than its files earn.

`make wheel` gives it the binary linked against an older glibc (build/manylinux/envdoctor,
src/CMakeLists.txt's envdoctor_manylinux) and --require-tag manylinux_2_28: a binary that earns a
newer tag is refused, with wheel-tag's words on the symbols that raise it, before a wheel that pip
on Ubuntu 22.04 or RHEL 8 and 9 would refuse is written.

Usage: build_wheel.py --binary build/envdoctor --out dist [--docs DIR] [--require-tag TAG]
       [--platform-tag TAG --no-check]   (tests only: a deliberately mis-tagged wheel)
"""
import argparse
import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)
# Reproducible: every member carries the same time (zip's epoch, 1980-01-01) unless
# SOURCE_DATE_EPOCH says otherwise.
EPOCH = (1980, 1, 1, 0, 0, 0)


def fail(message):
    sys.stderr.write("build_wheel: " + message + "\n")
    sys.exit(1)


def run_envdoctor(binary, *args):
    return subprocess.run([binary] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


def binary_version(binary):
    r = run_envdoctor(binary, "--version")
    words = r.stdout.split()
    if r.returncode != 0 or len(words) != 2 or words[0] != "envdoctor":
        fail(binary + " --version said " + repr(r.stdout + r.stderr))
    return words[1]


def earned_tag(binary):
    """The manylinux tag the binary earns, from envdoctor's own wheel-tag (auditwheel's policy)."""
    r = run_envdoctor(binary, "wheel-tag", "--json", binary)
    if r.returncode == 2:
        fail("wheel-tag: " + r.stderr.strip())
    f = json.loads(r.stdout.splitlines()[0])
    tag = f.get("overall_tag")
    if not tag or not tag.startswith("manylinux_"):
        text = run_envdoctor(binary, "wheel-tag", binary).stdout
        fail(binary + " earns no manylinux tag:\n" + text)
    return tag


def manylinux_glibc(tag):
    """(major, minor) of a manylinux_X_Y or manylinux_X_Y_ARCH tag, or None."""
    parts = tag.split("_")
    if len(parts) < 3 or parts[0] != "manylinux" or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    return int(parts[1]), int(parts[2])


def require_tag(binary, tag, required):
    """Fails unless `tag` (what the binary earns) asks for no newer glibc than `required`."""
    wanted = manylinux_glibc(required)
    if wanted is None:
        fail("--require-tag: %r is no manylinux_X_Y tag" % required)
    earned = manylinux_glibc(tag)
    if earned is None or earned > wanted:
        text = run_envdoctor(binary, "wheel-tag", binary).stdout
        fail("%s earns %s, newer than the %s required:\n%s" % (binary, tag, required, text))


def date_time():
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return EPOCH
    import time
    return max(EPOCH, time.gmtime(int(epoch))[:6])


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def metadata(version):
    with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    summary = "Will every native library in this Python environment load, and if not, exactly why?"
    headers = [
        ("Metadata-Version", "2.1"),
        ("Name", "envdoctor"),
        ("Version", version),
        ("Summary", summary),
        ("Requires-Python", ">=3.6"),
        ("Classifier", "Operating System :: POSIX :: Linux"),
        ("Classifier", "Environment :: Console"),
        ("Description-Content-Type", "text/markdown"),
    ]
    # Core metadata 2.1: the description is the message body, after one empty line.
    return "".join(k + ": " + v + "\n" for k, v in headers) + "\n" + readme


def members(binary, docs, version, tag):
    """(archive name, bytes, mode) of every file but RECORD, dist-info last (PEP 427)."""
    data_dir = "envdoctor-%s.data" % version
    dist_info = "envdoctor-%s.dist-info" % version
    out = []
    for name in ("__init__.py", "__main__.py"):
        with open(os.path.join(HERE, "envdoctor", name), encoding="utf-8") as f:
            text = f.read().replace("@VERSION@", version)
        out.append(("envdoctor/" + name, text.encode("utf-8"), 0o644))
    with open(binary, "rb") as f:
        out.append((data_dir + "/scripts/envdoctor", f.read(), 0o755))
    tables = os.path.join(SOURCE, "data")
    for root, dirs, files in os.walk(tables):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, tables).replace(os.sep, "/")
            with open(path, "rb") as f:
                out.append((data_dir + "/data/share/envdoctor/" + rel, f.read(), 0o644))
    # The man page and completions generate_docs.py wrote beside the binary at build time.
    for src, dest in (("envdoctor.1", "share/man/man1/envdoctor.1"),
                      ("envdoctor.bash", "share/bash-completion/completions/envdoctor"),
                      ("_envdoctor", "share/zsh/site-functions/_envdoctor")):
        with open(os.path.join(docs, src), "rb") as f:
            out.append((data_dir + "/data/" + dest, f.read(), 0o644))
    wheel = ("Wheel-Version: 1.0\nGenerator: envdoctor packaging/build_wheel.py\n"
             "Root-Is-Purelib: false\nTag: py3-none-%s\n" % tag)
    out.append((dist_info + "/METADATA", metadata(version).encode("utf-8"), 0o644))
    out.append((dist_info + "/WHEEL", wheel.encode("utf-8"), 0o644))
    return out, dist_info + "/RECORD"


def write_wheel(path, files, record_name):
    stamp = date_time()
    record = "".join("%s,%s,%d\n" % (name, record_hash(data), len(data)) for name, data, _ in files)
    record += record_name + ",,\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files + [(record_name, record.encode("utf-8"), 0o644)]:
            info = zipfile.ZipInfo(name, stamp)
            info.external_attr = (0o100000 | mode) << 16  # a regular file; pip keeps the x bits
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--binary", required=True, help="the envdoctor binary of a Release build")
    p.add_argument("--out", required=True, help="the folder the wheel is written to")
    p.add_argument("--docs", help="the man page and completions (default: BINARY's folder/packaging)")
    p.add_argument("--require-tag", help="refuse a binary whose tag asks for a newer glibc than this one")
    p.add_argument("--platform-tag", help="use this tag instead of the one the binary earns")
    p.add_argument("--no-check", action="store_true", help="skip the audit of the written wheel")
    a = p.parse_args()
    binary = os.path.abspath(a.binary)
    version = binary_version(binary)
    tag = a.platform_tag or earned_tag(binary)
    if a.require_tag:
        require_tag(binary, tag, a.require_tag)
    docs = os.path.abspath(a.docs) if a.docs else os.path.join(os.path.dirname(binary), "packaging")
    files, record_name = members(binary, docs, version, tag)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "envdoctor-%s-py3-none-%s.whl" % (version, tag))
    write_wheel(path, files, record_name)
    if not a.no_check:
        r = run_envdoctor(binary, "wheel-tag", path)
        if r.returncode != 0:
            os.remove(path)
            fail("the wheel's tag does not hold, so it was removed:\n" + r.stdout + r.stderr)
    print(path)


if __name__ == "__main__":
    main()
