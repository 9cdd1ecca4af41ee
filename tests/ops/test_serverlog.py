"""The startup-log reader on the two recorded vLLM 0.32 CPU startups."""

from __future__ import annotations

import pytest

from owlai_refine.ops.serverlog import parse_server_log

from .conftest import fixture_text


def test_startup_with_presence_penalty() -> None:
    log = parse_server_log(fixture_text("startup-presence-penalty.log"))
    assert log.sampling_overrides == {"presence_penalty": 1.5, "max_tokens": 48}
    assert log.override_source == "the model's `generation_config.json`"
    assert log.max_num_seqs == 4
    assert log.max_model_len_arg == 4096
    assert log.kv_cache_tokens == 23296
    assert (log.max_concurrency_tokens, log.max_concurrency) == (4096, 5.69)
    assert log.speculative_config == "None"
    assert log.speculative_enabled is False
    assert log.vllm_version == "0.32.0"
    assert log.args is not None
    assert log.args["override_generation_config"] == {"max_new_tokens": 48, "presence_penalty": 1.5}


def test_startup_without_presence_penalty() -> None:
    log = parse_server_log(fixture_text("startup-no-presence-penalty.log"))
    assert log.sampling_overrides == {"max_tokens": 48}
    assert log.max_num_seqs == 4
    assert log.args is not None
    assert log.args["override_generation_config"] == {"max_new_tokens": 48}


def test_empty_or_foreign_text() -> None:
    log = parse_server_log("hello\nworld\n")
    assert log.lines_read == 2
    assert log.sampling_overrides is None
    assert log.max_num_seqs is None
    assert log.speculative_enabled is None


def test_last_startup_wins_in_an_appended_log() -> None:
    first = fixture_text("startup-presence-penalty.log")
    second = fixture_text("startup-no-presence-penalty.log")
    assert parse_server_log(first + second).sampling_overrides == {"max_tokens": 48}


def test_speculative_config_and_unparseable_args() -> None:
    text = (
        "INFO [core.py:1] Initializing a V1 LLM engine (v0.32.0) with config: model='m', "
        "speculative_config=SpeculativeConfig(method='ngram', num_spec_tokens=3), "
        "tokenizer='m'\n"
        "INFO [api_utils.py:2] non-default args: {'max_num_seqs': 8, 'x': <object at 0x1>}\n"
    )
    log = parse_server_log(text)
    assert log.speculative_config == "SpeculativeConfig(method='ngram', num_spec_tokens=3)"
    assert log.speculative_enabled is True
    assert log.max_num_seqs == 8  # found by the fallback pattern
    assert log.notes == ["non-default args line is not a Python literal"]


def test_a_real_ngram_speculative_startup() -> None:
    # vLLM 0.32 for CPU started with --speculative-config '{"method": "ngram",
    # "num_speculative_tokens": 4, "prompt_lookup_max": 4, "prompt_lookup_min": 2}', then a
    # copy-edit workload (refine bench --copy-edit): 11 "SpecDecoding metrics" lines
    log = parse_server_log(fixture_text("startup-ngram-spec.log"))
    assert (
        log.speculative_config == "SpeculativeConfig(method='ngram', model=None, num_spec_tokens=4)"
    )
    assert log.speculative_enabled is True
    assert (log.speculative_method, log.speculative_tokens) == ("ngram", 4)
    assert (log.spec_accepted_tokens, log.spec_draft_tokens) == (236, 10543)
    assert log.spec_acceptance == pytest.approx(236 / 10543)
    assert log.args is not None and log.args["speculative_config"]["method"] == "ngram"


def test_speculative_off_has_no_method_and_a_new_startup_resets_the_draft_counts() -> None:
    off = parse_server_log(fixture_text("startup-port18900.log"))
    assert (off.speculative_method, off.speculative_tokens, off.spec_acceptance) == (None,) * 3
    both = parse_server_log(
        fixture_text("startup-ngram-spec.log") + fixture_text("startup-port18900.log")
    )
    assert both.speculative_enabled is False
    assert (both.spec_accepted_tokens, both.spec_draft_tokens) == (None, None)


def test_the_method_from_the_args_when_the_engine_line_is_missing() -> None:
    text = (
        "INFO [api_utils.py:2] non-default args: {'speculative_config': "
        "{'method': 'suffix', 'num_speculative_tokens': 8}}\n"
    )
    log = parse_server_log(text)
    assert (log.speculative_method, log.speculative_tokens) == ("suffix", 8)
