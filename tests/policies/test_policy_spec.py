"""Policy specs ``NAME:KEY=VALUE:...``: parsing, options through the plugin store, errors."""
from __future__ import annotations

import pytest

from cbr.errors import ConfigError, PluginError
from cbr.policies.cbr_policy import CBRPolicy
from cbr.policies.rules import LooseAggressivePolicy
from cbr.policies.spec import (
    PolicyFileError,
    PolicySpecError,
    UnknownPolicyError,
    parse_policy_spec,
    policy_from_spec,
    policy_options,
    split_policy_specs,
)


@pytest.mark.parametrize("text, expected", [
    ("call", ("call", {})),
    ("  ehs ", ("ehs", {})),
    ("cbr:casebase=default", ("cbr", {"casebase": "default"})),
    ("cbr:casebase=/tmp/x/cb:reuse=best-outcome", ("cbr", {"casebase": "/tmp/x/cb", "reuse": "best-outcome"})),
    ("lag:stab-rate=0.1:raise_rank=40", ("lag", {"stab_rate": "0.1", "raise_rank": "40"})),
    ("cbr:similarity=a=b.toml", ("cbr", {"similarity": "a=b.toml"})),     # first '=' splits
])
def test_parse_good(text, expected):
    assert parse_policy_spec(text) == expected


@pytest.mark.parametrize("text, message", [
    ("", "expected a policy name first"),
    (":reuse=x", "expected a policy name first"),
    ("cbr:reuse", "expected KEY=VALUE"),
    ("cbr:=x", "expected KEY=VALUE"),
    ("cbr:", "expected KEY=VALUE"),
    ("cbr:reuse=a:reuse=b", "given twice"),
    ("cbr:reuse=a:re-use=b:re_use=c", "given twice"),
    ("cbr:casebase=a,b", "contains a comma"),
    ("c br", "expected a policy name first"),
])
def test_parse_bad(text, message):
    with pytest.raises(PolicySpecError, match=message) as info:
        parse_policy_spec(text)
    assert isinstance(info.value, ValueError) and "\n" not in str(info.value)


def test_split_keeps_options_with_their_policy():
    assert split_policy_specs("cbr:casebase=default:reuse=max-frequency,ehs") == [
        "cbr:casebase=default:reuse=max-frequency", "ehs"]
    assert split_policy_specs(" a , ,b,") == ["a", "b"]


def test_options_come_from_the_constructor():
    assert {k: v for k, v in policy_options("cbr").items() if k in ("preset", "casebase", "similarity", "reuse")} == {
        "preset": "adaptive", "casebase": None, "similarity": None, "reuse": None}   # None: the preset's value
    assert policy_options("call") == {} and policy_options("random") == {}
    assert policy_options("ehs")["raise_ehs"] == 0.6
    assert "stab_rate" in policy_options("lag") and "seed" not in policy_options("lag")


def test_build_with_typed_options():
    bot = policy_from_spec("lag:stab-rate=0.25:raise_rank=40", seed=9)
    assert isinstance(bot, LooseAggressivePolicy)
    assert bot.stab_rate == 0.25 and bot.raise_rank == 40 and isinstance(bot.raise_rank, int) and bot.seed == 9
    cbr = policy_from_spec("cbr:preset=expert:reuse=max-frequency", seed=2)
    assert isinstance(cbr, CBRPolicy) and cbr.reuse == "max-frequency" and cbr.casebase == "expert"
    adaptive = policy_from_spec("cbr:reuse=max-frequency", seed=2)  # the default preset: the adaptive bot
    safe = adaptive.experts[adaptive.safe]                          # over the case-based bot the options shape
    assert adaptive.name == "cbr" and isinstance(safe, CBRPolicy) and safe.reuse == "max-frequency"
    assert safe.preset == "imitate" and adaptive.casebase == "expert"
    with pytest.raises(PolicySpecError, match="unknown preset 'nope'; use adaptive, expert, imitate or casper"):
        policy_from_spec("cbr:preset=nope")
    assert policy_from_spec("call").name == "call"


@pytest.mark.parametrize("text, error, message", [
    ("nosuchbot", UnknownPolicyError, r"unknown policy 'nosuchbot'; known policies: .*cbr.*ehs"),
    ("cbr:colour=red", PolicySpecError, "has no option 'colour'; options: preset, casebase, similarity, reuse"),
    ("call:x=1", PolicySpecError, "policy 'call' takes no options, got 'x'"),
    ("lag:raise-rank=many", PolicySpecError, "option 'raise-rank' is an int, got 'many'"),
    ("lag:stab-rate=half", PolicySpecError, "option 'stab-rate' is a float, got 'half'"),
    ("cbr:reuse=often", PolicySpecError, "unknown re-use policy 'often'; use probabilistic"),
    ("cbr:casebase=/no/such/dir", PolicyFileError,  # a bad input file, not a usage error
     r"policy spec 'cbr:casebase=/no/such/dir': option 'casebase': no case base"),
    ("cbr:reuse=", PolicySpecError, "option 'reuse' has an empty value"),
    ("cbr:seed=3", PolicySpecError, "has no option 'seed'"),
])
def test_build_errors(text, error, message):
    with pytest.raises(error, match=message) as info:
        policy_from_spec(text)
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("spec, words", [
    ("adapt:min-similarity=2", "min-similarity must be in [0, 1], got 2.0"),
    ("adapt:min_similarity=2", "min-similarity must be in [0, 1], got 2.0"),     # either way written: one name
    ("adapt:prior-hands=-1", "prior-hands must be 'auto' or a positive number"),
    ("adapt:memory-z=-1", "memory-z must be a number >= 0"),
    ("cbr:min-cases=9:fallback-k=3", "min-cases (9) must be at most fallback-k (3): fewer than min-cases cases"),
    ("cbr:outcome-weight=inf", "outcome-weight must be a finite number"),
    ("cbr:preset=expert:memory-cases=3", "memory-cases: options of the adaptive preset, not of preset=expert"),
    ("cbr:min-similarity=2", "has no option 'min-similarity'; options: preset"),
    ("cbr:fallback-k=3:fallback_k=4", "option 'fallback-k' given twice"),
    ("call:stab_rate=1", "takes no options, got 'stab-rate'"),
])
def test_option_errors_name_the_option_as_a_spec_writes_it(spec, words):
    """A bot's constructor names its keyword (``min_similarity``); the user wrote ``min-similarity``."""
    with pytest.raises(PolicySpecError) as info:
        policy_from_spec(spec)
    said = str(info.value)
    assert words in said, said
    said = said.replace(repr(spec), "")                     # the spec as given, quoted whole
    assert not any(k in said for k in ("min_similarity", "prior_hands", "memory_z", "min_cases", "fallback_k",
                                       "outcome_weight", "memory_cases", "stab_rate")), said


def test_unknown_policy_is_also_a_plugin_error():
    with pytest.raises(PluginError):
        policy_from_spec("nosuchbot")


@pytest.mark.parametrize("spec, words", [
    ("lag:stab-rate=5", "stab-rate is a number in [0, 1], got 5.0"),       # was clamped silently
    ("lag:stab-rate=-1", "stab-rate is a number in [0, 1]"),
    ("ehs:bluff-rate=2", "bluff-rate is a number in [0, 1]"),
    ("ehs:bluff-pot=-3", "bluff-pot is a number >= 0"),
    ("hs:raise-rank=500", "raise-rank is a hand-class rank 0..169"),
    ("poki:width=nan", "width is a number in [0, 1]"),
    ("lag:stab-rate=abc", "option 'stab-rate' is a float"),                # was named 'stab_rate'
])
def test_rule_bot_options_out_of_range_are_refused(spec: str, words: str) -> None:
    from cbr.policies.spec import PolicySpecError, policy_from_spec

    with pytest.raises(PolicySpecError) as exc:
        policy_from_spec(spec)
    assert words in str(exc.value) and spec in str(exc.value)


def test_cfr_strategy_help_offers_only_what_a_spec_can_say() -> None:
    """The help once offered ``("": the teacher)``, but neither spelling of an empty value plays
    the teacher: ``strategy=`` is an empty value, ``strategy=""`` a strategy named ``""``. The
    teacher is the default, had by leaving the option out."""
    from cbr.policies.spec import policy_option_help

    line = policy_option_help("cfr")["strategy"]
    assert '""' not in line and "default: emd_2000; omit the option" in line, line
    with pytest.raises(PolicySpecError, match="option 'strategy' has an empty value"):
        policy_from_spec("cfr:strategy=")
    with pytest.raises(ConfigError, match='"": no such strategy'):
        policy_from_spec('cfr:strategy=""')
    assert policy_from_spec("cfr").name == "cfr"  # the option left out: the teacher plays
