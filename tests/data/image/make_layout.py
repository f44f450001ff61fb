"""Builds an OCI image layout from layers described in JSON, for the hostile and format tests:
each layer a list of tar entries, compressed as asked (gzip, zstd through the zstd tool, or none).

Usage: make_layout.py DIR SPEC_JSON, where SPEC is
  {"tag": "t", "env": ["PATH=/usr/bin"], "entrypoint": [...], "cmd": [...],
   "layers": [{"compression": "gzip|zstd|none",
               "entries": [{"name": "a/b", "type": "file|dir|symlink|hardlink", "data": "text",
                            "target": "for links", "mode": 420}, ...],
               "claim_diff_id": "sha256:... (the configuration names the layer so, whatever it holds)",
               "corrupt": true (the blob's last byte changed after its digest was taken)}, ...],
   "corrupt_config": true (the configuration changed after its digest was taken)}
"""
import gzip, hashlib, io, json, os, subprocess, sys, tarfile

out, spec = sys.argv[1], json.loads(sys.argv[2])
blobs = os.path.join(out, "blobs", "sha256")
os.makedirs(blobs, exist_ok=True)


def put(data):
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(blobs, digest), "wb") as f:
        f.write(data)
    return "sha256:" + digest


layers, diff_ids = [], []
for layer in spec["layers"]:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for e in layer["entries"]:
            info = tarfile.TarInfo(e["name"])
            info.mode = e.get("mode", 0o755 if e.get("type") == "dir" else 0o644)
            kind = e.get("type", "file")
            data = e.get("data", "").encode()
            if kind == "dir":
                info.type = tarfile.DIRTYPE
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, e["target"]
            elif kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, e["target"]
            else:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if kind == "file" else None)
    tar_bytes = raw.getvalue()
    diff_ids.append(layer.get("claim_diff_id", "sha256:" + hashlib.sha256(tar_bytes).hexdigest()))
    compression = layer.get("compression", "gzip")
    if compression == "gzip":
        blob, media = gzip.compress(tar_bytes), "application/vnd.oci.image.layer.v1.tar+gzip"
    elif compression == "zstd":
        blob = subprocess.run(["zstd", "-q", "-c"], input=tar_bytes, stdout=subprocess.PIPE, check=True).stdout
        media = "application/vnd.oci.image.layer.v1.tar+zstd"
    else:
        blob, media = tar_bytes, "application/vnd.oci.image.layer.v1.tar"
    digest = put(blob)
    if layer.get("corrupt"):
        with open(os.path.join(blobs, digest[7:]), "r+b") as f:
            f.seek(len(blob) - 1)
            f.write(bytes([blob[-1] ^ 1]))
    layers.append({"mediaType": media, "digest": digest, "size": len(blob)})

process = {"Env": spec.get("env", [])}
for key, name in (("entrypoint", "Entrypoint"), ("cmd", "Cmd")):
    if key in spec:
        process[name] = spec[key]
config = json.dumps({"architecture": "amd64", "os": "linux", "config": process,
                     "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
config_digest = put(config)
if spec.get("corrupt_config"):
    with open(os.path.join(blobs, config_digest[7:]), "wb") as f:
        f.write(config.replace(b'"os": "linux"', b'"os": "linux", "x": 1'))
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                  "digest": config_digest, "size": len(config)},
                       "layers": layers}).encode()
index = {"schemaVersion": 2,
         "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": put(manifest),
                        "size": len(manifest),
                        "annotations": {"org.opencontainers.image.ref.name": spec.get("tag", "t")}}]}
with open(os.path.join(out, "index.json"), "w") as f:
    json.dump(index, f)
with open(os.path.join(out, "oci-layout"), "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
