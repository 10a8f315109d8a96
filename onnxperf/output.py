"""Writing results: atomically (temporary file in the same folder, then rename), so a failed
run never leaves a half-written output file."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from .errors import OptionError


def write_output(text: str, path: str | None) -> None:
    """Write ``text`` to ``path`` atomically, or to stdout when ``path`` is None or ``-``."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OptionError(f"-o {path}: folder {str(folder)!r} does not exist")
    if target.is_dir():
        raise OptionError(f"-o {path}: is a directory")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        # mkstemp makes a private (0600) file: give the result the mode a plain open() would
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
