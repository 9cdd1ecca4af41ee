"""``refine --help`` and the README's "Use it" section tell a user the same thing.

The README is the oracle (a person wrote it for users): its flag table names every flag with
its metavar, environment variable and meaning, and its exit-code table every exit code. The help
is read as a user reads it, from ``main(["--help"])``, parsed into entries, and held to the
README row for row: a flag, metavar or default that drifts in either is caught here. The epilog's
advice is checked by doing what it says.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from owlai_refine.cli import Exit, main

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
USE_IT = README.split("\n## Use it\n", 1)[1].split("\n## ", 1)[0]
OPS = README.split("\n## Operator tools", 1)[1].split("\n## ", 1)[0]


def cells(line: str) -> list[str]:
    """A Markdown table row's cells (``\\|`` is a pipe inside a cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def plain(cell: str) -> str:
    """A README cell as text: code and bold marks dropped, escaped pipes unescaped."""
    return cell.replace("**", "").replace("`", "").replace("\\|", "|")


def readme_rows() -> list[tuple[list[str], str, str]]:
    """The flag table: (each ``--flag METAVAR`` of the row, environment variable, meaning)."""
    rows = []
    for line in USE_IT.splitlines():
        row = cells(line) if line.startswith("| ") else []
        if len(row) == 3 and row[0] not in ("flag", "---") and row[0]:
            rows.append((plain(row[0]).split(", "), plain(row[1]), plain(row[2])))
    return rows


def help_text(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """``refine --help`` as printed, on a terminal wide enough that no help line wraps."""
    monkeypatch.setenv("COLUMNS", "1000")
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def help_entries(text: str) -> dict[str, str]:
    """``-o OUT, --output OUT`` -> its help, for every argument listed in ``text``; choices
    (``{cloud,self-hosted}``) are written as the README writes them (``cloud|self-hosted``)."""
    entries: dict[str, str] = {}
    current = ""
    sections = text.split("\n\n")
    listed = [x for x in sections if x.startswith(("positional arguments:\n", "options:\n"))]
    for line in "\n".join(listed).splitlines():
        if re.match(r"  \S", line):
            invocation, _, rest = line[2:].partition("  ")
            current = re.sub(r"\{([^}]*)\}", lambda m: m[1].replace(",", "|"), invocation)
            entries[current] = rest.strip()
        elif line.startswith("    "):
            entries[current] = f"{entries[current]} {line.strip()}".strip()
    return entries


def test_every_argument_in_help_is_in_the_readme_table_with_the_same_metavar(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = help_text(capsys, monkeypatch)
    shown = {item for entry in help_entries(text) for item in entry.split(", ")}
    documented = {item for flags, _, _ in readme_rows() for item in flags}
    assert shown - {"-h", "--help"} == documented
    assert text.startswith("usage: refine [-h] ")  # the name a user types, as in the README


def test_each_arguments_help_says_what_its_readme_row_says(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = help_entries(help_text(capsys, monkeypatch))
    rows = {item: (env, meaning) for flags, env, meaning in readme_rows() for item in flags}
    for invocation, shown in entries.items():
        if invocation == "-h, --help":
            continue
        (env, meaning), *others = {rows[item] for item in invocation.split(", ")}
        assert others == []
        assert shown == meaning + (f" [${env}]" if env else ""), invocation


def test_a_bad_choice_is_refused_by_name_with_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["r.md", "--backend", "gpu"])
    assert stop.value.code == Exit.CONFIG
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.startswith("refine: error: argument --backend: invalid choice: 'gpu'")
    assert "cloud" in line and "self-hosted" in line


def epilog(text: str) -> re.Match[str]:
    last = " ".join(text.rstrip().split("\n\n")[-1].split())
    m = re.fullmatch(
        r"Commands \(each has --help\): (?P<commands>.+)\. "
        r"A report named like a command: (?P<spellings>.+)\. "
        r"Exit codes: (?P<codes>.+)\.",
        last,
    )
    assert m, last
    return m


def test_the_epilogs_commands_are_the_readmes_and_each_has_help(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = epilog(help_text(capsys, monkeypatch))["commands"].split("; ")
    names = []
    for item in listed:
        m = re.fullmatch(r"refine (\w+) \.\.\.: \S.*", item)
        assert m, item
        names.append(m[1])
    assert sorted(names) == sorted(re.findall(r"^- `refine (\w+)", OPS, re.MULTILINE))
    for name in names:
        assert main([name, "--help"]) == Exit.OK
        assert capsys.readouterr().out.startswith(f"usage: refine {name} ")


def test_the_epilogs_spellings_refine_a_report_named_like_a_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    spellings = epilog(help_text(capsys, monkeypatch))["spellings"].split(", or ")
    assert spellings == ["refine ./stats", "refine -- stats"]
    assert all(f"`{s}`" in OPS for s in spellings)  # the README gives the same advice
    (tmp_path / "stats").write_text("# Stats\n\nThe team says the plan works.\n")
    monkeypatch.chdir(tmp_path)
    for spelling in spellings:
        assert main(["--dry-run", *spelling.split()[1:]]) == Exit.OK
        assert "The team says the plan works." in capsys.readouterr().out


def test_the_epilogs_exit_codes_are_the_readmes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = re.findall(r"(\d+(?:/\d+)*) (\w+)", epilog(help_text(capsys, monkeypatch))["codes"])
    table = USE_IT.split("\n### Exit codes\n", 1)[1]
    documented = {}
    for line in table.splitlines():
        row = cells(line) if line.startswith("| ") else []
        if len(row) == 2 and row[0][0].isdigit():
            for code in row[0].split(", "):
                documented[code] = row[1]
    assert sorted(c for codes, _ in shown for c in codes.split("/")) == sorted(documented)
    for codes, word in shown:
        for code in codes.split("/"):
            assert word in documented[code], (code, word)
