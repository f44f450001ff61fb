"""Builds a real wheel for the tests, as a build backend would: the files, a .dist-info with
METADATA, WHEEL and a RECORD holding each member's sha256 and size, zipped with zipfile.

Usage: make_wheel.py SPEC_JSON, where SPEC is
  {"out": DIR, "name": "foo", "version": "1.0", "tag": "py3-none-any", "purelib": true,
   "files": {"foo/__init__.py": "text", ...}, "requires": ["bar>=1; extra == 'x'"],
   "raw": {"arcname": "text"} or [["arcname", "text"], ...],  # not in RECORD (hostile cases)
   "paths": {"arcname": "/path/on/disk", ...},   # binary members copied from files
   "record_extra": ["row", ...]}   # RECORD rows that name no member (a directory, a path elsewhere)
Prints the wheel's path.
"""
import base64, hashlib, json, os, sys, zipfile

spec = json.loads(sys.argv[1])
name, version = spec["name"], spec["version"]
escaped = name.replace("-", "_")
info = "%s-%s.dist-info" % (escaped, version)
members = list(spec.get("files", {}).items())
for arc, src in spec.get("paths", {}).items():
    with open(src, "rb") as f:
        members.append((arc, f.read()))
metadata = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version)
for r in spec.get("requires", []):
    metadata += "Requires-Dist: %s\n" % r
members.append((info + "/METADATA", metadata))
members.append((info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: make_wheel\nRoot-Is-Purelib: %s\nTag: %s\n"
                % ("true" if spec.get("purelib", True) else "false", spec.get("tag", "py3-none-any"))))
record = []
for arc, text in members:
    data = text if isinstance(text, bytes) else text.encode()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append("%s,sha256=%s,%d" % (arc, digest, len(data)))
record += spec.get("record_extra", [])
record.append(info + "/RECORD,,")
members.append((info + "/RECORD", "\n".join(record) + "\n"))
path = os.path.join(spec["out"], "%s-%s-%s.whl" % (escaped, version, spec.get("tag", "py3-none-any")))
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    raw = spec.get("raw", [])
    for arc, text in members + (list(raw.items()) if isinstance(raw, dict) else [tuple(m) for m in raw]):
        info_ = zipfile.ZipInfo(arc)
        info_.external_attr = 0o755 << 16 if arc.endswith(".so") or ".so." in arc else 0o644 << 16
        z.writestr(info_, text, compress_type=zipfile.ZIP_DEFLATED)
print(path)
