#!/usr/bin/env python3
"""Runs envdoctor's benchmarks against their peers and writes docs/benchmarks.md from the results.

    python3 bench/table.py [--envdoctor PATH] [--runs N] [--only REGEX] [--cold]
                           [--torch-venv DIR] [--pyenv-python PATH] [--list]
                           [--baseline PATH] [--baseline-commit COMMIT]

Each line of COMPARISONS is one benchmark: envdoctor's command and its peers' commands. The sides
are run interleaved, run by run, so that other work on the machine weighs on every side alike.
The order alternates (A B, then B A). A figure is the median wall time of the runs.

The results go to bench/results.json, one entry per benchmark. Each entry holds its date, the
commit, the machine, nproc and the load average. A benchmark not run this time keeps its last
entry: it was left out by --only, or it is cold and --cold was not given. The table is written
from that file, so it always lists every benchmark, each with the date it was measured.

Adding a benchmark is one line of COMPARISONS. Its commands name what they need in braces:
{envdoctor}, {debian}, {pyenv}, {torch}, {bench}, {many}, {uv}, {pip}, ... Each name is a method of
Context (`_torch` for {torch}), called once, when a benchmark first needs it; one that raises
NotAvailable leaves the benchmarks that need it "not measured", with its reason. Lists of files
are written @libs, @wide, @torch-libs; @libs/2 is the first half of the list. A new environment
is a method and a line of NAMES (how the intro describes it); SHORT gives its name in commands.
For example, `check --format json`'s warm figure on the torch venv against `uv pip check`, with a
goal of at most 1x, would be the line:

    Comparison("json-torch", "`check --format json`, the torch venv, warm",
               ed("check", "--no-cache", "--format", "json", "--python", "{torch}"), [uv_check("{torch}")],
               goal=1.0),

Every envdoctor command runs with XDG_CACHE_HOME set to a directory of the script's, fresh for each
benchmark ({index}), so that no figure reads an index another build left: `check --no-cache` bypasses
the index, and `check` without it is indexed once the benchmark's untimed first round has filled it.
"""
import argparse
import contextlib
import datetime
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results.json")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
TEST_CACHE = os.environ.get("ENVDOCTOR_TEST_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "envdoctor-tests")
# What the benchmarks build once and reuse: the many-distributions environment, env-doctor's install.
BENCH_CACHE = os.environ.get("ENVDOCTOR_BENCH_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "envdoctor-bench")
ENV_DOCTOR_REQUIREMENTS = os.path.join(HERE, "env-doctor.txt")
MANY = ("3000", "100")  # bench/make_many.py's COUNT and ELF_EVERY


# How the table names what a fixture stands for; the intro says what each is.
SHORT = {"envdoctor": "envdoctor", "debian": "/usr/bin/python3", "pyenv": "PYENV", "torch": "TORCH",
         "bench": "BENCH", "bench-pip": "BENCH", "libtree": "libtree", "uv": "uv", "pip": "pip",
         "map-floor": "map_floor", "wheels": "WHEELS", "leaf-wheel": "benchleaf-1.0-py3-none-any.whl",
         "libs": "LIBS", "wide": "WIDE", "torch-libs": "TORCH_LIBS", "libs-list": "LIBS",
         "baseline": "BASELINE", "many": "MANY"}


@dataclass
class Cmd:
    argv: list
    env: dict = field(default_factory=dict)  # values may name fixtures too
    stdin: str = ""  # a fixture whose file is the command's standard input
    prepare: list = field(default_factory=list)  # run, untimed, before each timed run
    label: str = ""  # how the table shows it; by default the argv with the fixtures' short names
    ok: tuple = (0, 1)  # the exit statuses of a run that did its work (1: it found something wrong)
    optional: bool = False  # a peer that cannot be had leaves its side alone not measured, not the benchmark
    cwd: str = ""  # a fixture: the directory it runs in (default: the script's)


@dataclass
class Comparison:
    key: str  # its entry in bench/results.json
    what: str
    subject: Cmd
    peers: list = field(default_factory=list)
    cold: bool = False  # the page cache dropped before every run (root; --cold)
    runs: int = 0  # 0: --runs
    goal: float = 0  # the ratio to reach against the first peer (at most), 0: none
    measure: object = None  # a function of its own instead of timing (the readers, counts)
    limit: float = 0  # the figure to stay under, in seconds, 0: none


def ed(*args, **kw):  # an envdoctor command, its index in a directory of the benchmark's own
    kw["env"] = dict(kw.get("env", {}), XDG_CACHE_HOME="{index}")
    return Cmd(["{envdoctor}", *args], **kw)


def cmd(*args, **kw):
    return Cmd(list(args), **kw)


def pip_check(python):
    return Cmd(["{pip}", "--python", python, "check", "--disable-pip-version-check"])


def libtree(files):  # its exit status counts the files it could not resolve
    return Cmd(["{libtree}", files], ok=tuple(range(126)))


def uv_check(python):
    return Cmd(["{uv}", "pip", "check", "--python", python])


def import_torch(python):  # its bytecode kept out of the environment
    return Cmd(["{%s}" % python, "-c", "import torch"], env={"PYTHONPYCACHEPREFIX": "{pycache}"},
               label='%s -c "import torch"' % SHORT[python])


ENV_DOCTOR_MAIN = "import sys; from env_doctor.cli import main; sys.argv[0] = 'env-doctor'; sys.exit(main())"


def env_doctor(python):
    """env-doctor's `check`, run by the environment's interpreter: it checks only the Python it runs in
    (it imports torch, tensorflow and jax, and reads importlib.metadata), and has no option to name
    another. Its install (bench/env-doctor.txt) comes first on PYTHONPATH; HOME holds its data
    files' cache, fresh, so that it does not fetch them from GitHub while timed. It runs in an empty
    directory: its check also reads every *.py below the current directory (a scan of the user's
    code for deprecated imports), which is no part of checking the environment."""
    return Cmd(["{%s}" % python, "-c", ENV_DOCTOR_MAIN, "check"], ok=(0, 1, 2), optional=True,  # 2: an error found
               env={"PYTHONPATH": "{env-doctor-%s}" % python, "HOME": "{env-doctor-home}",
                    "PYTHONPYCACHEPREFIX": "{pycache}"},
               label="env-doctor check (run by %s)" % SHORT[python], cwd="{empty}")


def check_group(python, what, uv=True, torch=False, cold_goal=0.5, indexed_goal=0.0, indexed_limit=0.0,
                cold_indexed=False):
    """`check` on one environment: cold and warm with the index bypassed (--no-cache), and indexed
    (the index filled by the untimed first round), each against its peers; with `cold_indexed`, also
    indexed with the page cache dropped (a node's health check after its memory went to a job)."""
    uv_peer = [uv_check("{%s}" % python)] if uv else []  # none on Debian's python3: it reads no dist-packages
    pip, rest = pip_check("{%s}" % python), [env_doctor(python)] + ([import_torch(python)] if torch else [])
    peers, cold_peers = uv_peer + [pip] + rest, [pip] + uv_peer + rest  # the first peer is the goal's
    bypass = ed("check", "--no-cache", "--python", "{%s}" % python)
    return [
        Comparison("check-cold-" + python, "`check`, %s, cold" % what, bypass, cold_peers, cold=True, runs=5,
                   goal=cold_goal),
        Comparison("check-warm-" + python, "`check`, %s, warm" % what, bypass, peers),
        Comparison("check-indexed-" + python, "`check`, %s, warm, indexed" % what,
                   ed("check", "--python", "{%s}" % python), peers, goal=indexed_goal, limit=indexed_limit),
    ] + ([Comparison("check-cold-indexed-" + python, "`check`, %s, cold, indexed" % what,
                     ed("check", "--python", "{%s}" % python), cold_peers, cold=True, runs=5, goal=cold_goal)]
         if cold_indexed else [])


BENCH_PIP = ["--no-index", "--find-links", "{wheels}", "--disable-pip-version-check", "-q"]
UNDO_LEAF = ["{bench-pip}", "-m", "pip", "uninstall", "-y", "-q", "benchleaf"]


def readers(name):  # a benchmark of bench/readers_bench.cc: its command, no peer, its measure
    return Cmd(["envdoctor_bench", "--benchmark_filter=" + name]), [], False, 0, 0, \
        lambda ctx: ctx.google_benchmark(name)


def pip_install(*args):  # shown without BENCH_PIP, which the notes name
    return cmd("{bench-pip}", "-m", "pip", "install", *args, *BENCH_PIP, "benchleaf", prepare=[UNDO_LEAF],
               label=" ".join(["BENCH -m pip install", *args, "benchleaf"]))


FLOOR_MAP, FLOOR_DYNSYM, FLOOR_PREAD = (cmd("{map-floor}", mode, stdin="{libs-list}") for mode in "123")
CHECK_BENCH = ed("check", "--no-cache", "--python", "{bench}")
VERIFY_BENCH = ed("check", "--no-cache", "--verify-hashes", "--python", "{bench}")


def calls_per_entry(python):  # system calls of `check` over the entries under the interpreter
    return lambda ctx: ctx.calls_per_entry(python)


def hash_rate(ctx):
    return ctx.hash_rate()


def pip_own_time(ctx):
    return ctx.pip_own_time()


def no_command(why):
    def measure(ctx):
        raise NotAvailable(why)
    return measure


COMPARISONS = [
    # ldd over every shared object of the machine, in one process each
    Comparison("ldd-libtree", "`ldd`, the machine's libraries, against libtree",
               ed("ldd", "--no-cache", "--exact", "@libs"), [libtree("@libs")], goal=1.0),
    Comparison("ldd-glibc", "`ldd`, the machine's libraries, against glibc's ldd",
               ed("ldd", "--no-cache", "--exact", "@libs"), [cmd("ldd", "@libs")], runs=5),
    Comparison("ldd-r-floor", "`ldd -r`, the machine's libraries, against the floor",
               ed("ldd", "--no-cache", "-r", "--exact", "@libs"), [FLOOR_DYNSYM], goal=2.0),
    Comparison("ldd-r-indexed-floor", "`ldd -r`, the machine's libraries, answered from the index, against the floor",
               ed("ldd", "-r", "--exact", "@libs"), [FLOOR_DYNSYM]),
    Comparison("floor-pread", "the floor: the tables read with pread, against mapped", FLOOR_PREAD, [FLOOR_MAP]),
    Comparison("ldd-half", "`ldd` on half the machine's libraries, against all",
               ed("ldd", "--no-cache", "--exact", "@libs/2"), [ed("ldd", "--no-cache", "--exact", "@libs")]),
    Comparison("ldd-wide-libtree", "`ldd`, the wide set, against libtree",
               ed("ldd", "--no-cache", "--exact", "@wide"), [libtree("@wide")], goal=1.0),
    Comparison("ldd-torch-libtree", "`ldd`, the torch venv's ELF files, against libtree",
               ed("ldd", "--no-cache", "--exact", "@torch-libs"), [libtree("@torch-libs")], goal=1.0),
    # check against the peers users compare it with, on real environments (issue 52): cold, warm, indexed
    *check_group("torch", "the torch venv", torch=True, indexed_goal=1.0, indexed_limit=0.1, cold_indexed=True),
    *check_group("debian", "Debian's python3", uv=False, torch=True),
    *check_group("many", "3,000 distributions"),
    Comparison("check-pyenv", "`check`, pyenv's interpreter, warm",
               ed("check", "--no-cache", "--python", "{pyenv}"), [pip_check("{pyenv}"), uv_check("{pyenv}")]),
    Comparison("check-pyenv-cold", "`check`, pyenv's interpreter, cold",
               ed("check", "--no-cache", "--python", "{pyenv}"), [pip_check("{pyenv}"), uv_check("{pyenv}")],
               cold=True, runs=5, goal=0.5),
    # against another build (--baseline): issue 51 asks that `check` be no slower on these two
    Comparison("baseline-debian", "`check`, Debian's python3, against the baseline's",
               ed("check", "--no-cache", "--python", "{debian}"),
               [cmd("{baseline}", "check", "--python", "{debian}")]),
    Comparison("baseline-pyenv", "`check`, pyenv's interpreter, against the baseline's",
               ed("check", "--no-cache", "--python", "{pyenv}"),
               [cmd("{baseline}", "check", "--python", "{pyenv}")]),
    Comparison("baseline-ldd", "`ldd`, the machine's libraries, against the baseline's",
               ed("ldd", "--no-cache", "--exact", "@libs"), [cmd("{baseline}", "ldd", "--exact", "@libs")]),
    Comparison("calls-pyenv", "system calls of `check` per entry walked, pyenv's interpreter",
               ed("check", "--no-cache", "--python", "{pyenv}"), measure=calls_per_entry("{pyenv}"), goal=1.1),
    # check and the fleet's commands on the benchmark environment (bench/make_env.py: 2,000 library files)
    Comparison("check-bench", "`check`, the benchmark environment",
               ed("check", "--no-cache", "--python", "{bench}"), [uv_check("{bench}")]),
    Comparison("without-bench", "`check --without` (a simulation), against `check`",
               ed("check", "--no-cache", "--python", "{bench}", "--without", "benchpkg0_3"), [CHECK_BENCH]),
    Comparison("snapshot-bench", "`snapshot`, against `check`", ed("snapshot", "--python", "{bench}"), [CHECK_BENCH]),
    Comparison("digest-bench", "`snapshot --digest`, against `check`",
               ed("snapshot", "--digest", "--python", "{bench}"), [CHECK_BENCH]),
    Comparison("nhc-bench", "`check --format nhc`, against `check`",
               ed("check", "--no-cache", "--format", "nhc", "--python", "{bench}"), [CHECK_BENCH]),
    Comparison("hashes-bench", "`check --verify-hashes`, against `check`", VERIFY_BENCH, [CHECK_BENCH], runs=5),
    Comparison("hash-rate", "`--verify-hashes`' rate, against one core's SHA-256", VERIFY_BENCH,
               [cmd("openssl", "speed", "-evp", "sha256", "-bytes", "1048576")], measure=hash_rate),
    # envdoctor pip against pip: a small wheel from a local wheelhouse, uninstalled before each run
    Comparison("pip-install", "`pip install` through envdoctor, against pip's install and pip's dry run",
               ed("pip", "--python", "{bench-pip}", "install", *BENCH_PIP, "benchleaf", prepare=[UNDO_LEAF],
                  label="envdoctor pip --python BENCH install benchleaf"),
               [pip_install(), pip_install("--dry-run", "--report", "-", "--only-binary=:all:")], runs=5, goal=1.5),
    Comparison("pip-own", "envdoctor's own time in `envdoctor pip install` (the row above)",
               Cmd([], label="envdoctor pip install … less pip install … and its dry run"),
               measure=pip_own_time),
    Comparison("with-bench", "`check --with` a wheel, against `check`",
               ed("check", "--no-cache", "--python", "{bench-pip}", "--with", "{leaf-wheel}"),
               [ed("check", "--no-cache", "--python", "{bench-pip}")]),
    Comparison("ldconfig", "the ldconfig model, the machine's libraries, against glibc's ldconfig",
               Cmd([], label="loader::run_ldconfig"), [cmd("ldconfig", "-r", "ROOT", "-X")],
               measure=no_command("no command runs the model alone (its figures of 2026-12-02 came from a "
                                  "driver program that is not in bench/)")),
    # the readers, on real files (Google Benchmark, bench/readers_bench.cc)
    Comparison("parse-libc", "map and parse libc.so.6", *readers("ParseElf/libc")),
    Comparison("parse-cublaslt", "map and parse libcublasLt.so.13", *readers("ParseElf/libcublasLt")),
    Comparison("fatbins-cublaslt", "every fatbinary entry of libcublasLt.so.13", *readers("ListFatbins/libcublasLt")),
    Comparison("fatbins-cudnn", "every fatbinary entry of libcudnn_engines_precompiled.so.9",
               *readers("ListFatbins/libcudnn_engines_precompiled")),
]

class NotAvailable(Exception):
    """A fixture that cannot be had here: the benchmark is not measured, and the table says why."""


def label(c):
    if c.label:
        return c.label
    words = []
    for a in c.argv:
        m = re.fullmatch(r"@([\w-]+)(/\d+)?", a)
        if m:
            words.append(SHORT[m.group(1)] + (m.group(2) or ""))
        else:
            words.append(re.sub(r"\{([\w-]+)\}", lambda n: SHORT.get(n.group(1), n.group(1)), a))
    text = " ".join(words)
    return text + (" < " + SHORT[c.stdin.strip("{}")] if c.stdin else "")


def elf_files(dirs, recursive):
    """The regular ELF shared objects (*.so*) under dirs, sorted: bench/run.sh's set of old."""
    out = []
    for d in dirs:
        if not os.path.isdir(d):
            continue
        walk = os.walk(d) if recursive else [(d, [], os.listdir(d))]
        for top, _, names in walk:
            for n in names:
                p = os.path.join(top, n)
                if ".so" not in n or os.path.islink(p) or not os.path.isfile(p):
                    continue
                try:
                    with open(p, "rb") as f:
                        if f.read(4) == b"\x7fELF":
                            out.append(p)
                except OSError:
                    pass
    return sorted(out)


class Context:
    """The fixtures, built once when a benchmark first needs them, in a work directory of its own."""

    def __init__(self, args, work, results):
        self.args, self.work, self.results = args, work, results
        self.cache = {}

    def get(self, name):
        if name not in self.cache:
            try:
                self.cache[name] = getattr(self, "_" + name.replace("-", "_"))()
            except NotAvailable as e:
                self.cache[name] = e
        value = self.cache[name]
        if isinstance(value, NotAvailable):
            raise value
        return value

    def expand(self, c):
        """The argv, environment, standard input and directory of c, every fixture in place."""
        argv = []
        for a in c.argv:
            m = re.fullmatch(r"@([\w-]+)(?:/(\d+))?", a)
            if m:
                files = self.get(m.group(1))
                argv += files[:len(files) // int(m.group(2) or 1)]
            else:
                argv.append(self.fill(a))
        env = dict(os.environ, **{k: self.fill(v) for k, v in c.env.items()})
        return argv, env, self.fill(c.stdin) if c.stdin else None, self.fill(c.cwd) if c.cwd else None

    def fill(self, text):
        return re.sub(r"\{([\w-]+)\}", lambda m: str(self.get(m.group(1))), text)

    def _envdoctor(self):
        """A copy of the binary, so that a build while the benchmarks run does not change what they time."""
        return self.copy(os.path.abspath(self.args.envdoctor), "no envdoctor at %s (make build)")

    def _readers(self):
        built = os.path.join(os.path.dirname(os.path.abspath(self.args.envdoctor)), "bench", "envdoctor_bench")
        return self.copy(built, "no %s (cmake --build build --target envdoctor_bench)")

    def _baseline(self):
        """--baseline: another build of envdoctor (an earlier commit's), timed against this one."""
        return self.copy(os.path.abspath(self.args.baseline), "no baseline binary at %s", "baseline")

    def copy(self, path, why, name=""):
        if not os.access(path, os.X_OK):
            raise NotAvailable(why % path)
        os.makedirs(os.path.join(self.work, "bin"), exist_ok=True)
        return shutil.copy2(path, os.path.join(self.work, "bin", name or os.path.basename(path)))

    def tool(self, name, why):
        path = shutil.which(name)
        if not path:
            raise NotAvailable(why)
        return path

    def pinned(self, name):
        path = os.path.join(TEST_CACHE, "tools", "bin", name)
        if not os.access(path, os.X_OK):
            raise NotAvailable("the tests' pinned %s is not installed (scripts/install-test-tools.sh)" % name)
        return path

    def _libtree(self):
        return self.tool("libtree", "libtree is not installed (scripts/install-deps.sh --test)")

    def _uv(self):
        return self.pinned("uv")

    def _pip(self):
        return self.pinned("pip")

    def _debian(self):
        if not os.access("/usr/bin/python3", os.X_OK):
            raise NotAvailable("no /usr/bin/python3")
        return "/usr/bin/python3"

    def _pyenv(self):
        path = os.path.expanduser(self.args.pyenv_python)
        if not os.access(path, os.X_OK):
            raise NotAvailable("no pyenv interpreter at %s" % self.args.pyenv_python)
        return path

    def _torch(self):
        """--torch-venv, else torch 2.11's CUDA venv built as tests/real builds it: uv, offline, the corpus."""
        venv = self.args.torch_venv
        if not venv:
            venv = os.path.join(self.work, "torch")
            uv, env = self.get("uv"), dict(os.environ, UV_CACHE_DIR=os.path.join(TEST_CACHE, "uv-cache"))
            wheels = os.path.join(TEST_CACHE, "wheels")
            if not os.path.isdir(wheels):
                raise NotAvailable("the corpus of real wheels is not fetched (scripts/install-test-tools.sh)")
            for argv in ([uv, "venv", "-q", "-p", "python3", venv],
                         [uv, "pip", "install", "-q", "--offline", "--no-index", "--find-links", wheels, "--python",
                          venv + "/bin/python", "torch==2.11.0", "bitsandbytes==0.50.2", "numpy"]):
                if subprocess.run(argv, env=env).returncode != 0:
                    raise NotAvailable("uv could not build the torch venv from the corpus")
        python = os.path.join(venv, "bin", "python")
        if not os.access(python, os.X_OK):
            raise NotAvailable("no %s" % python)
        return python

    def _pycache(self):  # import torch's bytecode, kept out of the venv
        return os.path.join(self.work, "pycache")

    def _index(self):  # measure() gives each benchmark a fresh one; this one is for the rest (the intro's facts)
        return self.fresh_dir("index-facts")

    def _empty(self):
        return self.fresh_dir("empty")

    def fresh_dir(self, name):
        path = os.path.join(self.work, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def _many(self):
        """bench/make_many.py's 3,000 distributions, built once under BENCH_CACHE and reused while the
        script and its arguments are the same (its stamp)."""
        stamp = sha256_of(os.path.join(HERE, "make_many.py")) + " " + " ".join(MANY) + " " + sys.version.split()[0]
        out = os.path.join(BENCH_CACHE, "many")
        with bench_cache_lock():
            if read(os.path.join(out, "made-by")) != stamp:
                shutil.rmtree(out, ignore_errors=True)
                built = subprocess.run([sys.executable, os.path.join(HERE, "make_many.py"), out, *MANY],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if built.returncode != 0:
                    shutil.rmtree(out, ignore_errors=True)
                    raise NotAvailable("bench/make_many.py failed: " + (built.stderr.strip().splitlines() or [""])[-1])
                with open(os.path.join(out, "made-by"), "w") as f:
                    f.write(stamp)
        return os.path.join(out, "bin", "python")

    def _env_doctor_torch(self):
        return self.env_doctor_site("torch")

    def _env_doctor_debian(self):
        return self.env_doctor_site("debian")

    def _env_doctor_many(self):
        return self.env_doctor_site("many")

    def env_doctor_site(self, name):
        """env-doctor and what it needs, pinned by version and sha256 (bench/env-doctor.txt), installed
        by the tests' pip, run by the environment's interpreter, into BENCH_CACHE/env-doctor/TAG (TAG:
        that interpreter's version, whose wheels these are), once: a later run asks no index."""
        python = self.get(name)
        tag = subprocess.run([python, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"], check=True,
                             capture_output=True, text=True).stdout.strip()
        root = os.path.join(BENCH_CACHE, "env-doctor", tag)
        want = sha256_of(ENV_DOCTOR_REQUIREMENTS)
        with bench_cache_lock():
            if read(os.path.join(root, "requirements.sha256")) != want:
                shutil.rmtree(root, ignore_errors=True)
                installed = subprocess.run(
                    [self.get("pip"), "--python", python, "install", "-q", "--disable-pip-version-check", "--no-input",
                     "--require-hashes", "--only-binary=:all:", "--no-deps", "--target", os.path.join(root, "site"),
                     "-r", ENV_DOCTOR_REQUIREMENTS], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if installed.returncode != 0:
                    shutil.rmtree(root, ignore_errors=True)
                    lines = installed.stderr.strip().splitlines() or [""]
                    raise NotAvailable("env-doctor 0.3.5 could not be installed (bench/env-doctor.txt, no index?): " +
                                       next((x for x in lines if "error" in x.lower()), lines[-1]).strip()[:200])
                with open(os.path.join(root, "requirements.sha256"), "w") as f:
                    f.write(want)
        return os.path.join(root, "site")

    def _env_doctor_home(self):
        """env-doctor's HOME: the cache of its data files (~/.env_doctor_cache.json and the engines'),
        written fresh from the data its package ships, so that it reads them rather than fetching
        them from GitHub (it does when they are older than a day or absent)."""
        data = sorted(glob.glob(os.path.join(BENCH_CACHE, "env-doctor", "*", "site", "env_doctor", "data")))
        if not data:
            raise NotAvailable("env-doctor is not installed")
        home = self.fresh_dir("env-doctor-home")
        for cache, shipped in ((".env_doctor_cache.json", "compatibility.json"),
                               (".env_doctor_engines_cache.json", "inference_engines.json")):
            shutil.copyfile(os.path.join(data[0], shipped), os.path.join(home, cache))
        return home

    def _bench(self):
        return self.bench_env("bench")

    def _bench_pip(self):
        python = self.bench_env("bench-pip")
        subprocess.run([python, "-m", "ensurepip"], check=True, stdout=subprocess.DEVNULL)
        return python

    def bench_env(self, name):
        """bench/make_env.py's environment: four copies of 500 of the machine's libraries, 2,000 files."""
        out = os.path.join(self.work, name)
        subprocess.run([sys.executable, os.path.join(HERE, "make_env.py"), out, "4", "500"], check=True,
                       stdout=subprocess.DEVNULL)
        return os.path.join(out, "bin", "python")

    def _wheels(self):
        self.get("leaf-wheel")
        return os.path.join(self.work, "wheels")

    def _leaf_wheel(self):
        spec = {"out": os.path.join(self.work, "wheels"), "name": "benchleaf", "version": "1.0",
                "files": {"benchleaf/__init__.py": "x = 1\n"}}
        os.makedirs(spec["out"], exist_ok=True)
        return subprocess.run([sys.executable, os.path.join(ROOT, "tests", "fixtures", "data", "python", "make_wheel.py"),
                               json.dumps(spec)], check=True, capture_output=True, text=True).stdout.strip()

    def _libs(self):
        """Every ELF shared object directly under the system's library directory and CUDA's."""
        return elf_files(["/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64"], recursive=False)

    def _wide(self):
        """LIBS, and every one below dist-packages and pyenv's interpreters' lib-dynload and site-packages."""
        trees = ["/usr/lib/python3/dist-packages"] + sorted(
            glob.glob(os.path.expanduser("~/.pyenv/versions/*/lib/python3*/lib-dynload")) +
            glob.glob(os.path.expanduser("~/.pyenv/versions/*/lib/python3*/site-packages")))
        return sorted(self.get("libs") + elf_files(trees, recursive=True))

    def _torch_libs(self):
        venv = os.path.dirname(os.path.dirname(self.get("torch")))
        return elf_files([os.path.join(venv, "lib")], recursive=True)

    def _libs_list(self):
        path = os.path.join(self.work, "libs.txt")
        with open(path, "w") as f:
            f.write("".join(p + "\n" for p in self.get("libs")))
        return path

    def _map_floor(self):
        out = os.path.join(self.work, "map_floor")
        cc = self.tool("cc", "no C compiler")
        subprocess.run([cc, "-O2", "-o", out, os.path.join(HERE, "map_floor.c")], check=True)
        return out

    # Benchmarks that are not a timing of their own (Comparison.measure).

    def google_benchmark(self, name):
        out = subprocess.run([self.get("readers"), "--benchmark_filter=^%s$" % name, "--benchmark_repetitions=5",
                              "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                             check=True, capture_output=True, text=True).stdout
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
        for b in json.loads(out)["benchmarks"]:
            if b.get("error_occurred"):
                raise NotAvailable(b.get("error_message", "skipped"))
            if b.get("aggregate_name") == "median":
                return {"runs": 5, "sides": [{"value": b["real_time"] * scale[b["time_unit"]], "unit": "s"}]}
        raise NotAvailable("envdoctor_bench has no benchmark %s" % name)

    def calls_per_entry(self, python):
        """strace's count of every system call of one `check` (the interpreter's probe too), over the
        entries below the interpreter's lib directory (`find PREFIX/lib | wc -l`)."""
        self.tool("strace", "strace is not installed")
        python = self.fill(python)
        prefix = subprocess.run([python, "-c", "import sys; print(sys.prefix)"], check=True, capture_output=True,
                                text=True).stdout.strip()
        entries = 1 + sum(len(dirs) + len(files) for _, dirs, files in os.walk(os.path.join(prefix, "lib")))
        trace = os.path.join(self.work, "strace.txt")
        subprocess.run(["strace", "-f", "-c", "-o", trace, self.get("envdoctor"), "check", "--no-cache", "--python",
                        python], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        calls = int(open(trace).read().strip().splitlines()[-1].split()[3])
        return {"runs": 1, "detail": "{:,} system calls, {:,} entries".format(calls, entries),
                "sides": [{"value": calls / entries, "unit": "calls/entry"}]}

    def hash_rate(self):
        """The bytes `--verify-hashes` reads over the time it adds to `check` (hashes-bench's medians),
        against OpenSSL's SHA-256 on one core, 1 MiB blocks."""
        timed = self.results.get("hashes-bench", {})
        if "sides" not in timed:
            raise NotAvailable("hashes-bench is not measured")
        site = subprocess.run([self.get("bench"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        size = sum(os.path.getsize(os.path.join(top, n)) for top, _, names in os.walk(site) for n in names)
        added = timed["sides"][0]["value"] - timed["sides"][1]["value"]
        speed = subprocess.run(["openssl", "speed", "-evp", "sha256", "-bytes", "1048576", "-seconds", "2"],
                               capture_output=True, text=True).stdout.strip().splitlines()[-1].split()[-1]
        return {"runs": timed["runs"], "detail": "%.2f GB in %.2f s beyond check" % (size / 1e9, added),
                "sides": [{"value": size / added / 1e9, "unit": "GB/s"},
                          {"value": float(speed.rstrip("k")) * 1e3 / 1e9, "unit": "GB/s"}]}

    def pip_own_time(self):
        """What `envdoctor pip install` adds to pip's two runs: its median less the medians of pip's
        install and of pip's dry run (pip-install's runs)."""
        timed = self.results.get("pip-install", {})
        if "sides" not in timed:
            raise NotAvailable("pip-install is not measured")
        whole, install, dry = (s["value"] for s in timed["sides"])
        return {"runs": timed["runs"], "sides": [{"value": whole - install - dry, "unit": "s"}]}


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


@contextlib.contextmanager
def bench_cache_lock():  # one builder of BENCH_CACHE at a time (two runs of the script)
    os.makedirs(BENCH_CACHE, exist_ok=True)
    with open(os.path.join(BENCH_CACHE, ".lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def run_once(argv, env, stdin, cwd, cold):
    """Wall time, CPU time (user + system, children included) and exit status of one run."""
    if cold:
        drop_caches()
    with open(stdin or os.devnull, "rb") as source:
        start = time.perf_counter()
        p = subprocess.Popen(argv, env=env, stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             cwd=cwd)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, p.returncode


def time_interleaved(ctx, cmds, runs, cold):
    """Runs each command `runs` times, one run of each in turn (A B, then B A), after one untimed
    run each (cold runs drop the page cache before each run). A peer that is optional (Cmd.optional)
    and cannot be had or fails is left out of the turns, its side not measured, with the reason."""
    sides, missing = [], {}
    for k, c in enumerate(cmds):
        try:
            sides.append((k, ctx.expand(c), [ctx.expand(Cmd(p)) for p in c.prepare], c))
        except NotAvailable as e:
            if not c.optional:
                raise
            missing[k] = str(e)
    walls, cpus = [[] for _ in cmds], [[] for _ in cmds]
    for i in range(runs + 1):
        for k, (argv, env, stdin, cwd), prepare, c in sides if i % 2 == 0 else sides[::-1]:
            if k in missing:
                continue
            for p_argv, p_env, _, _ in prepare:
                subprocess.run(p_argv, env=p_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall, cpu, status = run_once(argv, env, stdin, cwd, cold)
            if status not in c.ok:  # a run that stopped early would time nothing
                why = failure(c, argv, env, cwd, status)
                if not c.optional:
                    raise NotAvailable(why)
                missing[k] = why
            elif i > 0:  # the first round is the warm-up
                walls[k].append(wall)
                cpus[k].append(cpu)
    return {"runs": runs, "sides": [{"not_measured": missing[k]} if k in missing else
                                    {"value": statistics.median(w), "unit": "s", "cpu": statistics.median(u),
                                     "samples": [round(x, 6) for x in w]}
                                    for k, (w, u) in enumerate(zip(walls, cpus))]}


def failure(c, argv, env, cwd, status):
    """Why a run of c did not do its work: its status and the line of its error that says error."""
    error = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, cwd=cwd,
                           stderr=subprocess.PIPE, text=True, errors="replace").stderr.strip()
    lines = error.splitlines() or [""]
    words = next((line for line in lines if "error" in line.lower()), lines[0])
    return "`%s` exited with %d%s" % (label(c), status, ": " + words[:200] if words else "")


def machine():
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = re.sub(r"\((R|TM|tm)\)| CPU| Processor|\s+@.*|\s+\d+-Core", "", line.split(":", 1)[1]).strip()
                break
    with open("/proc/meminfo") as f:
        memory = int(f.readline().split()[1]) / (1 << 20)
    system = "Linux"
    if os.path.exists("/etc/os-release"):
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                system = line.split("=", 1)[1].strip().strip('"')
    return {"cpu": cpu, "nproc": len(os.sched_getaffinity(0)), "memory_gib": round(memory),
            "kernel": os.uname().release, "os": system, "libc": os.confstr("CS_GNU_LIBC_VERSION")}


def commit():
    git = ["git", "-C", ROOT]
    head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    return head + ("+" if dirty else "")  # + : the tree had changes not committed


def measure(ctx, c, runs):
    entry = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
             "commit": ctx.commit, "machine": machine(), "load": [round(os.getloadavg()[0], 2)],
             "commands": commands(c)}
    ctx.cache["index"] = ctx.fresh_dir(os.path.join("index", c.key))  # no index of another benchmark's
    try:
        if c.cold and os.geteuid() != 0:
            raise NotAvailable("a cold run drops the page cache, which needs root")
        if c.measure:
            entry.update(c.measure(ctx))
        else:
            entry.update(time_interleaved(ctx, [c.subject] + c.peers, c.runs or runs, c.cold))
    except NotAvailable as e:
        entry["not_measured"] = str(e)
    entry["load"].append(round(os.getloadavg()[0], 2))
    return entry


def commands(c):  # what an entry was measured with: a figure of other commands is not shown as this one's
    return [label(side) for side in [c.subject] + c.peers]


def names_in(c):
    out = []
    for side in [c.subject] + c.peers:
        for a in side.argv + list(side.env.values()) + [side.stdin]:
            out += re.findall(r"^@([\w-]+)|\{([\w-]+)\}", a or "")
    return {a or b for a, b in out}


PYTHONS = ("debian", "pyenv", "torch", "bench", "bench-pip", "many")


def note_facts(ctx, c, facts):
    """What each name of c's commands stood for, in the intro: an environment's first line of
    `check` (its interpreter, packages and ELF files), a list's files and their size."""
    for name in names_in(c):
        try:
            if name in ("libs", "wide", "torch-libs"):
                files = ctx.get(name)
                size = sum(os.path.getsize(p) for p in files)
                text = "%d files, %.1f GB" % (len(files), size / 1e9)
            elif name == "baseline":
                text = "the build of %s" % (ctx.args.baseline_commit or "an unnamed commit")
            elif name in PYTHONS:
                python = ctx.get(name)
                report = subprocess.run([ctx.get("envdoctor"), "check", "--python", python], capture_output=True,
                                        text=True, env=dict(os.environ, XDG_CACHE_HOME=ctx.get("index"))).stdout
                first = " ".join(report.split("\n\n", 1)[0].split())  # its first paragraph, wrapped
                text = first if name in ("debian", "pyenv", "torch") else first[first.find(" (") + 1:]
            else:
                continue
        except NotAvailable:
            continue
        facts[name] = {"text": text, "date": datetime.date.today().isoformat()}


def figure(value, unit):
    if unit != "s":
        return "%.2f %s" % (value, unit)
    if abs(value) < 1e-3:
        return "%.1f µs" % (value * 1e6)
    if abs(value) < 1:
        return ("%.2f ms" if abs(value) < 0.01 else "%.1f ms") % (value * 1e3)
    return "%.2f s" % value


def limit_text(seconds):
    return "%g ms" % (seconds * 1e3) if seconds < 1 else "%g s" % seconds


def met(yes):
    return "met" if yes else "**not met**"


def verdict(value, goal, unit="×"):
    return " (goal ≤ %g%s: %s)" % (goal, unit, met(value <= goal))


def rows(c, e, cold_asked):
    """The table's rows of comparison c from its entry e: one per peer, or one alone."""
    what, command = c.what, "`%s`" % label(c.subject)
    peers = [label(p) for p in c.peers] or ["—"]
    if e and e.get("commands", commands(c)) != commands(c):
        e = {"not_measured": "its commands changed since its last figures (%s): run it again%s" % (
            e["date"], " with --baseline PATH" if "baseline" in names_in(c) else "")}
    if not e or "not_measured" in e:
        why = e["not_measured"] if e else (
            "cold: run with --cold, as root" if c.cold and not cold_asked else
            "run with --baseline PATH" if "baseline" in names_in(c) else "not run yet")
        return [[what, command, "not measured: " + why, "`%s`" % peers[0] if c.peers else "—", "", "", "", "", ""]]
    m = e["machine"]
    where = "%s, nproc %d, load %.1f–%.1f" % (m["cpu"], m["nproc"], e["load"][0], e["load"][-1])
    when = "%s, %s" % (e["date"], e["commit"])
    sides = e["sides"]
    mine = sides[0]
    out = []
    for i, peer in enumerate(peers):
        if i + 1 < len(sides) and "not_measured" in sides[i + 1]:
            cells = ["`%s`" % peer, "not measured: " + sides[i + 1]["not_measured"], ""]
        elif i + 1 < len(sides):
            theirs, ratio = sides[i + 1], mine["value"] / sides[i + 1]["value"]
            ratio_text = ("%.3f×" if ratio < 0.1 else "%.2f×") % ratio + (verdict(ratio, c.goal) if c.goal and i == 0
                                                                         else "")
            cells = ["`%s`" % peer, figure(theirs["value"], theirs["unit"]), ratio_text]
        else:
            goal = verdict(mine["value"], c.goal, " " + mine["unit"]).strip(" ()") if c.goal else ""
            cells = [peer if peer == "—" else "`%s`" % peer, "", goal]
        detail = " (%s)" % e["detail"] if e.get("detail") else ""
        limit = " (goal < %s: %s)" % (limit_text(c.limit), met(mine["value"] < c.limit)) if c.limit else ""
        mine_cells = [what, command, figure(mine["value"], mine["unit"]) + detail + limit]
        runs_when_where = [str(e["runs"]), when, where]
        if i > 0:  # the same runs as the row above: only the peer's cells
            mine_cells, runs_when_where = ["", "", ""], ["", "", ""]
        out.append(mine_cells + cells + runs_when_where)
    return out


def goal_rows(c, e):
    """The goals' table: a row per goal of comparison c (its ratio to the first peer, its figure's
    limit), from its entry e, with the verdict of the table's row."""
    wanted = ([("at most %g× `%s`" % (c.goal, label(c.peers[0])) if c.peers else "at most %g" % c.goal, "goal")]
              if c.goal else []) + ([("under " + limit_text(c.limit), "limit")] if c.limit else [])
    out = []
    for text, kind in wanted:
        if not e or "sides" not in e or e.get("commands", commands(c)) != commands(c) or any(
                "not_measured" in side for side in e["sides"][:2]):
            out.append([c.what, text, "`%s`" % c.key, "—", "not measured"])
            continue
        mine = e["sides"][0]
        if kind == "limit":
            value, ok = figure(mine["value"], "s"), mine["value"] < c.limit
        elif c.peers:
            theirs = e["sides"][1]
            ratio = mine["value"] / theirs["value"]
            value, ok = "%.2f× (%s against %s)" % (ratio, figure(mine["value"], mine["unit"]),
                                                  figure(theirs["value"], theirs["unit"])), ratio <= c.goal
        else:
            value, ok = figure(mine["value"], mine["unit"]), mine["value"] <= c.goal
        out.append([c.what, text, "`%s`" % c.key, value + ", " + e["date"][:10], met(ok)])
    return out


NAMES = [  # (name in the commands, fixture, what it is)
    ("LIBS", "libs", "every regular ELF shared object (`*.so*`, not a link) directly under "
     "`/usr/lib/x86_64-linux-gnu` and `/usr/local/cuda/lib64`, all given to one process"),
    ("WIDE", "wide", "LIBS and every such file below `/usr/lib/python3/dist-packages` and every pyenv "
     "interpreter's `lib-dynload` and `site-packages`"),
    ("TORCH", "torch", "the python of a real venv of torch 2.11.0+cu130 and everything it pins, bitsandbytes "
     "and numpy, installed by uv (`--torch-venv DIR`; without it the script builds one from the tests' corpus of "
     "real wheels, offline, as tests/real does)"),
    ("TORCH_LIBS", "torch-libs", "every ELF shared object below TORCH's venv"),
    ("/usr/bin/python3", "debian", "Debian's python3, with the packages of `scripts/install-deps.sh --test` "
     "(python3-torch, -numpy, -scipy, ...)"),
    ("MANY", "many", "`bench/make_many.py DIR 3000 100`: a venv of 3,000 small distributions, each as pip "
     "leaves it (a package; METADATA, WHEEL, INSTALLER and a RECORD with every file's sha256), whose Requires-Dist "
     "name each other (all met), one in 100 holding a hard link to one of the machine's small shared libraries; "
     "built once under `~/.cache/envdoctor-bench` (`$ENVDOCTOR_BENCH_CACHE`) and reused"),
    ("PYENV", "pyenv", "a pyenv interpreter with many pure packages (`--pyenv-python`)"),
    ("BASELINE", "baseline", "another build of envdoctor, an earlier commit's (`--baseline PATH`, "
     "`--baseline-commit`)"),
    ("BENCH", "bench", "`bench/make_env.py DIR 4 500`: a venv whose packages hold hard links to 500 of the "
     "machine's libraries, four times over, each package with a real RECORD; for the pip rows the same with "
     "pip added (`ensurepip`)"),
]

NOTES = """\
## Method

- **Interleaved, medians.** The machine is shared: other builds run while the script does. Each
  benchmark runs its sides in turn, one run of each, in alternating order, after one untimed run of
  each; the figure is the median wall time, and `bench/results.json` keeps every run's time and the
  median CPU time (user + system, children included). The machine column gives the load average
  (one minute) before and after the benchmark: compare the lines of one benchmark, not benchmarks
  taken at different loads. Timing starts before `fork` and ends at `wait4` (about a millisecond of
  Python's `subprocess`, on every side alike). A run that exits with a status other than 0 or 1
  (libtree: 126 or more; its status counts the files it could not resolve) did not do its work,
  and leaves the benchmark not measured, with the tool's words.
- **The binary** (`--envdoctor`, default `build/envdoctor`, and `envdoctor_bench` beside it) is
  copied before the first benchmark, so that a build during the run changes nothing. The date
  column names the commit it was built from (`--commit`, else the tree's; `+`: the tree had
  changes not committed).
- **Cold** rows drop the page cache (`sync; echo 3 > /proc/sys/vm/drop_caches`) before every run,
  untimed; they need root and `--cold`, since they slow whoever else uses the machine.
- **`ldd`** rows give every file to one process, as one command line would, with `--no-cache`:
  the whole work, not the persistent index's answer. `envdoctor ldd` checks symbol versions and
  binds nothing, as glibc's `ldd`; `ldd -r` also binds every undefined symbol, as `ldd -r`;
  libtree reads NEEDED, RPATH and RUNPATH only. `--exact` keeps ld.so's view
  of CPython extension modules, as the differential test ([differential.md](differential.md)) does.
  envdoctor uses every core; libtree, glibc's `ldd` (one file after another) and the floor use one,
  so a load that takes a core away weighs on envdoctor more: its ratios are best read at a low load.
- **The floor** is `bench/map_floor.c`, built by the script, on one core: `map_floor 1` maps each
  file and touches its header, `map_floor 2` also walks its whole `.dynsym` (the one table a loader
  model that checks symbols must read whole), `map_floor 3` reads the tables the model reads with
  `pread` instead of mapping them. Nothing else is parsed or bound.
- **`check` cold, warm and indexed.** Every envdoctor command runs with `XDG_CACHE_HOME` set to a
  directory of the script's, fresh for each benchmark, so that no figure reads an index another
  build left. *Cold* and *warm* run `check --no-cache`, which bypasses the persistent index: all
  the work, the page cache dropped before each run (cold) or not (warm). *Indexed* runs `check` as
  users do: the benchmark's untimed first round fills the index, and each timed run re-reads only
  what changed (nothing). *Cold, indexed* (the torch venv) is the indexed run with the page cache
  dropped: the entry and the inodes of its inputs read from the disk.
- **`ldd -r` answered from the index** (`ldd-r-indexed-floor`) is the same command without
  `--no-cache`, after the untimed first round: a second `ldd -r` of unchanged files. It is shown
  beside the floor, with no goal: the goal is the binding's own speed (`ldd-r-floor`).
- **`check` against `pip check` and `uv pip check`**: pip and uv read only the dist-info of each
  distribution; envdoctor reads every ELF file as well. `pip` and `uv` are the tests' pinned ones
  (tests/requirements/tools.txt); `pip --python PY check` runs that pip with PY. `uv pip check` is
  no peer on Debian's python3: it reads `site-packages`, not Debian's `dist-packages`, and checks
  no package there (`Checked 0 packages`), so it is left out of those rows.
  `python -c "import torch"` keeps its bytecode under a directory of the script's
  (`PYTHONPYCACHEPREFIX`), so the venv is not written to and the import is warm after its first run.
- **`env-doctor check`** is the PyPI project env-doctor 0.3.5, its own `check` command. It checks
  only the interpreter it runs in (it imports torch, tensorflow and jax and reads
  `importlib.metadata`; no option names another Python), so the script runs it with the
  environment's interpreter, `PY -c "from env_doctor.cli import main; main()" check`, with
  env-doctor and what it needs (`bench/env-doctor.txt`, pinned by version and sha256) first on
  `PYTHONPATH`: its own pydantic, packaging, ... are the ones it sees, and the environment is not
  changed. They are installed once (`pip install --require-hashes --only-binary=:all: --target`)
  under `~/.cache/envdoctor-bench/env-doctor/cpXY` and reused offline; where they cannot be had,
  its rows say so. `HOME` is a directory of the script's holding env-doctor's data cache
  (`~/.env_doctor_cache.json`, and the engines'), written fresh from the data its wheel ships, so
  that it does not fetch the data from GitHub while timed. It runs in an empty directory: its
  check also reads every `*.py` below the current directory (a scan of the user's code for
  deprecated imports), which is no part of checking the environment. Its bytecode goes where
  `import torch`'s does. It exits 0, 1 or 2 (2: it found an error), all runs that did their work.
- **Against the baseline**: the same command of another build (`--baseline PATH`, an earlier
  commit's), to show that a change made nothing slower; `check --no-cache` against a baseline
  without the index is the same work. Without `--baseline` these rows keep their last figures.
- **System calls per entry**: `strace -f -c` of one `check --no-cache`, the interpreter's probe
  included, over the entries below the interpreter's `lib` (`find PREFIX/lib | wc -l`).
- **`--verify-hashes`' rate**: the size of the files below BENCH's site-packages over the time
  `--verify-hashes` adds to `check` (the medians of the row above), beside `openssl speed -evp
  sha256 -bytes 1048576` on one core.
- **`envdoctor pip install`** runs pip twice (its dry run with `--report`, then the user's command),
  so the ratio's floor is pip's two runs over one. Its own time is its median less the medians of
  pip's install and of the dry run; `check --with` is the same work with pip left out. Every pip
  command there also has `--no-index --find-links WHEELS --disable-pip-version-check -q`, WHEELS a
  wheelhouse of the script's holding one pure wheel, `benchleaf`, which is uninstalled, untimed,
  before each run.
- **The readers** are Google Benchmark (`bench/readers_bench.cc`, built by the `envdoctor_bench`
  target), median of 5 repetitions, page cache warm; a file that is absent is not measured.
- Not here: the test suite's time (README; `make test` prints each area's), and the real packages'
  verdicts against their real imports ([differential.md](differential.md)). Earlier measurements,
  with the profiles that explain them, are in this file's history (`git log -p docs/benchmarks.md`).
"""


def wrap(text, bullet=False):
    return textwrap.fill(text, 105, initial_indent="- " if bullet else "", subsequent_indent="  " if bullet else "",
                         break_on_hyphens=False, break_long_words=False)


INTRO = [
    "How long envdoctor's commands take beside the tools users compare them with (`pip check`, `uv pip check`, "
    "env-doctor's `check`, `import torch`, glibc's `ldd`, libtree) and beside the floor of any reader that maps "
    "its files, on real "
    "environments of the machine. Each benchmark is one line of `COMPARISONS` in `bench/table.py`, which runs "
    "them and writes this file; the ratio is envdoctor's figure over the peer's, and where an issue set a goal "
    "the row says whether it is met.",
    "To measure again: `make build` and `cmake --build build --target envdoctor_bench` (the readers), then "
    "`python3 bench/table.py --cold` as root; `make bench` runs it without `--cold`. `--only REGEX` runs the "
    "benchmarks whose key matches (`--list` lists them) and keeps the others' figures, dates and machines "
    "(bench/results.json).",
]


def render(results, cold_asked):
    facts = results.get("_facts", {})
    machines = []
    for e in results.values():
        m = e.get("machine")
        if m and m not in machines:
            machines.append(m)
    out = ["# Benchmarks", "",
           "<!-- Written by bench/table.py from bench/results.json: run it rather than edit. -->", ""]
    for paragraph in INTRO:
        out += [wrap(paragraph), ""]
    out += ["The machine%s:" % ("s" if len(machines) > 1 else ""), ""]
    for m in machines:
        out.append(wrap("%s, %d cores (`nproc`), %d GiB, %s, kernel %s, %s." % (
            m["cpu"], m["nproc"], m["memory_gib"], m["os"], m["kernel"], m["libc"]), bullet=True))
    out += ["", "The names in the commands:", ""]
    for shown, name, text in NAMES:
        fact = facts.get(name)
        text += "; on %s: %s" % (fact["date"], fact["text"]) if fact else ""
        out.append(wrap("`%s`: %s." % (shown, text), bullet=True))
    out += ["", wrap("The goals set on the benchmarks below (issue 52's: a warm, indexed `check` of the torch venv "
                     "no slower than `uv pip check` and under 100 ms, a cold `check` at most half of `pip check`, "
                     "`ldd -r` within twice the floor), each with its benchmark's last figure:"), "",
            "| What | Goal | Benchmark | Figure, date | Verdict |", "|:---|:---|:---|:---|:---|"]
    for c in COMPARISONS:
        for r in goal_rows(c, results.get(c.key)):
            out.append("| " + " | ".join(r) + " |")
    out += ["", "| What | Command | Figure | Peer | Peer's figure | Ratio | Runs | Date, commit | Machine |",
            "|:---|:---|---:|:---|---:|:---|---:|:---|:---|"]
    for c in COMPARISONS:
        for r in rows(c, results.get(c.key), cold_asked):
            out.append("| " + " | ".join(r) + " |")
    return "\n".join(out) + "\n\n" + NOTES


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--envdoctor", default=os.path.join(ROOT, "build", "envdoctor"))
    p.add_argument("--runs", type=int, default=10, help="runs of each side (a benchmark may set fewer)")
    p.add_argument("--only", default="", help="run only the benchmarks whose key matches this regex")
    p.add_argument("--cold", action="store_true", help="run the cold benchmarks too (root: drops the page cache)")
    p.add_argument("--torch-venv", default=os.environ.get("ENVDOCTOR_BENCH_TORCH_VENV", ""))
    p.add_argument("--pyenv-python", default="~/.pyenv/versions/3.11.7/bin/python3")
    p.add_argument("--commit", default="", help="the commit ENVDOCTOR was built from (default: the tree's)")
    p.add_argument("--baseline", default="", help="another envdoctor binary to time against (the baseline rows)")
    p.add_argument("--baseline-commit", default="", help="the commit the baseline was built from")
    p.add_argument("--list", action="store_true", help="list the benchmarks' keys and what they measure")
    args = p.parse_args()
    if args.list:
        for c in COMPARISONS:
            print("%-20s %s%s" % (c.key, c.what, " (--cold)" if c.cold else ""))
        return
    results = json.load(open(RESULTS)) if os.path.exists(RESULTS) else {}
    with tempfile.TemporaryDirectory(prefix="envdoctor-bench-") as work:
        ctx = Context(args, work, results)
        ctx.commit = args.commit or commit()  # the tree's, as the binaries are copied (below)
        for binary in ("envdoctor", "readers"):
            try:
                ctx.get(binary)
            except NotAvailable:
                pass
        for c in COMPARISONS:
            if not re.search(args.only, c.key) or (c.cold and not args.cold) or (
                    "baseline" in names_in(c) and not args.baseline):
                continue
            print("bench: %s ..." % c.key, file=sys.stderr, flush=True)
            results[c.key] = measure(ctx, c, args.runs)
            note_facts(ctx, c, results.setdefault("_facts", {}))
            print("bench: %s: %s" % (c.key, results[c.key].get("not_measured") or
                                     ", ".join(figure(s["value"], s["unit"]) if "value" in s else "not measured"
                                               for s in results[c.key]["sides"])),
                  file=sys.stderr, flush=True)
            with open(RESULTS, "w") as f:
                json.dump(results, f, indent=1, sort_keys=True)
                f.write("\n")
    with open(DOC, "w") as f:
        f.write(render(results, args.cold))


if __name__ == "__main__":
    main()
