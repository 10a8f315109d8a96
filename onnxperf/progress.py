"""A progress bar for long runs on a terminal: the stages of a command, with the elapsed time of the
running one refreshed by a background thread. Silent unless the stream is a terminal (never in
pipes, files, CI logs or tests), so it never mixes with a command's output.

    with Progress(["analyzing", "building the report", "rendering"]) as p:
        p.stage("analyzing"); ...
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class Progress:
    def __init__(self, stages: list[str], stream: TextIO | None = None, enabled: bool | None = None,
                 width: int = 20, interval_s: float = 0.1) -> None:
        self.stages = list(stages)
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"
        self.enabled = enabled
        self.width = width
        self.interval_s = interval_s
        self._i = -1
        self._name = ""
        self._t_stage = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._frame = 0

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="onnxperf-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.enabled:
            with self._lock:
                self.stream.write("\r\033[2K")
                self.stream.flush()

    def stage(self, name: str) -> None:
        """Start the stage ``name`` (one of ``stages``, or an extra one shown without advancing)."""
        with self._lock:
            if name in self.stages:
                self._i = self.stages.index(name)
            self._name = name
            self._t_stage = time.monotonic()
        self._draw()

    def line(self) -> str:
        n = len(self.stages) or 1
        done = max(self._i, 0)
        filled = round(self.width * done / n)
        bar = "█" * filled + "░" * (self.width - filled)
        frame = _FRAMES[self._frame % len(_FRAMES)]
        el = time.monotonic() - self._t_stage
        return f"{frame} [{bar}] {self._i + 1}/{n} {self._name} {el:.1f}s"

    def _draw(self) -> None:
        if not self.enabled:
            return
        with self._lock:
            self.stream.write("\r\033[2K" + self.line())
            self.stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._frame += 1
            if self._name:
                self._draw()
