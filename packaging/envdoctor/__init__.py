"""envdoctor: will every native library in this Python environment load?

The tool is a native binary, installed by this wheel as the script ``envdoctor`` (a venv's
``bin/envdoctor``). This package finds it, so that ``python -m envdoctor ARGS`` runs it for
this interpreter's environment.
"""
import os
import sys
import sysconfig

__version__ = "@VERSION@"


def _recorded_binary():
    # The path pip wrote, from this distribution's RECORD: right for --user, --prefix and
    # --target installs alike.
    try:
        from importlib import metadata
    except ImportError:  # Python 3.7 and older
        return None
    try:
        files = metadata.distribution("envdoctor").files or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == "envdoctor" and f.parent.name == "bin":
            return str(f.locate())
    return None


def find_binary():
    """The envdoctor binary installed with this package; FileNotFoundError when there is none."""
    candidates = [_recorded_binary(), os.path.join(sysconfig.get_path("scripts"), "envdoctor")]
    user_scheme = "posix_user"
    if hasattr(sysconfig, "get_preferred_scheme"):
        user_scheme = sysconfig.get_preferred_scheme("user")
    candidates.append(os.path.join(sysconfig.get_path("scripts", user_scheme), "envdoctor"))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError("envdoctor: the envdoctor binary is not installed beside this package "
                            "(looked for " + ", ".join(c for c in candidates if c) + ")")


def main(argv=None):
    """Runs the binary with `argv` (default: sys.argv[1:]) for this interpreter's environment."""
    binary = find_binary()
    env = dict(os.environ)
    # With no --python, the binary examines the interpreter named here: this one.
    env["ENVDOCTOR_PYTHON"] = sys.executable
    args = sys.argv[1:] if argv is None else list(argv)
    os.execve(binary, [binary] + args, env)
