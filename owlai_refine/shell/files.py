"""Reading a report and writing the refined one, safely: the applications' file IO (``refine``'s,
and the operator tools' :func:`check_writable` and :func:`default_ledger_path`, where the JSON
log goes by default).

The input is never modified. Output is written atomically: a temporary file in the target's
directory, flushed and fsynced, then renamed over the target, so a crash, Ctrl-C or SIGTERM
leaves either the old file or the whole new one, never half of it, and no temporary file. A
symlink is followed to the file it names; a FIFO or a device (``/dev/null``, a terminal, a
``/proc/self/fd/N`` link) is written to as a stream, never replaced. A backup is made the same
way as the output (temporary file, fsync, then linked to its name, which is never overwritten).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from owlai_refine.errors import InputError, OutputError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Backup",
    "Terminated",
    "check_writable",
    "default_ledger_path",
    "home",
    "kept_backup",
    "make_backup",
    "next_backup",
    "read_report",
    "same_file",
    "write_atomic",
    "write_stdout",
]


class Terminated(BaseException):
    """Raised when SIGTERM arrives while a file is written (see :func:`write_atomic`)."""


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


def _target(path: str) -> tuple[Path, bool]:
    """Where writing ``path`` goes: ``(file, as_stream)``. A symlink is followed to the file
    it names (``as_stream`` false: replaced atomically); an existing path that is not a
    regular file (a FIFO, a device, a ``/proc/self/fd/N`` link) is written as a stream."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return Path(os.path.realpath(path)), False  # new, or a link to a file not there yet
    if stat.S_ISREG(mode):
        return Path(os.path.realpath(path)), False
    return Path(path), True


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` (so that a half-written
    temporary file is removed) instead of ending the process at once."""

    def terminated(signum: int, frame: FrameType | None) -> None:
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread: signals cannot be caught here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _fill(fd: int, write: object) -> None:
    """Write to ``fd`` (closed here) with ``write(fh)``, then flush and fsync it."""
    with os.fdopen(fd, "wb") as fh:
        write(fh)  # type: ignore[operator]
        fh.flush()
        os.fsync(fh.fileno())


def make_backup(path: str) -> Path | None:
    """Copy the file ``path`` names (a symlink followed) to its next numbered backup
    (:func:`next_backup`) and return the backup's path; ``None`` if there is no such file.

    The copy is a temporary file, fsynced, then hard-linked to the backup's name, which is
    never overwritten (even by another process meanwhile): a backup is whole or absent. Raises
    :class:`OutputError` (the temporary file removed) if it cannot be written."""
    target, as_stream = _target(path)
    if as_stream or not target.exists():
        return None
    tmp: str | None = None
    try:
        with _sigterm_raises():
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            with target.open("rb") as src:
                _fill(fd, lambda fh: shutil.copyfileobj(src, fh))
            shutil.copystat(target, tmp)
            while True:
                backup = next_backup(str(target))
                try:
                    os.link(tmp, backup)
                except FileExistsError:
                    continue
                return backup
    except OSError as exc:
        raise OutputError(f"{path}: cannot write its backup ({exc.strerror or exc})") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


@dataclass
class Backup:
    """The backup ``--in-place`` made for this run (``path``; ``None``: there was no file),
    and whether the refined report was then ``written``."""

    path: Path | None
    written: bool = False


@contextlib.contextmanager
def kept_backup(path: str | None) -> Iterator[Backup]:
    """Back ``path`` up (:func:`make_backup`; ``None``: no backup) before the block runs; if
    the block ends without setting ``written`` (an error, an interruption), the backup, which
    then only repeats the untouched file, is removed."""
    backup = Backup(make_backup(path) if path else None)
    try:
        yield backup
    finally:
        if backup.path is not None and not backup.written:
            backup.path.unlink(missing_ok=True)


def write_stdout(text: str) -> None:
    """Write ``text`` (UTF-8) to stdout; :class:`OutputError` if it cannot be written (a full
    device). A closed pipe raises ``BrokenPipeError`` as before."""
    try:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"stdout: cannot write ({exc.strerror or exc})") from exc


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` (UTF-8, byte-exact) to ``path`` atomically: the file a symlink names is
    replaced, a FIFO or device is written as a stream. An existing file's permission bits are
    kept; a new file gets ``0666`` less the umask, as ``open()`` would give it. SIGTERM during
    the write raises :class:`Terminated`. Raises :class:`OutputError`; on any failure the
    target is untouched and no temporary file is left."""
    check_writable(path)
    target, as_stream = _target(path)
    data = text.encode("utf-8")
    tmp: str | None = None
    try:
        with _sigterm_raises():
            if as_stream:
                with open(target, "wb") as fh:
                    fh.write(data)
                return
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            _fill(fd, lambda fh: fh.write(data))
            if target.exists():
                os.chmod(tmp, target.stat().st_mode & 0o7777)
            else:  # mkstemp makes 0600; a new file gets what open() would give it
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, target)
            tmp = None
    except OSError as exc:
        raise OutputError(f"{path}: cannot write ({exc.strerror or exc})") from exc
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def default_ledger_path() -> Path:
    """Where the JSON log (the usage ledger) goes when stderr is a terminal and no
    ``--log-file`` is given: ``$XDG_STATE_HOME/owlai-refine/ledger.jsonl``, by default
    ``~/.local/state/owlai-refine/ledger.jsonl`` (the XDG base directory for logs and history),
    appended to by every run."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "owlai-refine" / "ledger.jsonl"


def home(path: Path) -> str:
    """``path`` with the home directory written ``~``, as a person would type it."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
