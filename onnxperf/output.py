"""Writing results: atomically (temporary file in the same folder, then rename), so a failed
run never leaves a half-written output file; a write that fails (disk full, permission denied)
is an :class:`~onnxperf.errors.OutputError` naming the file, the old file left as it was."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .errors import OptionError, OutputError


def write_output(text: str, path: str | None) -> None:
    """Write ``text`` to ``path`` atomically, or to stdout when ``path`` is None or ``-``."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        if not folder.is_dir():
            raise OptionError(f"-o {path}: folder {str(folder)!r} does not exist")
        if target.is_dir():
            raise OptionError(f"-o {path}: is a directory")
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:  # a name too long, a folder we may not enter or write in
        raise OutputError(f"-o {path}: cannot write: {_reason(exc)}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        # mkstemp makes a private (0600) file: give the result the mode a plain open() would
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise OutputError(f"-o {path}: cannot write: {_reason(exc)}") from exc
        raise


def _reason(exc: OSError) -> str:
    """``No space left on device``: the system's words, without the errno and path ``str(exc)`` adds."""
    return exc.strerror or str(exc) or type(exc).__name__
