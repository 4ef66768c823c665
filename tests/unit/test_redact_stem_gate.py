"""The stem gate in secret_patterns.apply_rules skips the rules that need a secret name's stem
when a text holds none; it must never change what comes out. Checked against every rule run in
turn, on texts whose stems are spelt in every case, including the Unicode letters that fold to
ASCII ones under the patterns' case-insensitive matching (long s, Kelvin sign)."""

from __future__ import annotations

import pytest

from agent.safety.redact import MASK
from agent.safety.secret_patterns import RULES, STEMS, apply_rules

SECRET = "hunter2Zq9xW7vB4"
SPELLINGS = {
    "lower": lambda w: w,
    "upper": lambda w: w.upper(),
    "long-s": lambda w: w.replace("s", "\u017f"),
    "kelvin": lambda w: w.replace("k", "\u212a"),
}
FORMS = ["DB_{}={}", "--{} {}", '"{}": "{}"', "{}: {}\n", "export MY_{}={} # é"]


def every_rule(text: str) -> str:
    for rule in RULES:
        text = rule.apply(text)
    return text


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("stem", STEMS)
def test_the_gate_changes_nothing(stem: str, spelling: str) -> None:
    for form in FORMS:
        text = "x" * 300 + " " + form.format(SPELLINGS[spelling](stem + "word"), SECRET)
        assert apply_rules(text) == every_rule(text), text


def test_a_named_secret_is_masked_past_a_megabyte() -> None:
    text = "x" * (1 << 20) + "\nAPI_TOKEN=" + SECRET
    out = apply_rules(text)
    assert SECRET not in out and out.endswith("API_TOKEN=" + MASK)
