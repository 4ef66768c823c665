"""The redactor's shortcuts for long texts must never change what comes out. The stem gate in
secret_patterns.apply_rules skips the rules that need a secret name's stem when a text holds none;
it is checked against every rule run in turn, on texts whose stems are spelt in every case,
including Unicode letters that fold to ASCII ones under re.IGNORECASE (long s, Kelvin sign).
A long text is remembered with its redaction, and forgotten when a secret is learnt."""

from __future__ import annotations

import pytest

from agent.safety.redact import MASK, Redactor
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


def test_a_long_text_redacted_again_knows_a_secret_learnt_since() -> None:
    redactor = Redactor()
    text = "x" * (1 << 17) + " deploy with " + SECRET
    assert redactor.text(text) == text
    redactor.add_secret(SECRET)
    assert SECRET not in redactor.text(text)
