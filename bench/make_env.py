"""Builds the benchmark environment of docs/benchmarks.md: a real venv whose packages hold
hard links to this machine's shared libraries (/usr/lib/x86_64-linux-gnu and, when present,
/usr/local/cuda/lib64), each package with a real RECORD (sha256 and size of every file), so that
`envdoctor check` has about 2,000 ELF files to examine.

Usage: python3 make_env.py DIR [COPIES] [LIBRARIES]
  COPIES of the library set (default 4); LIBRARIES: how many of the machine's libraries make the set
  (default all), taken evenly spaced over the sorted list, so that the CUDA libraries stay in it. With
  `4 500` the environment has 2,000 library files (plus the interpreter's own) on any machine, however
  many packages it has installed since: bench/table.py uses that.
"""
import base64, hashlib, os, subprocess, sys

out = os.path.abspath(sys.argv[1])
copies = int(sys.argv[2]) if len(sys.argv) > 2 else 4
wanted = int(sys.argv[3]) if len(sys.argv) > 3 else 0
sources = []
for d in ("/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64"):
    if not os.path.isdir(d):
        continue
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if ".so" not in name or os.path.islink(p) or not os.path.isfile(p):
            continue
        with open(p, "rb") as f:
            if f.read(4) != b"\x7fELF":
                continue
        sources.append(p)

if wanted and wanted < len(sources):
    sources = [sources[i * len(sources) // wanted] for i in range(wanted)]

subprocess.run([sys.executable, "-m", "venv", "--without-pip", out], check=True)
site = subprocess.run([os.path.join(out, "bin", "python"), "-c",
                       "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                      check=True, capture_output=True, text=True).stdout.strip()

digests = {}
def record_row(path, rel):
    if path not in digests:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        digests[path] = (base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode(), os.path.getsize(path))
    d, size = digests[path]
    return "%s,sha256=%s,%d" % (rel, d, size)

per_package = 50
n = 0
for c in range(copies):
    for start in range(0, len(sources), per_package):
        name = "benchpkg%d_%d" % (c, start // per_package)
        info = "%s-1.0.dist-info" % name
        os.makedirs(os.path.join(site, name, "lib"), exist_ok=True)
        os.makedirs(os.path.join(site, info), exist_ok=True)
        rows = []
        for src in sources[start:start + per_package]:
            rel = "%s/lib/%s" % (name, os.path.basename(src))
            dst = os.path.join(site, rel)
            try:
                os.link(src, dst)
            except OSError:
                subprocess.run(["cp", src, dst], check=True)
            rows.append(record_row(src, rel))
            n += 1
        with open(os.path.join(site, info, "METADATA"), "w") as f:
            f.write("Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % name)
        with open(os.path.join(site, info, "INSTALLER"), "w") as f:
            f.write("bench\n")
        rows += ["%s/METADATA,," % info, "%s/INSTALLER,," % info, "%s/RECORD,," % info]
        with open(os.path.join(site, info, "RECORD"), "w") as f:
            f.write("\n".join(rows) + "\n")
print("%s: %d ELF files in %d copies of %d libraries" % (out, n, copies, len(sources)))
