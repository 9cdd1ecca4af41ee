"""The real reports tests run on: always the fixture copies in ``fixtures/reports`` (which a test
must never lose), and the 15 sample reports of ``../shared/reports`` when that folder is beside
the checkout (it is not in this repository: the tests that need all 15 skip without it)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "reports"
FIXTURES = REPO / "fixtures" / "reports"


def _reports(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.md") if p.name != "SOURCES.md")


def shared_reports() -> list[Path]:
    """The shared sample reports (empty if ``../shared`` is not there)."""
    return _reports(SHARED)


def sample_reports() -> list[Path]:
    """Every real report available: the shared samples, then the fixture copies."""
    return shared_reports() + _reports(FIXTURES)
