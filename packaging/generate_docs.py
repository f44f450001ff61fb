#!/usr/bin/env python3
"""Writes envdoctor's man page and its bash and zsh completions from the binary's own --help.

The command line has one description, CLI11's in src/cli/main.cc; the man page and the
completions are read from it at build time, so a new subcommand or option appears in all three
without anyone remembering to copy it. The man page's prose (description, exit status,
environment) is README.md's, in its words.

Usage: generate_docs.py BINARY OUTDIR   (writes OUTDIR/envdoctor.1, envdoctor.bash, _envdoctor)
"""
import os
import re
import subprocess
import sys

# "  --python TEXT               the interpreter (...)": name, value placeholder, description.
OPTION = re.compile(r"^  (-\S+)((?: [A-Z]+(?: \.\.\.)?(?: REQUIRED)?)?)\s{2,}(.*)$")
POSITIONAL = re.compile(r"^  ([A-Z]+) [A-Z]+((?: \.\.\.)?)(?: REQUIRED)?\s{2,}(.*)$")
SUBCOMMAND = re.compile(r"^  ([a-z][a-z-]*)\s{2,}(.*)$")


def help_text(binary, *args):
    r = subprocess.run([binary] + list(args) + ["--help"], stdout=subprocess.PIPE,
                       universal_newlines=True, check=True)
    return r.stdout.splitlines()


def sections(lines):
    out, current = {}, None
    for line in lines:
        if line.endswith(":") and not line.startswith(" "):
            current = line[:-1]
            out[current] = []
        elif current and line.startswith("  "):
            out[current].append(line)
    return out


class Subcommand:
    def __init__(self, name, summary, lines):
        self.name, self.summary = name, summary
        # The word the completions see first ("uv" of "uv pip"), and the words after it.
        self.word, self.rest = name.split()[0], name.split()[1:]
        s = sections(lines)
        self.options = []  # (flag, takes a value, description)
        for line in s.get("Options", []):
            m = OPTION.match(line)
            if m and m.group(1) != "-h,--help":
                self.options.append((m.group(1), bool(m.group(2).strip()), m.group(3)))
        self.positionals = []  # (name, repeats, description)
        for line in s.get("Positionals", []):
            m = POSITIONAL.match(line)
            if m:
                self.positionals.append((m.group(1), bool(m.group(2)), m.group(3)))


def read_cli(binary, *above):
    """Every subcommand, a group's own (`uv pip`) named by its words."""
    top = sections(help_text(binary, *above))
    subs = []
    for line in top.get("Subcommands", []):
        m = SUBCOMMAND.match(line)
        if not m:
            continue
        words = list(above) + [m.group(1)]
        lines = help_text(binary, *words)
        if "Subcommands" in sections(lines):
            subs += read_cli(binary, *words)
        else:
            subs.append(Subcommand(" ".join(words), m.group(2), lines))
    return subs


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text.startswith((".", "'")) else text


def synopsis(sub):
    parts = ["[" + flag + (" " + flag.lstrip("-").upper().replace("-", "_") if value else "") + "]"
             for flag, value, _ in sub.options]
    parts += [name + ("..." if repeats else "") for name, repeats, _ in sub.positionals]
    return " ".join(parts)


def man_page(subs, version):
    out = [
        '.TH ENVDOCTOR 1 "" "envdoctor %s" "User Commands"' % version,
        ".SH NAME",
        "envdoctor \\- will every native library in this Python environment load?",
        ".SH SYNOPSIS",
    ]
    for sub in subs:
        out += [".B envdoctor " + sub.name, roff(synopsis(sub)), ".br"]
    out += [
        ".SH DESCRIPTION",
        roff("pip and uv check names and versions. They cannot tell that a wheel that installed "
             "successfully will fail on import. envdoctor reads the ELF files, the package records "
             "and the CUDA fatbinaries, models glibc's loader and Python's import order, and says, "
             "before anything runs, what will fail, in the loader's own words, with the package to "
             "blame and the command that fixes it. It never executes, dlopens or imports the code it "
             "examines (check runs the interpreter once to learn sys.path)."),
        ".SH COMMANDS",
    ]
    for sub in subs:
        summary = sub.summary[0].upper() + sub.summary[1:]
        out += [".SS " + sub.name, roff(summary if summary.endswith((".", "?")) else summary + ".")]
        for name, repeats, desc in sub.positionals:
            out += [".TP", ".I " + name + ("..." if repeats else ""), roff(desc)]
        for flag, value, desc in sub.options:
            out += [".TP", ".B " + roff(flag), roff(desc)]
    out += [
        ".SH ENVIRONMENT",
        roff("With no --python or --prefix, the environment examined is: the interpreter named by "
             "ENVDOCTOR_PYTHON (python -m envdoctor sets it to its own interpreter); the environment "
             "envdoctor is installed in (a venv's or conda environment's bin/envdoctor); then "
             "VIRTUAL_ENV, CONDA_PREFIX, and python3 on PATH. ENVDOCTOR_DATA_DIR overrides where the "
             "knowledge tables are read from (default: share/envdoctor beside the binary's bin/). "
             "NO_COLOR turns colour off."),
        ".SH EXIT STATUS",
        roff("0 no errors (warnings alone keep 0), 1 errors found, 2 the tool could not do its job. "
             "Results go to stdout, diagnostics to stderr."),
        ".SH SEE ALSO",
        ".BR ldd (1),",
        ".BR ld.so (8),",
        ".BR pip (1)",
        "",
    ]
    return "\n".join(out)


def bash_completion(subs):
    cases = []
    for sub in subs:
        flags = " ".join(sub.rest + [f for flag, _, _ in sub.options for f in flag.split(",")])
        valued = "|".join(f for flag, value, _ in sub.options if value for f in flag.split(","))
        files = "1" if sub.positionals and sub.positionals[0][0] in ("FILE", "WHEEL") else "0"
        cases.append("    %s) opts='%s'; valued='%s'; files=%s ;;" % (sub.word, flags, valued or "-", files))
    return """# bash completion for envdoctor (generated from its --help by packaging/generate_docs.py)
_envdoctor() {
  local cur prev sub i opts valued files
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in -*) ;; *) sub="${COMP_WORDS[i]}"; break ;; esac
  done
  if [[ -z "$sub" ]]; then
    COMPREPLY=($(compgen -W '%s --help --version' -- "$cur"))
    return
  fi
  case "$sub" in
%s
    *) return ;;
  esac
  if [[ "$valued" != - ]] && [[ "|$valued|" == *"|$prev|"* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return
  fi
  if [[ "$cur" == -* || "$files" == 0 ]]; then
    COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _envdoctor envdoctor
""" % (" ".join(s.word for s in subs), "\n".join(cases))


def zsh_escape(text):
    return text.replace("\\", "\\\\").replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]")


def zsh_completion(subs):
    out = ["#compdef envdoctor",
           "# zsh completion for envdoctor (generated from its --help by packaging/generate_docs.py)",
           "", "_envdoctor() {", "  local -a subcommands", "  subcommands=("]
    out += ["    '%s:%s'" % (s.word, zsh_escape(s.summary)) for s in subs]
    out += ["  )",
            "  if (( CURRENT == 2 )); then",
            "    _describe 'subcommand' subcommands",
            "    return",
            "  fi",
            "  local sub=${words[2]}",
            "  shift words; (( CURRENT-- ))",
            "  case $sub in"]
    for sub in subs:
        specs = []
        for flag, value, desc in sub.options:
            for f in flag.split(","):
                spec = "'*%s[%s]" % (f, zsh_escape(desc)) if value else "'%s[%s]" % (f, zsh_escape(desc))
                specs.append(spec + (":value:_files'" if value else "'"))
        for name, repeats, desc in sub.positionals:
            specs.append("'%s:%s:_files'" % ("*" if repeats else str(1 + len(sub.rest)), zsh_escape(desc)))
        specs = ["'1:subcommand:(%s)'" % " ".join(sub.rest)] + specs if sub.rest else specs
        out.append("    %s) _arguments %s ;;" % (sub.word, " ".join(specs)))
    out += ["  esac", "}", "", '_envdoctor "$@"', ""]
    return "\n".join(out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, outdir = sys.argv[1], sys.argv[2]
    version = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, universal_newlines=True,
                             check=True).stdout.split()[-1]
    subs = read_cli(binary)
    if not subs:
        sys.exit("generate_docs: no subcommands in %s --help" % binary)
    os.makedirs(outdir, exist_ok=True)
    for name, text in (("envdoctor.1", man_page(subs, version)),
                       ("envdoctor.bash", bash_completion(subs)),
                       ("_envdoctor", zsh_completion(subs))):
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
