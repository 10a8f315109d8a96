"""Every ``onnxperf`` command line shown in README.md and docs/*.md runs, and prints what the page
shows where it shows an output (issue 19, point 6).

What counts as a command line:

- in a fenced block, a line that starts with ``onnxperf `` or ``$ onnxperf `` (after ``pip install
  ... &&``); with ``$``, the lines under it up to the next ``$`` line are the output it shows;
- a fenced block after ``<!-- output: NAME (regenerate: COMMAND) -->``: the output of COMMAND;
- inline code that starts with ``onnxperf ``.

A line with placeholders (``MODEL``, ``SPEC``, ``[--opt ...]``, ``A|B``) is a synopsis: every flag it
names must be an option of that command (the page may not show a flag that does not exist). Any
other line is run, in a scratch folder holding ``models/`` (the project's), with these stand-ins,
each said here because the line shown would take minutes or needs weights the project does not ship:
``hw probe``/``hw calibrate`` get ``--short``; ``validate`` and ``--validate`` get ``--runs 2 --warmup 1``
and ``--random-weights``; ``decoder.onnx`` is the GPT-2 decode step of the corpus; ``models/*.onnx`` is
expanded; a ``>> FILE`` redirection is dropped. A measured output (``validate``, ``hw probe``,
``hw calibrate``, ``--validate``) is not compared; every other shown output is, line by line, where a
line ``...`` stands for any lines and a line ending in `` ...`` for any rest of that line.

Regenerate the shown outputs after a deliberate change: ``python tests/test_docs_commands.py --update``.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: slow (a browser, onnxruntime, every doc page or every ONNX node case): left out by -m "not slow"
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DECODER = "models/corpus/gpt2_decode_legacy.onnx"
#: words that make a line a synopsis, not a command to run
PLACEHOLDERS = re.compile(r"\b(MODEL|MODELS|SPEC|FILE|NAME|ID|SHELL|DECODER|SIZE|PROVIDER|BASE|LEVEL|N|S)\b|"
                          r"\[|\]|\.\.\.|\||\bA\.onnx|\bB\.onnx|\bC\.onnx|spec\.toml")
MEASURING = ("validate", "probe", "calibrate", "--validate")


@dataclass
class Shown:
    page: str
    line: int
    command: str
    output: list[str] | None = None
    #: where the output block lies in the page (first and last line, 0-based), for --update
    span: tuple[int, int] | None = None
    synopsis: bool = False
    extra: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _strip(cmd: str) -> str:
    cmd = cmd.strip()
    if cmd.startswith("$ "):
        cmd = cmd[2:]
    if "&&" in cmd and "onnxperf " in cmd.split("&&")[-1]:
        cmd = cmd.split("&&")[-1].strip()
    return cmd.split("  #")[0].split(" # ")[0].strip()


def shown() -> list[Shown]:
    out: list[Shown] = []
    for page in PAGES:
        rel = str(page.relative_to(ROOT))
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        pending: str | None = None
        while i < len(lines):
            line = lines[i]
            m = re.match(r"<!-- output: .*\(regenerate: (onnxperf .+)\) -->", line.strip())
            if m:
                pending = m.group(1)
            if line.startswith("```"):
                j = i + 1
                while j < len(lines) and not lines[j].startswith("```"):
                    j += 1
                block = lines[i + 1:j]
                if pending:
                    out.append(Shown(rel, i + 1, pending, block, (i + 1, j)))
                    pending = None
                else:
                    _block(rel, i + 1, block, out)
                i = j + 1
                continue
            for m in re.finditer(r"`(onnxperf [^`]+)`", line):
                out.append(Shown(rel, i + 1, m.group(1).replace("\\|", "|"), synopsis=True))
            i += 1
    for s in out:
        s.command = _strip(s.command)
        s.synopsis = not runnable(s.command)
    return out


def runnable(cmd: str) -> bool:
    """A whole command line to run: no placeholder, and a model to run on (or an ``hw`` action or
    ``completion``, which need none). ``onnxperf summary --llm`` in prose names an option, no run."""
    if PLACEHOLDERS.search(cmd):
        return False
    words = cmd.split()
    if len(words) >= 3 and (words[1] == "hw" and words[2] in ("list", "show", "probe", "calibrate")
                            or words[1] == "completion"):
        return True
    return any(w.endswith(".onnx") for w in words[2:])


def _block(page: str, start: int, block: list[str], out: list[Shown]) -> None:
    k = 0
    while k < len(block):
        text = block[k]
        dollar = text.startswith("$ onnxperf ")
        if dollar or _strip(text).startswith("onnxperf ") and not text.startswith(" "):
            cmd = text
            while cmd.rstrip().endswith("\\") and k + 1 < len(block):
                k += 1
                cmd = cmd.rstrip()[:-1] + " " + block[k].strip()
            # a synopsis goes on over indented lines of options
            while not dollar and k + 1 < len(block) and block[k + 1].startswith(" ") and "[" in block[k + 1]:
                k += 1
                cmd += " " + block[k].strip()
            first = k + 1
            if dollar:
                end = first
                while end < len(block) and not block[end].startswith("$ "):
                    end += 1
                out.append(Shown(page, start + k + 1, cmd, block[first:end], (start + first, start + end - 1)))
                k = end
                continue
            out.append(Shown(page, start + k + 1, cmd))
        k += 1


# ------------------------------------------------------------------------------------------ synopses

def _parser_of(words: list[str]):
    from onnxperf.cli import build_parser

    parser = build_parser()
    path = []
    for w in words[1:]:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None or w not in sub.choices:
            break
        parser = sub.choices[w]
        path.append(w)
    return parser, path


def _flags(cmd: str) -> list[str]:
    return re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-z])\b", cmd)


def _words(cmd: str) -> list[str]:
    return re.findall(r"[^\s\[\]|]+", cmd)


SYNOPSES = [s for s in shown() if s.synopsis]
RUNS = [s for s in shown() if not s.synopsis]


def test_the_pages_show_command_lines():
    assert len(RUNS) >= 15 and len(SYNOPSES) >= 15


@pytest.mark.parametrize("s", SYNOPSES, ids=[s.id for s in SYNOPSES])
def test_every_flag_a_synopsis_shows_exists(s: Shown):
    parser, path = _parser_of(_words(s.command))
    options = {o for a in parser._actions for o in a.option_strings}
    wrong = [f for f in _flags(s.command) if f not in options]
    assert not wrong, f"{s.id}: `{s.command}` shows {wrong}, not options of onnxperf {' '.join(path)}"


#: the page whose usage block shows each command's whole synopsis
USAGE = {("summary",): "docs/summary.md", ("report",): "docs/report.md", ("sweep",): "docs/sweep.md",
         ("validate",): "docs/validate.md", ("compare",): "docs/compare.md", ("check",): "docs/check.md",
         ("hw", "list"): "docs/hw.md", ("hw", "show"): "docs/hw.md", ("hw", "probe"): "docs/hw.md",
         ("hw", "calibrate"): "docs/hw.md", ("completion",): "docs/cli.md"}


@pytest.mark.parametrize("path", list(USAGE), ids=[" ".join(p) for p in USAGE])
def test_each_command_page_shows_every_option_of_the_command(path):
    """The usage block of a command's page is its whole synopsis: every option (by any of its
    names) is in it, so a flag added to the parser is added to the page."""
    prefix = "onnxperf " + " ".join(path) + " "
    lines = [s for s in SYNOPSES if s.page == USAGE[path] and (s.command + " ").startswith(prefix)
             and ("[" in s.command or path == ("completion",))]
    assert lines, f"{USAGE[path]} shows no synopsis of `{prefix.strip()}`"
    shown_flags = {f for s in lines for f in _flags(s.command)}
    parser, _ = _parser_of(prefix.split())
    missing = [a.option_strings[-1] for a in parser._actions
               if a.option_strings and "-h" not in a.option_strings and not set(a.option_strings) & shown_flags]
    assert not missing, f"{USAGE[path]}: the synopsis of `{prefix.strip()}` lacks {missing}"


# ------------------------------------------------------------------------------------------ runs

def _argv(cmd: str, cwd: Path) -> list[str]:
    cmd = re.sub(r"\s*>>?\s*\S+$", "", cmd)  # a redirection into a CI summary
    argv = shlex.split(cmd)[1:]
    argv = [DECODER if a == "decoder.onnx" else a for a in argv]
    expanded: list[str] = []
    for a in argv:
        expanded += sorted(glob.glob(a, root_dir=cwd)) if "*" in a else [a]
    argv = expanded
    if argv[:2] in (["hw", "probe"], ["hw", "calibrate"]) and "--short" not in argv:
        argv.append("--short")
    if argv[0] == "validate" or "--validate" in argv:
        argv += ["--runs", "2", "--warmup", "1"] + ([] if "--random-weights" in argv else ["--random-weights"])
    return argv


def _measures(cmd: str) -> bool:
    words = cmd.split()
    return any(w in MEASURING for w in words[1:3]) or "--validate" in words


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A folder with the project's models, and the local.toml the pages make with `hw calibrate`."""
    d = tmp_path_factory.mktemp("docs")
    (d / "models").symlink_to(ROOT / "models")
    assert run(Shown("fixture", 0, "onnxperf hw calibrate -o local.toml"), d)[0] == 0 and (d / "local.toml").exists()
    return d


_RAN: dict[tuple[str, tuple[str, ...]], tuple[int, str]] = {}


def run(s: Shown, cwd: Path) -> tuple[int, str]:
    """Run a shown command line in ``cwd`` as the command line would: its exit code and standard
    output (a line shown on several pages runs once)."""
    argv = _argv(s.command, cwd)
    if _measures(s.command) and "-o" in argv:  # a measurement is run once: its -o only names the file
        i = argv.index("-o")
        argv = argv[:i] + argv[i + 2:]
    key = (str(cwd), tuple(sorted(argv)))
    if key not in _RAN:
        _RAN[key] = _run(s, cwd)
    return _RAN[key]


def _run(s: Shown, cwd: Path) -> tuple[int, str]:
    import contextlib
    import io

    from onnxperf import cli

    out = io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = cli.main(_argv(s.command, cwd))
    finally:
        os.chdir(here)
    return rc, out.getvalue()


def matches(shown_lines: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is what the page shows: ``...`` alone stands for any lines, a line ending
    in `` ...`` for any rest of that line; trailing spaces do not count."""
    want = [w.rstrip() for w in shown_lines]
    got = [a.rstrip() for a in actual]
    while want and not want[-1]:
        want.pop()
    while got and not got[-1]:
        got.pop()

    def at(i: int, j: int) -> bool:
        if i == len(want):
            return j == len(got)
        w = want[i]
        if w.strip() in ("...", "…"):
            return any(at(i + 1, k) for k in range(j, len(got) + 1))
        if j == len(got):
            return False
        if w.endswith(" ...") or w.endswith(" …"):
            ok = got[j].startswith(w.rsplit(" ", 1)[0])
        else:
            ok = got[j] == w
        return ok and at(i + 1, j + 1)

    return at(0, 0)


@pytest.mark.parametrize("s", RUNS, ids=[s.id for s in RUNS])
def test_every_command_line_shown_runs_and_prints_what_the_page_shows(s: Shown, scratch):
    rc, out = run(s, scratch)
    allowed = (0, 1) if s.command.split()[1] == "check" else (0,)  # check: 1 is a limit broken
    assert rc in allowed, f"{s.id}: `{s.command}` exited {rc}"
    if s.output is not None and s.output and not _measures(s.command):
        assert matches(s.output, out.splitlines()), (
            f"{s.id}: `{s.command}` prints something else than the page shows; if the change is meant, "
            f"run `python tests/test_docs_commands.py --update`\n--- shown\n" + "\n".join(s.output)
            + "\n--- printed\n" + out)


def test_matching_with_elisions():
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and matches(["a", "...", "b"], ["a", "b"])
    assert matches(["x 1 ..."], ["x 1 2 3"]) and not matches(["x 1 ..."], ["y 1 2"])
    assert not matches(["a", "b"], ["a", "c"]) and not matches(["a"], ["a", "b"])


def update() -> int:
    """Rewrite every compared output the pages show with what the command prints now (elided
    blocks keep their shape: only blocks without ``...`` are rewritten whole)."""
    import tempfile

    from onnxperf import cli

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "models").symlink_to(ROOT / "models")
        here = os.getcwd()
        os.chdir(d)
        try:
            cli.main(["hw", "calibrate", "--short", "-o", "local.toml", "--no-progress"])
        finally:
            os.chdir(here)
        by_page: dict[str, list[Shown]] = {}
        for s in RUNS:
            if s.output and s.span and not _measures(s.command):
                by_page.setdefault(s.page, []).append(s)
        for page, items in by_page.items():
            path = ROOT / page
            lines = path.read_text(encoding="utf-8").splitlines()
            for s in sorted(items, key=lambda x: -x.span[0]):
                rc, out = run(s, d)
                if matches(s.output, out.splitlines()):
                    continue
                if any(w.strip() in ("...", "…") or w.endswith(" ...") for w in s.output):
                    print(f"{s.id}: elided output differs: edit it by hand", file=sys.stderr)
                    continue
                first, last = s.span
                new = out.rstrip("\n").splitlines()
                lines[first:last + 1] = new
                print(f"{s.id}: updated ({len(new)} lines)", file=sys.stderr)
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    if "--update" in sys.argv:
        sys.path.insert(0, str(ROOT))
        raise SystemExit(update())
    for s in shown():
        print(("SYN " if s.synopsis else "RUN ") + s.id, s.command, "(output)" if s.output else "")
