"""The redactor's shortcuts for long texts must never change what comes out.

secret_patterns.apply_rules skips, on ASCII text, a rule none of whose words the text holds; it
is checked against every rule run in turn, on one line of each class of secret in several
spellings (case, and Unicode letters that fold to ASCII ones under re.IGNORECASE: long s,
Kelvin sign), each line alone and after 300 characters of other text. A long text is
remembered with its redaction, and forgotten when a secret is learnt.
"""

from __future__ import annotations

import pytest

from agent.safety.redact import MASK, REMEMBERED_CHARS, Redactor
from agent.safety.secret_patterns import RULES, STEMS, apply_rules

SECRET = "hunter2Zq9xW7vB4kP"
SPELLINGS = {
    "lower": lambda w: w,
    "upper": lambda w: w.upper(),
    "long-s": lambda w: w.replace("s", "\u017f"),
    "kelvin": lambda w: w.replace("k", "\u212a"),
}
NAMED_FORMS = ["DB_{}={}", "--{} {}", '"{}": "{}"', "{}: {}\n", "export MY_{}={} # é"]
# one line of each class the rules that do not start from a secret name's stem find
OTHER_FORMS = [
    "git clone https://user:{}@github.com/x/y",
    "https://hooks.slack.com/services/T0/B0/{}",
    "wandb login {}",
    "curl -H 'Authorization: Bearer {}' http://h",
    "Proxy-Authorization: Basic {}",
    "Cookie: session={}; theme=dark",
    '{{"kty": "oct", "k": "{}"}}',
    "mysql -u root -p{} db",
    "login -u me -p {}",
    "sshpass -p {} ssh host",
    "ldapsearch -x -D cn=admin -w {}",
    "smbclient //srv/share -U admin%{}",
    "redis-cli -h host -a {} ping",
    "curl -u me:{} https://h",
    "machine example.com login me password {}",
    "htpasswd -b .htpasswd me {}",
]


def every_rule(text: str) -> str:
    for rule in RULES:
        text = rule.apply(text)
    return text


def texts() -> list[str]:
    lines = [form.format(SECRET) for form in OTHER_FORMS]
    for spell in SPELLINGS.values():
        lines += [line.upper() for line in lines[: len(OTHER_FORMS)]]
        lines += [f.format(spell(stem + "word"), SECRET) for stem in STEMS for f in NAMED_FORMS]
    return [prefix + line for line in lines for prefix in ("", "x" * 300 + " ")]


@pytest.mark.parametrize("text", texts())
def test_skipping_rules_changes_nothing(text: str) -> None:
    assert apply_rules(text) == every_rule(text)


@pytest.mark.parametrize("form", OTHER_FORMS)
def test_each_class_is_masked_past_a_megabyte(form: str) -> None:
    out = apply_rules("x" * (1 << 20) + "\n" + form.format(SECRET))
    assert SECRET not in out and MASK in out


def test_a_long_text_redacted_again_knows_a_secret_learnt_since() -> None:
    redactor = Redactor()
    text = "x" * (1 << 17) + " deploy with " + SECRET
    assert redactor.text(text) == text
    redactor.add_secret(SECRET)
    assert SECRET not in redactor.text(text)


@pytest.mark.slow
def test_what_it_remembers_stays_within_its_bound() -> None:
    redactor = Redactor()
    texts = [f"{n} " + "y" * (1 << 20) for n in range(12)]  # 12 MB against a bound of 8
    for text in texts:
        assert redactor.text(text) == text
    assert redactor._seen_chars == sum(map(len, redactor._seen)) <= REMEMBERED_CHARS
    assert texts[-1] in redactor._seen and texts[0] not in redactor._seen
