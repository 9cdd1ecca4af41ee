"""``shell.files.write_atomic`` under injected faults: the README's "atomically (temporary file,
fsync, rename)" and "exit 4: nothing was written", checked one barrier at a time.

Each fault is injected where the real one would strike (``os.replace``, ``os.fsync``, a
``BaseException`` mid-write, a ``SIGKILL`` in a child process), and each test states what is left
on disk afterwards: the old target byte for byte, and no temporary file (except after a kill,
which no code can clean up after: the target is still whole).
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from owlai_refine.errors import OutputError
from owlai_refine.shell import files

OLD = b"# Old\r\n\r\nThe old report.\r\n"
NEW = "# New\r\n\r\nThe new report, caf\u00e9.\r\n"


def leftovers(directory: Path, keep: set[str]) -> set[str]:
    """Names in ``directory`` other than ``keep``: a temporary file left behind shows here."""
    return {p.name for p in directory.iterdir()} - keep


def test_the_text_is_written_byte_exact_through_a_new_inode(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(OLD)
    before = target.stat().st_ino
    files.write_atomic(str(target), NEW)
    assert target.read_bytes() == NEW.encode("utf-8")
    # A rename puts a new file in place; writing into the old one would keep its inode.
    assert target.stat().st_ino != before
    assert leftovers(tmp_path, {"out.md"}) == set()


def test_the_data_is_fsynced_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.md"
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append(f"fsync {os.fstat(fd).st_size}")
        real_fsync(fd)

    def replace(src: str, dst: Path) -> None:
        hidden = Path(src).name.startswith(".out.md.") and src.endswith(".tmp")
        calls.append(f"replace {Path(src).parent == tmp_path} {hidden} {Path(dst) == target}")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    files.write_atomic(str(target), NEW)
    # The whole text is on disk (fsynced) before the temporary file in the same directory is
    # renamed over the target.
    assert calls == [f"fsync {len(NEW.encode())}", "replace True True True"]


@pytest.mark.parametrize(
    ("where", "error"),
    [
        ("replace", OSError(errno.EXDEV, "Invalid cross-device link")),
        ("fsync", OSError(errno.ENOSPC, "No space left on device")),
        ("chmod", OSError(errno.EPERM, "Operation not permitted")),
    ],
)
def test_a_failure_leaves_the_target_untouched_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, error: OSError
) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(OLD)

    def fail(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(os, where, fail)
    with pytest.raises(OutputError) as info:
        files.write_atomic(str(target), NEW)
    assert str(info.value) == f"{target}: cannot write ({error.strerror})"
    assert isinstance(info.value.__cause__, OSError)
    assert target.read_bytes() == OLD
    assert leftovers(tmp_path, {"out.md"}) == set()


def test_a_full_disk_on_write_is_an_output_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(OLD)
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, fd: int) -> None:
            self.fh = real_fdopen(fd, "wb")

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def write(self, data: bytes) -> int:
            self.fh.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: FullDisk(fd))
    with pytest.raises(OutputError, match="No space left on device"):
        files.write_atomic(str(target), NEW)
    assert target.read_bytes() == OLD
    assert leftovers(tmp_path, {"out.md"}) == set()


def test_an_interrupt_mid_write_is_re_raised_and_cleaned_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(OLD)

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        files.write_atomic(str(target), NEW)
    assert target.read_bytes() == OLD
    assert leftovers(tmp_path, {"out.md"}) == set()


KILLED_MID_WRITE = """
import os, signal, sys
from owlai_refine.shell import files
def killed(fd):
    os.kill(os.getpid(), signal.SIGKILL)
os.fsync = killed
files.write_atomic(sys.argv[1], "x" * 1_000_000)
"""


def test_a_process_killed_mid_write_leaves_the_old_target_whole(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(OLD)
    done = subprocess.run(
        [sys.executable, "-c", KILLED_MID_WRITE, str(target)], timeout=60, check=False
    )
    assert done.returncode == -signal.SIGKILL
    assert target.read_bytes() == OLD  # never half a file
    # Nothing can clean up after SIGKILL: the temporary file is hidden and named for the target.
    (left,) = leftovers(tmp_path, {"out.md"})
    assert left.startswith(".out.md.") and left.endswith(".tmp")


def test_an_existing_files_permission_bits_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(OLD)
    target.chmod(0o640)
    files.write_atomic(str(target), NEW)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_new_file_gets_0666_less_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    old = os.umask(0o027)
    try:
        files.write_atomic(str(target), NEW)
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.read_bytes() == NEW.encode()


def test_backups_are_numbered_and_never_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(OLD)
    (tmp_path / "out.md.~3~").write_bytes(b"third")
    made = files.make_backup(str(target))
    files.write_atomic(str(target), NEW)
    assert made == tmp_path / "out.md.~4~"
    assert made.read_bytes() == OLD
    assert (tmp_path / "out.md.~3~").read_bytes() == b"third"
    assert files.make_backup(str(target)) == tmp_path / "out.md.~5~"
    files.write_atomic(str(target), "newer")
    assert (tmp_path / "out.md.~5~").read_bytes() == NEW.encode()
    assert target.read_bytes() == b"newer"
    assert leftovers(tmp_path, {"out.md", "out.md.~3~", "out.md.~4~", "out.md.~5~"}) == set()
    # No backup for a file that did not exist.
    assert files.make_backup(str(tmp_path / "fresh.md")) is None


def test_a_failed_write_after_a_backup_keeps_the_target_and_the_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(OLD)

    def fail(*args: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "replace", fail)
    files.make_backup(str(target))
    with pytest.raises(OutputError):
        files.write_atomic(str(target), NEW)
    assert target.read_bytes() == OLD
    assert (tmp_path / "out.md.~1~").read_bytes() == OLD
    assert leftovers(tmp_path, {"out.md", "out.md.~1~"}) == set()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: (d / "out.md").mkdir(), "is a directory"),
        (lambda d: None, "does not exist"),
    ],
)
def test_an_unusable_target_is_refused_before_anything_is_written(
    tmp_path: Path, make: object, message: str
) -> None:
    assert callable(make)
    make(tmp_path)
    path = tmp_path / "out.md" if message != "does not exist" else tmp_path / "no" / "out.md"
    with pytest.raises(OutputError, match=message):
        files.write_atomic(str(path), NEW)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_directory_is_refused(tmp_path: Path) -> None:
    sub = tmp_path / "ro"
    sub.mkdir()
    sub.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="is not writable"):
            files.write_atomic(str(sub / "out.md"), NEW)
    finally:
        sub.chmod(0o700)


def test_read_report_is_byte_exact_and_names_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "r.md"
    path.write_bytes(b"\xef\xbb\xbfA\r\nB\rC\n")
    assert files.read_report(str(path)) == "\ufeffA\r\nB\rC\n"
    path.write_bytes(b"ok\xffno")
    with pytest.raises(Exception, match=r"invalid byte 0xff at offset 2"):
        files.read_report(str(path))
    path.write_bytes(b"ab\0c")
    with pytest.raises(Exception, match="NUL byte at offset 2"):
        files.read_report(str(path))
    path.write_bytes(b"12345")
    assert files.read_report(str(path), max_bytes=5) == "12345"
    with pytest.raises(Exception, match="5 bytes is over the 4-byte limit"):
        files.read_report(str(path), max_bytes=4)


def test_a_backup_another_process_made_meanwhile_is_never_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ``--in-place`` runs at once: the other one takes ``out.md.~1~`` between our choice
    of that name and our creating it. Ours goes to ``~2~``; theirs is kept as it is."""
    target = tmp_path / "out.md"
    target.write_bytes(OLD)
    real_next = files.next_backup

    def raced(path: str) -> Path:
        name = real_next(path)
        if name.name == "out.md.~1~":
            name.write_bytes(b"the other run's backup")
        return name

    monkeypatch.setattr(files, "next_backup", raced)
    assert files.make_backup(str(target)) == tmp_path / "out.md.~2~"
    files.write_atomic(str(target), NEW)
    assert (tmp_path / "out.md.~1~").read_bytes() == b"the other run's backup"
    assert (tmp_path / "out.md.~2~").read_bytes() == OLD
    assert target.read_bytes() == NEW.encode()
