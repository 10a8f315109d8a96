"""Progress of a long run, on standard error, never mixed with a command's output.

- On a terminal (``TERM`` not ``dumb``): one line redrawn in place by a background thread: the
  stage, its elapsed time and, where the stage counts its work (runs, models, rows), the time left.
- Elsewhere (a pipe, a file, a CI log): a plain line once a stage has run for ``first_line_s``
  (2 s), then every ``every_s`` (10 s) — minutes of silence read as a hang, and a quick run prints
  nothing at all.
- ``enabled=False`` (``--no-progress``) prints nothing.

    with Progress(["analyzing", "rendering"]) as p:
        p.stage("analyzing"); ...
        for i, x in enumerate(xs):
            p.advance(i, len(xs)); ...

Code far below a command reports its own counts with :func:`advance` (a no-op when no progress is
shown), so library functions take no progress argument.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

#: the progress shown now, if any (:func:`advance` reports to it)
_ACTIVE: Progress | None = None


def advance(done: int, total: int, what: str = "") -> None:
    """``done`` of ``total`` units of the running stage are finished (``what``: ``"runs"``,
    ``"models"``), for the progress shown now; nothing when none is."""
    p = _ACTIVE
    if p is not None:
        p.advance(done, total, what)


def say(text: str) -> None:
    """A line on standard error that does not tear the progress bar: the bar's line is cleared,
    ``text`` written, and the bar drawn again under it."""
    p = _ACTIVE
    if p is not None and p.enabled and p.terminal and p._drawn:
        with p._lock:
            p.stream.write("\r\033[2K" + text + "\n")
            p.stream.flush()
        p._draw()
        return
    if p is not None:
        with p._lock:  # one write, not interleaved with a log line of the progress thread
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
        return
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _fmt_s(s: float) -> str:
    if s < 60:
        return f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    return f"{m} min {sec:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


class Progress:
    def __init__(self, stages: list[str], stream: TextIO | None = None, enabled: bool | None = None,
                 width: int = 20, interval_s: float = 0.1, first_line_s: float = 2.0, every_s: float = 10.0,
                 terminal: bool | None = None, label: str = "onnxperf", threaded: bool = True) -> None:
        self.stages = list(stages)
        self.stream = stream if stream is not None else sys.stderr
        if terminal is None:
            terminal = bool(getattr(self.stream, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"
        self.terminal = terminal
        self.enabled = True if enabled is None else enabled
        self.width = width
        self.interval_s = interval_s
        self.first_line_s = first_line_s
        self.every_s = every_s
        self.label = label
        #: False: no background thread (a command that forks workers): drawn on each stage/advance
        self.threaded = threaded
        self._i = -1
        self._name = ""
        self._t_stage = time.monotonic()
        self._next_line = self._t_stage + first_line_s
        self._done = 0
        self._total = 0
        self._what = ""
        self._t_counted = self._t_base = self._t_stage
        self._base_done = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._frame = 0
        self._drawn = False
        self._outer: Progress | None = None

    def __enter__(self) -> Progress:
        global _ACTIVE
        self._outer, _ACTIVE = _ACTIVE, self
        if self.enabled and self.threaded:
            self._thread = threading.Thread(target=self._run, name="onnxperf-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        global _ACTIVE
        _ACTIVE = self._outer
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.enabled and self.terminal and self._drawn:
            with self._lock:
                self.stream.write("\r\033[2K")
                self.stream.flush()

    def stage(self, name: str) -> None:
        """Start the stage ``name`` (one of ``stages``, or an extra one shown without advancing)."""
        with self._lock:
            if name in self.stages:
                self._i = self.stages.index(name)
            self._name = name
            self._t_stage = self._t_counted = time.monotonic()
            self._next_line = self._t_stage + self.first_line_s
            self._done = self._total = self._base_done = 0
            self._what = ""
            self._t_base = self._t_stage
        self._draw()

    def advance(self, done: int, total: int, what: str = "") -> None:
        """``done`` of ``total`` units of this stage are finished: the time left follows from them."""
        with self._lock:
            now = time.monotonic()
            if what != self._what or done < self._done:  # another count in this stage: its own rate
                self._t_base, self._base_done = now, max(done, 0)
            if done != self._done:
                self._t_counted = now
            self._done, self._total, self._what = max(done, 0), max(total, 0), what
        if self.enabled and not self.threaded:
            self._tick()

    def left_s(self) -> float | None:
        """Seconds left in this stage, from the rate of its counted units so far (None: not counted yet)."""
        counted = self._done - self._base_done
        if not self._total or counted <= 0:
            return None
        spent = self._t_counted - self._t_base
        return max(spent / counted * (self._total - self._done), 0.0)

    def _count(self) -> str:
        if not self._total:
            return ""
        left = self.left_s()
        what = f" {self._what}" if self._what else ""
        return f" {self._done}/{self._total}{what}" + (f", ~{_fmt_s(left)} left" if left is not None else "")

    def line(self) -> str:
        """The terminal line: spinner, bar over the stages, stage, counts, elapsed."""
        n = len(self.stages) or 1
        done = max(self._i, 0)
        filled = round(self.width * done / n)
        bar = "█" * filled + "░" * (self.width - filled)
        frame = _FRAMES[self._frame % len(_FRAMES)]
        el = time.monotonic() - self._t_stage
        return f"{frame} [{bar}] {self._i + 1}/{n} {self._name}{self._count()} {el:.1f}s"

    def log_line(self) -> str:
        """The line for a log: ``onnxperf: [2/4] measuring 3/13 runs, ~20 s left (12 s so far)``."""
        n = len(self.stages) or 1
        el = time.monotonic() - self._t_stage
        return f"{self.label}: [{self._i + 1}/{n}] {self._name}{self._count()} ({_fmt_s(el)} so far)"

    def _draw(self) -> None:
        if not self.enabled or not self.terminal:
            return
        with self._lock:
            try:
                self.stream.write("\r\033[2K" + self.line())
                self.stream.flush()
            except (OSError, ValueError):  # a closed terminal: progress is not worth failing for
                return
            self._drawn = True

    def _log(self) -> None:
        now = time.monotonic()
        with self._lock:
            if not self._name or now < self._next_line:
                return
            self._next_line = now + self.every_s
            try:
                self.stream.write(self.log_line() + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # a closed or full log: progress is not worth failing for
                pass

    def _tick(self) -> None:
        self._frame += 1
        if self.terminal:
            if self._name:
                self._draw()
        else:
            self._log()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._tick()
