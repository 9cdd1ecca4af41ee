"""Reading a report and writing the refined one, safely: the CLI's only file IO.

The input is never modified. Output is written atomically: a temporary file in the target's
directory, flushed and fsynced, then renamed over the target, so a crash or Ctrl-C leaves either
the old file or the whole new one, never half of it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from owlai_refine.errors import InputError, OutputError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "check_writable",
    "next_backup",
    "read_report",
    "same_file",
    "write_atomic",
]

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
"""Reports above 16 MiB are refused unless ``--max-bytes`` says otherwise. The largest real
report we have seen is 194 KB; parsing is linear but a 50 MB report holds ~100,000 blocks."""


def read_report(path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Read ``path`` (``"-"`` for stdin) as UTF-8 text, byte-exact (no newline translation; a
    BOM stays in the text). Raises :class:`InputError` with a one-line reason for a missing
    file, a directory, a file over ``max_bytes`` bytes, NUL bytes (binary), or invalid UTF-8
    (naming the byte offset)."""
    if path == "-":
        data = sys.stdin.buffer.read(max_bytes + 1)
        name = "<stdin>"
    else:
        p = Path(path)
        if not p.exists():
            raise InputError(f"{path}: no such file")
        if p.is_dir():
            raise InputError(f"{path}: is a directory, not a Markdown file")
        try:
            size = p.stat().st_size
            if size > max_bytes:
                raise InputError(
                    f"{path}: {size:,} bytes is over the {max_bytes:,}-byte limit "
                    "(raise it with --max-bytes)"
                )
            data = p.read_bytes()
        except OSError as exc:
            raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from exc
        name = path
    if len(data) > max_bytes:
        raise InputError(f"{name}: over the {max_bytes:,}-byte limit (raise it with --max-bytes)")
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError(f"{name}: NUL byte at offset {nul}: this looks like a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not UTF-8 (invalid byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from exc


def same_file(a: str, b: str) -> bool:
    """True if paths ``a`` and ``b`` name the same existing file."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_writable(path: str) -> None:
    """Raise :class:`OutputError` unless ``path`` can be created or replaced: its directory
    exists and is writable, and ``path`` is not a directory. Called before any model call."""
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise OutputError(f"{path}: is a directory")
    if not parent.is_dir():
        raise OutputError(f"{path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: directory {parent} is not writable")
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError(f"{path}: file is not writable")


def next_backup(path: str) -> Path:
    """The next numbered backup name for ``path``, as GNU ``cp --backup=numbered`` names them:
    ``report.md.~1~``, then ``report.md.~2~``, ... (one more than the highest that exists)."""
    target = Path(path)
    pattern = re.compile(re.escape(target.name) + r"\.~(\d+)~")
    numbers = [
        int(m.group(1))
        for p in (target.parent if str(target.parent) else Path(".")).iterdir()
        if (m := pattern.fullmatch(p.name))
    ]
    return target.with_name(f"{target.name}.~{max(numbers, default=0) + 1}~")


def _make_backup(target: Path) -> Path:
    """Copy ``target`` to its next numbered backup, created exclusively (never overwriting a
    backup, even one made by another process meanwhile); its path."""
    while True:
        backup = next_backup(str(target))
        try:
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as fh, target.open("rb") as src:
            shutil.copyfileobj(src, fh)
            fh.flush()
            os.fsync(fh.fileno())
        shutil.copystat(target, backup)
        return backup


def write_atomic(path: str, text: str, *, backup: bool = False) -> Path | None:
    """Write ``text`` (UTF-8, byte-exact) to ``path`` atomically. With ``backup=True`` an
    existing file is first copied to a new numbered backup (``path.~N~``, see
    :func:`next_backup`); no backup is ever overwritten. An existing file's permission bits are
    kept; a new file gets ``0666`` less the umask, as ``open()`` would give it.
    Returns the backup's path (``None`` if none was made). Raises :class:`OutputError`; on any
    failure the target is untouched."""
    target = Path(path)
    check_writable(path)
    made: Path | None = None
    try:
        if backup and target.exists():
            made = _make_backup(target)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        else:  # mkstemp makes 0600; a new file gets what open() would give it
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from exc
        raise
    return made
