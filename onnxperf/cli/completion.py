"""``onnxperf completion bash|zsh|fish``: a shell completion script, written from the parser itself
(every command, action, option and choice the installed onnxperf has; nothing kept by hand).

    onnxperf completion bash > ~/.local/share/bash-completion/completions/onnxperf
    onnxperf completion zsh > "${fpath[1]}/_onnxperf"
    onnxperf completion fish > ~/.config/fish/completions/onnxperf.fish

Options that take a value complete it: a choice list (``--format``, ``--precision``), the preset
ids (``--hw``), or file names (models, ``-o FILE``, budgets, spec files).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

from onnxperf.ui.output import write_output
from onnxperf.hardware import list_presets
from onnxperf.cli import COMMANDS, build_parser

SHELLS = ("bash", "zsh", "fish")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("completion", help=COMMANDS["completion"],
                       description="Print a completion script for SHELL, made from this onnxperf's own options. "
                                   "bash: `onnxperf completion bash > ~/.local/share/bash-completion/completions/"
                                   "onnxperf`; zsh: `onnxperf completion zsh > \"${fpath[1]}/_onnxperf\"`; fish: "
                                   "`onnxperf completion fish > ~/.config/fish/completions/onnxperf.fish`.")
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in: bash, zsh or fish")
    p.add_argument("-o", "--output", metavar="FILE", default=None,
                   help="write the script to FILE (atomically) instead of standard output")
    p.set_defaults(run=run)


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]
    help: str
    #: "none" (a switch), "choice", "hw", "file" or "value"
    kind: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]  # ("hw", "probe")
    help: str
    options: tuple[Option, ...]
    subcommands: tuple[str, ...]
    #: the positionals take files (models, spec files); a choice positional lists its choices
    positional_choices: tuple[str, ...] = ()


#: what a completion word may hold: it goes unquoted into bash's compgen -W, zsh's (...) and fish's -a
_WORD = re.compile(r"[A-Za-z0-9_.+:@%=,/-]+")


def _words(values) -> tuple[str, ...]:
    """The choices (or preset ids) that are plain words; any other could run in the shell."""
    return tuple(w for w in map(str, values) if _WORD.fullmatch(w))


def _kind(action: argparse.Action) -> tuple[str, tuple[str, ...]]:
    if action.nargs == 0:
        return "none", ()
    if action.choices:
        return "choice", _words(action.choices)
    if action.dest == "hw":
        return "hw", ()
    metavar = str(action.metavar or "")
    if "FILE" in metavar or action.dest in ("output", "budget", "netron", "trace"):
        return "file", ()
    return "value", ()


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), help: str = "") -> list[Command]:
    """Every command and action of ``parser``, depth first, with its options."""
    options: list[Option] = []
    subs: dict[str, tuple[argparse.ArgumentParser, str]] = {}
    positional_choices: tuple[str, ...] = ()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sp in action.choices.items():
                subs[name] = (sp, helps.get(name, ""))
        elif action.option_strings:
            if action.help == argparse.SUPPRESS:
                continue
            kind, choices = _kind(action)
            options.append(Option(tuple(action.option_strings), " ".join((action.help or "").split()), kind, choices))
        elif action.choices:
            positional_choices = _words(action.choices)
    out = [Command(path, help, tuple(options), tuple(subs), positional_choices)]
    for name, (sp, h) in subs.items():
        out += commands(sp, path + (name,), h)
    return out


def _presets() -> tuple[str, ...]:
    return _words(list_presets())


def _short(text: str, n: int = 70) -> str:
    text = text.split("; ")[0].split(": ")[0] if len(text) > n else text
    return text if len(text) <= n else text[: n - 1] + "…"


# ------------------------------------------------------------------------------------------ bash

def bash(cmds: list[Command], presets: tuple[str, ...]) -> str:
    lines = ["# bash completion for onnxperf (made by `onnxperf completion bash`)",
             "_onnxperf() {",
             "    local cur prev",
             "    cur=\"${COMP_WORDS[COMP_CWORD]}\"; prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
             "    local path=\"\" w i",
             "    for ((i = 1; i < COMP_CWORD; i++)); do",
             "        w=\"${COMP_WORDS[i]}\"",
             "        case \"$w\" in -*) continue ;; esac",
             "        case \"$path:$w\" in"]
    for c in cmds:
        for s in c.subcommands:
            key = " ".join(c.path)
            new = " ".join(c.path + (s,))
            lines.append(f"            \"{key}:{s}\") path=\"{new}\" ;;")
    lines += ["        esac", "    done", "    case \"$path\" in"]
    for c in cmds:
        key = " ".join(c.path)
        flags = " ".join(f for o in c.options for f in o.flags)
        lines.append(f"        \"{key}\")")
        lines.append("            case \"$prev\" in")
        for o in c.options:
            if o.kind == "none":
                continue
            pat = "|".join(o.flags)
            if o.kind == "choice":
                lines.append(f"                {pat}) COMPREPLY=($(compgen -W \"{' '.join(o.choices)}\" -- \"$cur\")); return ;;")
            elif o.kind == "hw":
                lines.append(f"                {pat}) COMPREPLY=($(compgen -W \"{' '.join(presets)}\" -- \"$cur\") "
                             "$(compgen -f -- \"$cur\")); return ;;")
            elif o.kind == "file":
                lines.append(f"                {pat}) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;")
            else:
                lines.append(f"                {pat}) return ;;")
        lines.append("            esac")
        words = " ".join(c.subcommands) if c.subcommands else " ".join(c.positional_choices)
        lines.append("            if [[ \"$cur\" == -* ]]; then")
        lines.append(f"                COMPREPLY=($(compgen -W \"{flags}\" -- \"$cur\"))")
        if words:
            lines.append("            else")
            lines.append(f"                COMPREPLY=($(compgen -W \"{words}\" -- \"$cur\"))")
        elif c.path:
            lines.append("            else")
            lines.append("                COMPREPLY=($(compgen -f -- \"$cur\"))")
        lines.append("            fi ;;")
    lines += ["    esac", "}", "complete -o filenames -o bashdefault -F _onnxperf onnxperf", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ zsh

def _zq(text: str) -> str:
    """Text inside a zsh single-quoted _arguments spec: one line, backslashes first, then quotes,
    brackets and colons escaped."""
    text = " ".join(text.split())
    return (text.replace("\\", "\\\\").replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]")
            .replace(":", "\\:"))


def zsh(cmds: list[Command], presets: tuple[str, ...]) -> str:
    lines = ["#compdef onnxperf", "# zsh completion for onnxperf (made by `onnxperf completion zsh`)", ""]
    by_path = {c.path: c for c in cmds}

    def fname(path: tuple[str, ...]) -> str:
        return "_onnxperf" + "".join("_" + p.replace("-", "_") for p in path)

    for c in cmds:
        lines.append(f"{fname(c.path)}() {{")
        specs = []
        for o in c.options:
            names = "{" + ",".join(o.flags) + "}" if len(o.flags) > 1 else o.flags[0]
            excl = "(" + " ".join(o.flags) + ")" if len(o.flags) > 1 else ""
            h = _zq(_short(o.help))
            if o.kind == "none":
                action = ""
            elif o.kind == "choice":
                action = f":value:({' '.join(o.choices)})"
            elif o.kind == "hw":
                action = f":hardware:({' '.join(presets)})"
            elif o.kind == "file":
                action = ":file:_files"
            else:
                action = ":value: "
            specs.append(f"'{excl}'{names}'[{h}]{action}'" if excl else f"'{names}[{h}]{action}'")
        if c.subcommands:
            specs.append("'1: :->cmd'")
            specs.append("'*:: :->args'")
        elif c.positional_choices:
            specs.append(f"'1:value:({' '.join(c.positional_choices)})'")
        elif c.path:
            specs.append("'*:model:_files'")
        lines.append("    local state")
        lines.append("    _arguments -s \\")
        for sp in specs:
            lines.append(f"        {sp} \\")
        lines[-1] = lines[-1][:-2]
        if c.subcommands:
            lines.append("    case $state in")
            lines.append("        cmd)")
            lines.append("            local -a cmds; cmds=(")
            for s in c.subcommands:
                sub = by_path[c.path + (s,)]
                lines.append(f"                '{s}:{_zq(_short(sub.help))}'")
            lines.append("            )")
            lines.append("            _describe command cmds ;;")
            lines.append("        args)")
            lines.append("            case $words[1] in")
            for s in c.subcommands:
                lines.append(f"                {s}) {fname(c.path + (s,))} ;;")
            lines.append("            esac ;;")
            lines.append("    esac")
        lines.append("}")
        lines.append("")
    lines.append('_onnxperf "$@"')
    lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ fish

def _fq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(cmds: list[Command], presets: tuple[str, ...]) -> str:
    lines = ["# fish completion for onnxperf (made by `onnxperf completion fish`)",
             "complete -c onnxperf -f"]
    for c in cmds:
        if not c.path:
            cond = "__fish_use_subcommand"
        elif len(c.path) == 1:
            subs = " ".join(c.subcommands)
            cond = f"__fish_seen_subcommand_from {c.path[0]}" + (
                f"; and not __fish_seen_subcommand_from {subs}" if subs else "")
        else:
            cond = f"__fish_seen_subcommand_from {c.path[0]}; and __fish_seen_subcommand_from {c.path[-1]}"
        if c.path and not c.subcommands and not c.positional_choices:
            lines.append(f"complete -c onnxperf -n {_fq(cond)} -F")
        if c.positional_choices:
            lines.append(f"complete -c onnxperf -n {_fq(cond)} -a {_fq(' '.join(c.positional_choices))}")
        for o in c.options:
            parts = []
            for f in o.flags:
                parts.append(f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}")
            arg = ""
            if o.kind == "choice":
                arg = f" -x -a {_fq(' '.join(o.choices))}"
            elif o.kind == "hw":
                arg = f" -r -a {_fq(' '.join(presets))} -F"
            elif o.kind == "file":
                arg = " -r -F"
            elif o.kind == "value":
                arg = " -x"
            lines.append(f"complete -c onnxperf -n {_fq(cond)} {' '.join(parts)}{arg} -d {_fq(_short(o.help, 60))}")
        for s in c.subcommands:
            sub = next(x for x in cmds if x.path == c.path + (s,))
            lines.append(f"complete -c onnxperf -n {_fq(cond)} -a {s} -d {_fq(_short(sub.help, 60))}")
    return "\n".join(lines) + "\n"


def script(shell: str) -> str:
    cmds = commands(build_parser())
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](cmds, _presets())


def run(args: argparse.Namespace) -> int:
    write_output(script(args.shell), args.output)
    return 0
