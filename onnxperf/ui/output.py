"""Writing results without destroying anything.

- A regular file (new or existing) is written atomically: a temporary file in the target's folder,
  then a rename, so a failed run never leaves a half-written output file and the old file stays as
  it was (its permissions kept). A write that fails (disk full, permission denied) is an
  :class:`~onnxperf.base.errors.OutputError` naming the file.
- A symlink is written *through*: the file it points to is replaced, the link stays a link.
- A character device or a pipe (``/dev/null``, ``/dev/stdout``, ``/dev/full``, a FIFO, ``>(cmd)``)
  is streamed to, never replaced, and its write errors (``ENOSPC`` from ``/dev/full``) are reported;
  so are the names of a process's open files (``/proc/...``, ``/dev/fd/N``, ``/dev/stdout``). No new
  file is created in ``/dev`` itself (a tmpfs below it, ``/dev/shm``, is an ordinary folder). Any
  other kind of file (a block device, a socket) is refused.
- Every file the run has read (the models, their external data, a spec or budget file: see
  :func:`note_input`) is refused as an output, so ``-o model.onnx`` can never overwrite the model.
- Where an output would go (:func:`destination`): two outputs of one run that reach the same file or
  stream (``-`` and ``/dev/stdout``, a hard link, the file standard output is redirected to) are
  told apart from two that do not.
- A signal while a file is written (:func:`stop_writes_on_signals`, which the command line turns on):
  SIGTERM or SIGHUP removes the temporary file and raises :class:`Stopped`, as Ctrl-C's
  ``KeyboardInterrupt`` does; the old file stays as it was.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from onnxperf.base.errors import OptionError, OutputError
from onnxperf.ui.colour import highlight, wanted
from onnxperf.ui.numbers import binary_bytes
from onnxperf.ui.progress import say

#: (device, inode) of every file this run read: an output may never be one of them.
_INPUTS: dict[tuple[int, int], str] = {}

#: say "wrote FILE (size)" on stderr after each regular file written (the command line turns it on)
_ANNOUNCE = False
#: colour text written to a terminal: "auto", "always" or "never" (the command line's --color)
_COLOUR = "never"


def announce_writes(on: bool, colour: str = "never") -> None:
    """The command line's settings for this run: ``wrote FILE (size)`` lines on stderr, and colour
    (``auto``: on a terminal, unless ``NO_COLOR``; see :mod:`onnxperf.ui.colour`) for ``text`` output
    written to the terminal with ``write_output(..., text_format=True)``."""
    global _ANNOUNCE, _COLOUR
    _ANNOUNCE, _COLOUR = on, colour

#: a signal that stops a write raises :class:`Stopped` there (the command line turns it on; a library
#: caller keeps the process's own handling)
_STOP_ON_SIGNALS = False
#: the signals that end a process by default and are turned into :class:`Stopped` while a file is written
_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Stopped(BaseException):
    """A signal (SIGTERM, SIGHUP) arrived while a file was written: the temporary file is removed
    (the old file, if any, stays as it was) and the run stops. A ``BaseException``, as
    ``KeyboardInterrupt`` is, so no ``except Exception`` swallows it; ``signum`` names the signal
    (a command line exits with 128 + signum) and ``path`` the output that was being written."""

    def __init__(self, signum: int, path: str = "") -> None:
        super().__init__(signum, path)
        self.signum, self.path = signum, path

    @property
    def name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


def stop_writes_on_signals(on: bool) -> None:
    """The command line's setting: while a regular file is written, SIGTERM and SIGHUP (where they
    would end the process: their default action) remove the temporary file and raise
    :class:`Stopped`; Ctrl-C (SIGINT, where it raises ``KeyboardInterrupt``) is held the same way
    while a temporary file is made. Only then: the rest of a run keeps the default, so a signal still
    ends a run at once even inside a long C call (Python runs a handler only between bytecodes)."""
    global _STOP_ON_SIGNALS
    _STOP_ON_SIGNALS = on


def _raise_for(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Stopped(signum)


class _SignalGuard:
    """The stop signals while one file is written: each raises (:func:`_raise_for`), except inside
    :meth:`held`, which delivers a signal that arrived in it when it ends. Installed only in the
    main thread (where Python runs signal handlers), only over the default handling, and only when
    :func:`stop_writes_on_signals` is on; otherwise :meth:`held` changes nothing."""

    def __init__(self) -> None:
        self.installed: dict[int, object] = {}
        self.holding = False
        self.arrived: list[int] = []

    def __enter__(self) -> _SignalGuard:
        if not _STOP_ON_SIGNALS or threading.current_thread() is not threading.main_thread():
            return self
        wanted = [(sig, signal.SIG_DFL) for sig in _STOP_SIGNALS] + [(signal.SIGINT, signal.default_int_handler)]
        for sig, default in wanted:
            try:
                if signal.getsignal(sig) is default:  # ignored (nohup) or someone else's handler: left alone
                    self.installed[sig] = signal.signal(sig, self._on_signal)
            except (OSError, ValueError):
                pass
        return self

    def __exit__(self, *exc) -> None:
        for sig, previous in self.installed.items():
            signal.signal(sig, previous)

    def _on_signal(self, signum: int, frame) -> None:
        if self.holding:
            self.arrived.append(signum)
            return
        _raise_for(signum)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Signals wait until the block ends: a temporary file is made and its name kept (or removed)
        in one step, so a signal never leaves one that nothing will remove."""
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
            arrived, self.arrived = self.arrived, []
            if arrived:
                _raise_for(arrived[0])


def destination(path: str | None) -> tuple | None:
    """Where an output named ``path`` goes, as a key that two outputs share only when they would
    write to the same file or stream: standard output for None or ``-``, and for every other name of
    the file standard output is (``/dev/stdout``, ``/proc/self/fd/1``, the file it is redirected
    to); else the file (its device and inode: a link or a hard link is the same file) or, for a
    file not made yet, its real path. None for the null device: what goes there is lost either way."""
    try:
        st = os.fstat(sys.stdout.fileno()) if path is None or path == "-" else os.stat(path)
    except (AttributeError, OSError, ValueError):  # no stdout file (a test's capture); a file not made yet
        if path is None or path == "-":
            return ("stdout",)
        return ("path", os.path.realpath(path))
    try:
        null = os.stat(os.devnull)
        if (st.st_dev, st.st_ino) == (null.st_dev, null.st_ino):
            return None
    except OSError:
        pass
    return ("file", st.st_dev, st.st_ino)


#: names that stand for a process's open files: streamed to, never renamed over (when one points
#: at a regular file, writing through it truncates that file, as a shell redirection does)
_STREAM_ROOTS = ("/proc/", "/dev/fd/", "/dev/stdout", "/dev/stderr")


def note_input(path: str | os.PathLike) -> None:
    """Record ``path`` as read by this run (a missing file is ignored): :func:`write_output` refuses
    to write over it, whatever name (a link, a hard link, a relative path) the output gives it."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    if stat.S_ISREG(st.st_mode):
        _INPUTS[(st.st_dev, st.st_ino)] = str(path)


def forget_inputs() -> None:
    """Start a new run: no file has been read yet (the CLI calls this once per command)."""
    _INPUTS.clear()


def check_output(path: str | None, option: str = "-o") -> None:
    """Refuse ``path`` now if it names a file this run reads or a kind of file that is never written:
    the same checks :func:`write_output` makes, early, so a long analysis is not wasted."""
    if path is None or path == "-":
        return
    _kind(path, option)


def write_output(text: str | Iterable[str], path: str | None, option: str = "-o", text_format: bool = False) -> None:
    """Write ``text`` to ``path`` (see the module docstring), or to stdout when ``path`` is None or
    ``-``. ``text`` may come in pieces (an iterable of strings, made while they are written): a
    file is still replaced only once every piece is written, so an error while making one leaves
    no half-written file. ``text_format``: the text is for people (the ``text`` format): coloured
    on a terminal when the run allows colour (:func:`announce_writes`); a file never is."""
    if path is None or path == "-":
        if text_format and _COLOUR != "never":

            if wanted(sys.stdout, _COLOUR):
                text = highlight(text if isinstance(text, str) else "".join(text))
        try:
            _write_all(sys.stdout, text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise  # a reader that stopped early (| head): the CLI ends quietly
        except OSError as exc:  # stdout redirected to a full disk or a device that refuses
            raise OutputError(f"standard output: cannot write: {_reason(exc)}") from exc
        return
    kind, target = _kind(path, option)
    if kind == "stream":
        _stream(text, path, option)
    else:
        _atomic(text, target, path, option)
        if _ANNOUNCE:
            _say_wrote(path, target)


def _say_wrote(path: str, target: Path) -> None:
    """``onnxperf: wrote report.html (310 KiB)`` on stderr: where the output went, and how big."""

    try:
        size = binary_bytes(os.stat(target).st_size)
    except OSError:
        return

    try:
        say(f"onnxperf: wrote {path} ({size})")  # clears a progress bar's line first
    except (OSError, ValueError):
        pass


def _kind(path: str, option: str) -> tuple[str, Path]:
    """``("stream", path)`` or ``("file", the regular file to replace)``; typed errors otherwise."""
    try:
        st = os.stat(path)  # follows symlinks: the file a link points to
    except FileNotFoundError:
        st = None
    except (OSError, ValueError) as exc:  # a loop of links, a name too long, a NUL byte
        raise OutputError(f"{option} {path}: cannot write: {_reason(exc)}") from None
    if st is not None:
        hit = _INPUTS.get((st.st_dev, st.st_ino))
        if hit is not None:
            raise OptionError(f"{option} {path}: is an input of this run ({hit}); refusing to write over it")
        if stat.S_ISDIR(st.st_mode):
            raise OptionError(f"{option} {path}: is a directory")
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            return "stream", Path(path)
        if not stat.S_ISREG(st.st_mode):
            raise OptionError(f"{option} {path}: is not a regular file, a character device or a pipe")
    absolute = os.path.abspath(path)
    if absolute.startswith(_STREAM_ROOTS):
        if st is None:
            raise OptionError(f"{option} {path}: no such file; refusing to create files under /proc or /dev/fd")
        return "stream", Path(path)
    if st is None and os.path.dirname(absolute) == "/dev":
        raise OptionError(f"{option} {path}: no such device; refusing to create files in /dev")
    target = Path(os.path.realpath(path))  # through every link, also a dangling one
    folder = target.parent
    if not folder.is_dir():
        shown = folder if os.path.islink(path) else (Path(path).parent if str(Path(path).parent) else Path("."))
        raise OptionError(f"{option} {path}: folder {str(shown)!r} does not exist")
    return "file", target


def _stream(text: str | Iterable[str], path: str, option: str) -> None:
    """Write into a device or pipe in place; errors at write, flush or close are reported."""
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            _write_all(fh, text)
            fh.flush()
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write: {_reason(exc)}") from exc


def _atomic(text: str | Iterable[str], target: Path, path: str, option: str) -> None:
    """Replace the regular file ``target`` (or create it) by a rename from a sibling temporary file."""
    try:
        old_mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        old_mode = None
    with _SignalGuard() as guard:
        tmp = None
        try:
            with guard.held():
                fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                _write_all(fh, text)
            if old_mode is None:  # mkstemp makes a private (0600) file: give it what a plain open() would
                umask = os.umask(0)
                os.umask(umask)
                old_mode = 0o666 & ~umask
            os.chmod(tmp, old_mode)
            os.replace(tmp, target)
        except BaseException as exc:
            if isinstance(exc, Stopped):
                exc.path = exc.path or path
            if tmp is not None:
                with guard.held():
                    try:
                        os.unlink(tmp)
                    except OSError:
                        pass
            if isinstance(exc, OSError):  # a name too long, a folder we may not write in, a full disk
                raise OutputError(f"{option} {path}: cannot write: {_reason(exc)}") from exc
            raise


def _write_all(fh, text: str | Iterable[str]) -> None:
    if isinstance(text, str):
        fh.write(text)
    else:
        for piece in text:
            fh.write(piece)


def _reason(exc: BaseException) -> str:
    """``No space left on device``: the system's words, without the errno and path ``str(exc)`` adds."""
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
