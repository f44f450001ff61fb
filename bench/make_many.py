"""Builds the many-distributions environment of docs/benchmarks.md: a real venv whose site-packages
holds COUNT small distributions, each installed as an installer leaves it: a package with an
__init__.py, and a .dist-info with METADATA, WHEEL, INSTALLER and a RECORD that gives the sha256
and size of every file. Their Requires-Dist name each other, in the forms the metadata allows (a
bare specifier, the old parenthesised one, a normalised and an unnormalised name, a marker that
holds and one that does not), so that `pip check` and `uv pip check` have COUNT requirement sets
to resolve and every one is met. One distribution in ELF_EVERY holds a hard link to one of the
machine's shared libraries (evenly spaced over /usr/lib/x86_64-linux-gnu's, the small ones), so
that envdoctor has ELF files to read beside the COUNT dist-info.

Usage: python3 make_many.py DIR [COUNT] [ELF_EVERY]
  COUNT distributions (default 3000), one with an ELF file in every ELF_EVERY (default 100).
  DIR must not exist: bench/table.py builds it once under its cache and reuses it.
"""
import base64
import hashlib
import os
import subprocess
import sys

LIBRARIES = "/usr/lib/x86_64-linux-gnu"
SMALL = 4 << 20  # the libraries linked in are under 4 MiB each: the environment is of small distributions


def small_libraries(wanted):
    found = []
    for name in sorted(os.listdir(LIBRARIES)):
        p = os.path.join(LIBRARIES, name)
        if ".so" not in name or os.path.islink(p) or not os.path.isfile(p) or os.path.getsize(p) > SMALL:
            continue
        with open(p, "rb") as f:
            if f.read(4) == b"\x7fELF":
                found.append(p)
    if wanted >= len(found):
        return found
    return [found[i * len(found) // wanted] for i in range(wanted)]


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return "sha256=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()


def name(i):
    return "bulk-dist-%04d" % i


def version(i):
    return "1.%d.%d" % (i % 7, i % 3)


def requires(i):
    """Requirements on distributions with smaller numbers, all met, in the forms found in the wild."""
    if i == 0:
        return []
    out = ["%s>=1.0" % name((i - 1) // 2)]
    if i >= 3:
        out.append("%s (<2,>=1)" % name(i // 3).replace("-", "_"))
    if i >= 5 and i % 2 == 0:
        out.append("Bulk.Dist.%04d~=1.%d; python_version >= \"3.8\"" % (i // 5, (i // 5) % 7))
    if i % 10 == 0:
        out.append("bulk-dist-absent>=1; python_version < \"3\"")  # a marker that holds nowhere: not required
    return out


def write(site, rel, text, rows):
    path = os.path.join(site, rel)
    with open(path, "w") as f:
        f.write(text)
    rows.append("%s,%s,%d" % (rel, digest(path), os.path.getsize(path)))


def distribution(site, i, library):
    package, info = name(i).replace("-", "_"), "%s-%s.dist-info" % (name(i).replace("-", "_"), version(i))
    os.makedirs(os.path.join(site, package))
    os.makedirs(os.path.join(site, info))
    rows = []
    write(site, package + "/__init__.py", "VERSION = %r\n" % version(i), rows)
    if library:
        rel = "%s/%s" % (package, os.path.basename(library))
        try:
            os.link(library, os.path.join(site, rel))
        except OSError:
            subprocess.run(["cp", library, os.path.join(site, rel)], check=True)
        rows.append("%s,%s,%d" % (rel, digest(library), os.path.getsize(library)))
    metadata = ["Metadata-Version: 2.1", "Name: " + name(i), "Version: " + version(i),
                "Summary: distribution %d of bench/make_many.py" % i, "Requires-Python: >=3.8"]
    metadata += ["Requires-Dist: " + r for r in requires(i)]
    write(site, info + "/METADATA", "\n".join(metadata) + "\n\n", rows)
    tag = "cp311-cp311-linux_x86_64" if library else "py3-none-any"
    write(site, info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: bench/make_many.py\nRoot-Is-Purelib: %s\nTag: %s\n" %
          ("false" if library else "true", tag), rows)
    write(site, info + "/INSTALLER", "pip\n", rows)
    rows.append(info + "/RECORD,,")
    with open(os.path.join(site, info, "RECORD"), "w") as f:
        f.write("\n".join(rows) + "\n")


def main():
    out = os.path.abspath(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    every = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    if os.path.exists(out):
        sys.exit("make_many.py: %s exists" % out)
    libraries = small_libraries((count + every - 1) // every)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", out], check=True)
    site = subprocess.run([os.path.join(out, "bin", "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    for i in range(count):
        elf = i % every == every - 1 and i // every < len(libraries)
        distribution(site, i, libraries[i // every] if elf else None)
    print("%s: %d distributions, %d with an ELF file" % (out, count, min(count // every, len(libraries))))


if __name__ == "__main__":
    main()
