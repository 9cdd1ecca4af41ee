"""Every example in the README runs, against the loopback test server (testsupport).

What is run, and the only substitutions made:

- each ```python block is executed as written, with ``OWLAI_REFINE_BASE_URL`` set to the
  loopback server (the first example reads it; unset, it is the embedded model, which
  tests/test_readme.py runs live) and ``http://gpu1:8000/v1`` replaced by the server's URL;
- each ``refine ...`` line of a ```sh block runs through ``refine``'s own ``main`` in a
  temporary folder holding the README's ``report.md``, with ``http://gpu1:8000/v1`` and
  ``https://api.openai.com/v1`` replaced by the server's URL, ``OWLAI_REFINE_BASE_URL`` set to it
  for the lines that name no server, and ``~`` a temporary home (so the ledger is a fresh one);
- each ``jq ...`` line runs in ``bash`` over a ledger a real ``refine`` run wrote there;
- the ``vllm serve`` command is checked for every flag ``refine doctor`` reads (and, where the
  vLLM for CPU of ``.ci/vllm-server`` is installed, parsed by vLLM's own argument parser); the
  ``pip`` lines are checked by tests/test_readme.py.

A line of a ```sh block that is none of these fails the test: a new kind of example needs a
way to run here first.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import structlog

from owlai_refine.cli import Exit, main
from owlai_refine.ops.doctor.checks import check_server_log
from owlai_refine.ops.serverlog import parse_server_log
from testsupport.fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
SERVERS = ("http://gpu1:8000/v1", "https://api.openai.com/v1")
"""The server URLs the README's examples name, each replaced by the loopback server's."""

REPORT = """\
# Notes

The results was good and the team were happy [1].

The cluster served 120 requests per second on 4 GPUs [2].

- The first item says yes.
- The second item say no.

[1]: https://example.com/a
[2]: https://example.com/b
"""
"""The README's ``report.md``: two blocks the model corrects, one whose number it changes
(the guard refuses that reply: line 5), one it leaves alone."""


def edit(text: str) -> str:
    """The loopback model: fixes the grammar, and changes a number (which the guard refuses)."""
    for old, new in (("results was", "results were"), ("team were", "team was")):
        text = text.replace(old, new)
    return text.replace("item say no", "item says no").replace("120 requests", "12 requests")


def sh_commands(readme: str) -> list[str]:
    """Every command of every ```sh block as written (continuation lines joined), comment
    lines left out."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", readme, re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            if shlex.split(line, comments=True):
                commands.append(line.strip())
    return commands


def words_of(command: str) -> list[str]:
    """A command's words as the shell splits them, its trailing comment dropped."""
    return shlex.split(command, comments=True)


def kind(command: str) -> str:
    """``setup`` (pip/venv), ``vllm``, ``refine`` (env assignments first allowed) or ``jq``."""
    words = [w for w in words_of(command) if not re.fullmatch(r"[A-Z_]+=.*", w)]
    if command.startswith("python3 -m venv "):
        return "setup"
    if words[0] in ("vllm", "refine", "jq"):
        return words[0]
    return f"unknown: {words[0]}"


COMMANDS = sh_commands(README)
REFINE_LINES = [c for c in COMMANDS if kind(c) == "refine"]


def test_every_sh_line_is_one_this_file_runs_or_checks() -> None:
    kinds = {c: kind(c) for c in COMMANDS}
    assert all(k in ("setup", "vllm", "refine", "jq") for k in kinds.values()), kinds
    assert list(kinds.values()).count("setup") == 2  # the two commands (tests/test_readme.py)
    assert list(kinds.values()).count("vllm") == 1
    assert list(kinds.values()).count("jq") >= 1


# -- the refine lines -------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder as both the working directory (``report.md`` in it, the fixtures
    beside it) and ``~``; no setting of the caller's environment leaks in."""
    for name in list(os.environ):
        if name.startswith("OWLAI_REFINE_") or name in ("XDG_STATE_HOME", "TTY_COMPATIBLE"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TTY_COMPATIBLE", "0")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.md").write_text(REPORT)
    (tmp_path / "fixtures").symlink_to(REPO / "fixtures")
    return tmp_path


def run_refine(command: str, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run one README line through ``main``: environment assignments applied, server URLs
    replaced by the loopback server's (or given through the environment if the line names
    none)."""
    words = words_of(command)
    while re.fullmatch(r"[A-Z_]+=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        monkeypatch.setenv(name, value)
    assert words[0] in ("refine", ".venv/bin/refine")
    argv = [server.base_url if w in SERVERS else w for w in words[1:]]
    if "--base-url" not in argv:
        monkeypatch.setenv("OWLAI_REFINE_BASE_URL", server.base_url)
    return main(argv)


def models_for(command: str) -> tuple[str, ...]:
    m = re.search(r"--model (\S+)", command)
    return (m.group(1),) if m else ("qwen3.5",)


def refine_param(command: str) -> Any:
    words = words_of(command)
    return pytest.param(command, id=shlex.join(words))


@pytest.mark.parametrize("command", [refine_param(c) for c in REFINE_LINES])
def test_each_refine_line_runs_and_does_what_it_says(
    command: str,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = words_of(command)
    with FakeOpenAI(reply=edit, models=models_for(command)) as server:
        if argv[1] == "stats":  # the ledger it reads: one run at a terminal writes it
            monkeypatch.setenv("TTY_COMPATIBLE", "1")
            assert run_refine("refine report.md -o first.md", server, monkeypatch) == Exit.OK
            monkeypatch.setenv("TTY_COMPATIBLE", "0")
            capsys.readouterr()
        code = run_refine(command, server, monkeypatch)
        requests = len(server.seen)
    out = capsys.readouterr().out
    assert code == Exit.OK, command
    if argv[1] == "stats":
        assert "qwen3.5" in out
        return
    if "--dry-run" in argv:
        assert requests == 0 and "The results was good" in out
        assert (home / "report.md").read_text() == REPORT
        return
    assert requests == 4  # the four blocks; the link definitions are never sent
    if "-o" in argv:
        written = (home / argv[argv.index("-o") + 1]).read_text()
    else:
        assert "--in-place" in argv
        written = (home / "report.md").read_text()
        assert (home / "report.md.~1~").read_text() == REPORT
    assert "The results were good and the team was happy [1]." in written
    assert "120 requests" in written  # the refused reply: the block kept its text
    if "--review" in argv:
        page = (home / argv[argv.index("--review") + 1]).read_text()
        head = page.split("</head>")[0].lower()
        assert "<html" in page.lower() and not re.search(r"(src|href)\s*=\s*[\"']?https?:", head)
        text = re.sub(r"<[^>]+>", "", page)  # the diff marks the changed word
        assert "120" in text and "12 requests" in text and "changed number" in text
    if "--diff" in argv:
        assert "were" in out and "was" in out


def test_the_try_it_command_refines_the_fixture_report(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    try_it = re.findall(r"```sh\n(.*?)```", README, re.DOTALL)[0].strip()
    command = try_it.rsplit(" && ", 1)[1]
    with FakeOpenAI(reply=edit, models=("smollm2",)) as server:
        assert run_refine(command, server, monkeypatch) == Exit.OK
    report = command.split()[1]
    assert (home / "refined.md").read_text() == (REPO / report).read_text()  # echoed unchanged


# -- the jq line over the ledger --------------------------------------------------------------


@pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq (Debian: apt-get install jq)")
@pytest.mark.parametrize("command", [c for c in COMMANDS if kind(c) == "jq"])
def test_the_jq_line_lists_the_rejected_blocks_from_the_ledger(
    command: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # at a terminal the log goes to the ledger
    with FakeOpenAI(reply=edit, models=("qwen3.5",)) as server:
        assert run_refine("refine report.md -o refined.md", server, monkeypatch) == Exit.OK
    ledger = home / ".local" / "state" / "owlai-refine" / "ledger.jsonl"
    assert ledger.is_file()
    done = subprocess.run(
        [shutil.which("bash") or "/bin/bash", "-c", command],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home)},
        timeout=60,
        check=True,
    )
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["report_id"], r["lines"]) for r in rows] == [("report", [5, 5])]
    assert any("120" in reason and "12" in reason for reason in rows[0]["reasons"])


# -- the python blocks ------------------------------------------------------------------------

PYTHON = re.findall(r"```python\n(.*?)```", README, re.DOTALL)


def run_python(source: str, base_url: str) -> None:
    for url in SERVERS:
        source = source.replace(url, base_url)
    try:
        exec(compile(source, "README.md", "exec"), {"__name__": "__main__"})  # noqa: S102 - the README
    finally:
        structlog.reset_defaults()


def test_the_first_library_example_refines_against_the_server_in_its_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # as written it runs the embedded model, or the server in the CLI's variable
    assert 'RefineConfig(base_url=os.environ.get("OWLAI_REFINE_BASE_URL"))' in PYTHON[0]
    with FakeOpenAI(reply=edit, models=("qwen3.5",)) as server:
        monkeypatch.setenv("OWLAI_REFINE_BASE_URL", server.base_url)
        run_python(PYTHON[0], server.base_url)
    lines = capsys.readouterr().out.splitlines()
    assert ast.literal_eval(lines[0])["refined"] == 1
    assert lines[1] == "0 (2, 3) refined ()"
    assert lines[2:] == ["# Notes", "", "The results were good and the team was happy [1]."]


def test_the_pipeline_example_refines_every_report_through_one_refiner(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "http://gpu1:8000/v1" in PYTHON[1]
    structlog.reset_defaults()  # as in a fresh process: the example configures its own log
    with FakeOpenAI(reply=edit, models=("qwen3.5",)) as server:
        run_python(PYTHON[1], server.base_url)
        assert server.max_in_flight <= 4 and server.model_lists == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == ["['a', 'b'] 2 calls"]
    events = [json.loads(line)["event"] for line in err.splitlines()]
    assert events.count("refine.call") == 2 and events.count("refine.done") == 2


def test_the_pipeline_example_stops_in_one_line_when_the_server_is_unreachable() -> None:
    with FakeOpenAI() as server:
        gone = server.base_url
    with pytest.raises(SystemExit) as stop:
        run_python(PYTHON[1], gone)
    assert str(stop.value.code).startswith("refine: ") and gone.split("/v1")[0] in str(
        stop.value.code
    )


def test_every_python_block_is_run_here() -> None:
    assert len(PYTHON) == 2


# -- the vllm serve command -------------------------------------------------------------------

VLLM = next(c for c in COMMANDS if kind(c) == "vllm")
VLLM_BLOCK = next(b for b in re.findall(r"```sh\n(.*?)```", README, re.DOTALL) if "vllm " in b)
OPTIONAL = re.search(r"--speculative-config '(\{.*?\})'", VLLM_BLOCK)
VLLM_KEEPS = {
    "repetition_penalty",
    "presence_penalty",
    "frequency_penalty",
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "max_new_tokens",
}
"""The keys of ``--override-generation-config`` vLLM 0.32 keeps (``ModelConfig.
get_diff_sampling_param``: any other key, ``max_tokens`` included, is dropped silently), and it
logs ``max_new_tokens`` as ``max_tokens``."""


def vllm_flags() -> dict[str, str | bool]:
    words = words_of(VLLM)
    assert words[:2] == ["vllm", "serve"] and not words[2].startswith("-")
    flags: dict[str, str | bool] = {}
    rest = words[3:]
    while rest:
        flag = rest.pop(0)
        assert flag.startswith("--"), flag
        flags[flag] = rest.pop(0) if rest and not rest[0].startswith("--") else True
    return flags


def test_the_vllm_command_sets_every_flag_the_doctor_checks() -> None:
    flags = vllm_flags()
    assert flags["--max-num-seqs"] == "4"  # refine's self-hosted concurrency
    assert flags["--max-num-batched-tokens"] == "8192"
    assert flags["--tensor-parallel-size"] == "2"
    assert flags["--scheduling-policy"] == "priority"
    for switch in ("request-id-headers", "prompt-tokens-details", "log-requests"):
        assert flags[f"--enable-{switch}"] is True
    override = json.loads(str(flags["--override-generation-config"]))
    assert set(override) <= VLLM_KEEPS and override["presence_penalty"] == 1.5
    assert override["max_new_tokens"] == 32768
    assert OPTIONAL is not None and "--speculative-config" not in flags  # optional: commented
    assert json.loads(OPTIONAL.group(1)) == {
        "method": "ngram",
        "num_speculative_tokens": 4,
        "prompt_lookup_max": 4,
    }


def test_the_doctor_passes_the_startup_log_such_a_command_writes() -> None:
    """The two log lines the doctor reads, as vLLM 0.32 writes them for these flags (its
    non-default args, and its override line: kept keys only, ``max_new_tokens`` logged as
    ``max_tokens``): the override and max-num-seqs checks pass."""
    flags = vllm_flags()
    override = json.loads(str(flags["--override-generation-config"]))
    args: dict[str, Any] = {k.removeprefix("--").replace("-", "_"): v for k, v in flags.items()}
    args |= {"max_num_seqs": 4, "override_generation_config": override}
    kept = {("max_tokens" if k == "max_new_tokens" else k): v for k, v in override.items()}
    log = parse_server_log(
        f"INFO [api_utils.py:286] non-default args: {args!r}\n"
        "WARNING [model.py:1893] Default vLLM sampling parameters have been overridden by the "
        f"model's `generation_config.json`: `{kept!r}`. If this is not intended, ...\n"
    )
    override_check, _, seqs_check, _ = check_server_log(log, 262144, 4)
    assert (override_check.status, seqs_check.status) == ("pass", "pass"), override_check


VLLM_PYTHON = Path(
    os.environ.get("OWLAI_SERVERS_DIR", Path.home() / ".cache" / "owlai-servers"),
    "vllm-venv",
    "bin",
    "python",
)
PARSE = """
import json, shlex, sys
from vllm.entrypoints.launchers.cli_args import make_arg_parser
from vllm.utils.argparse_utils import FlexibleArgumentParser
args = make_arg_parser(FlexibleArgumentParser()).parse_args(shlex.split(sys.argv[1])[2:])
print(json.dumps({k: v for k, v in vars(args).items() if isinstance(v, (int, str, dict))}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not VLLM_PYTHON.is_file(), reason="needs .ci/vllm-server's vLLM install")
def test_vllm_itself_parses_the_command_with_the_optional_flag() -> None:
    assert OPTIONAL is not None
    command = f"{shlex.join(words_of(VLLM))} --speculative-config {shlex.quote(OPTIONAL.group(1))}"
    done = subprocess.run(
        [str(VLLM_PYTHON), "-c", PARSE, command],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    parsed = json.loads(done.stdout.splitlines()[-1])
    assert parsed["max_num_seqs"] == 4 and parsed["tensor_parallel_size"] == 2
    assert parsed["scheduling_policy"] == "priority" and parsed["enable_log_requests"] is True
    assert parsed["override_generation_config"] == json.loads(
        str(vllm_flags()["--override-generation-config"])
    )
    assert parsed["speculative_config"]["method"] == "ngram"
