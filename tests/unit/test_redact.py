"""`scout redact`: every secret form this field meets comes out masked, the rest untouched."""

from __future__ import annotations

import io
import sys

import pytest

from agent.faces.cli import main
from agent.safety.redact import MASK, Redactor

PEM_BODY = (
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n"
)
# (name, text, the secret that must be gone, text that must stay)
FORMS = [
    ("json password", '{"user": "ops", "password": "hunter2"}', "hunter2", '"user": "ops"'),
    ("--password X", "tool --password hunter2 --verbose", "hunter2", "--verbose"),
    ("-pX mysql", "mysql -uroot -phunter2 scout", "hunter2", "mysql -uroot -p"),
    ("short --password=abc", "tool --password=abc next", "abc", "next"),
    ("nvapi bare", "key is nvapi-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9", "nvapi-Ab1", "key is"),
    ("nvapi docker login -p", "docker login nvcr.io -u '$oauthtoken' -p nvapi-Ab1Cd2Ef3Gh4Ij5Kl6",
     "nvapi-Ab1", "docker login nvcr.io"),
    ("docker login -p plain", "docker login -u ops -p plainpass123 registry.local",
     "plainpass123", "registry.local"),
    ("github_pat", "github_pat_11AAAAAAA0abcdefghijklmnop_qrstuv", "github_pat_11", ""),
    ("ghp", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abc", ""),
    ("glpat", "CI_TOKEN glpat-abcdefghijklmnopqrst used", "glpat-abc", "used"),
    ("bare JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlc2lnbmF0dXJl",
     "eyJzdWIi", ""),
    ("xapp", "xapp-1-A0123456789-1234567890123-abcdef0123", "xapp-1-A01", ""),
    ("xoxb", "xoxb-1234567890-abcdefghijkl", "xoxb-1234", ""),
    ("slack webhook", "url=https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXX",
     "T0000/B0000", "hooks.slack.com"),
    ("AIza", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA123", ""),
    ("*_KEY=", "export WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567",
     "0123456789abcdef", "export WANDB_API_KEY="),
    ("*_PASS=", "DB_PASS=s3cr3t ./migrate", "s3cr3t", "./migrate"),
    ("AWS json", '{"AccessKeyId": "ASIAIOSFODNN7EXAMPLE", "SecretAccessKey": '
     '"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}', "wJalrXUtnFEMI", '"SecretAccessKey": "'),
    ("ASIA key id", "key id ASIAIOSFODNN7EXAMPLE here", "ASIAIOSFODNN7EXAMPLE", "here"),
    ("AKIA key id", "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", ""),
    ("docker config auth", '{"auths": {"nvcr.io": {"auth": "JG9hdXRodG9rZW46bnZhcGk="}}}',
     "JG9hdXRodG9rZW46", '"nvcr.io"'),
    ("PGP private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0xYzABCDEF\n=abcd\n"
     "-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF0xYzABCDEF", "PGP PRIVATE KEY BLOCK"),
    ("PEM private key", f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----",
     "MIIEvQIBADAN", "RSA PRIVATE KEY"),
    ("PEM cut at BEGIN", f"[... 900 characters omitted ...]\n{PEM_BODY}-----END PRIVATE KEY-----",
     "MzEfYyjiWA4R4", "characters omitted"),
    ("PEM cut at END", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}", "MIIEvQIBADAN", ""),
    ("$6$ shadow", "root:$6$Zx9salt$AbCdEfGhIjKlMnOpQrStUvWxYz0123456789./:19000:0:99999:7:::",
     "AbCdEfGhIjKl", "root:"),
    ("yescrypt", "ops:$y$j9T$abcdefgh$ABCDEFGHIJKLMNOPQRSTUV0123456789abcdefg:19000",
     "ABCDEFGHIJ", "ops:"),
    ("Anthropic", "ANTHROPIC_API_KEY sk-ant-api03-abcdefghijklmnop", "sk-ant-api03", ""),
    ("OpenAI", "sk-proj-abcdefghijklmnopqrstuvwxyz012345", "sk-proj-abc", ""),
    ("HF", "token hf_abcdefghijklmnopqrstuvwx", "hf_abcdef", ""),
    ("bearer", "Authorization: Bearer abcdefghijklmnop", "abcdefghijklmnop", "Authorization"),
    ("basic auth header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpw", ""),
    ("password in URL", "git clone https://ops:hunter2@git.example.com/x", "hunter2",
     "git.example.com"),
    ("curl -u", "curl -u admin:hunter2 http://x", "hunter2", "curl -u admin:"),
    ("netrc", "machine api.wandb.ai\n  login ops\n  password 0123456789abcdef", "0123456789abcdef",
     "machine api.wandb.ai"),
    ("sshpass", "sshpass -p hunter2 ssh spark-a", "hunter2", "ssh spark-a"),
    ("GCP service account key", '{"type": "service_account", "private_key": "-----BEGIN PRIVATE '
     'KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n"}',
     "MIIEvQIBADAN", '"type": "service_account"'),
]  # fmt: skip


def scout_redact(monkeypatch, tmp_path, text: str, capsys) -> str:
    monkeypatch.setenv("SCOUT_HOME", str(tmp_path))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert main(["redact"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(("text", "secret", "kept"), [f[1:] for f in FORMS],
                         ids=[f[0] for f in FORMS])  # fmt: skip
def test_scout_redact_masks_the_form(monkeypatch, tmp_path, capsys, text, secret, kept):
    out = scout_redact(monkeypatch, tmp_path, text, capsys)
    assert secret not in out and MASK in out
    assert kept in out


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens=4096 tokenizer=Qwen/Qwen3.5 --max-num-batched-tokens 8192",
        "git rev-parse HEAD → 0123456789abcdef0123456789abcdef01234567",
        "docker login --password-stdin -u ops nvcr.io",
        "monkey=1 author=ops keyboard=us",
        "nvidia-smi --query-gpu=memory.total --format=csv",
    ],
)
def test_ordinary_text_is_left_alone(monkeypatch, tmp_path, capsys, text):
    assert scout_redact(monkeypatch, tmp_path, text, capsys) == text


def test_the_session_api_key_is_masked_whatever_its_shape(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plain-key-without-a-prefix")
    monkeypatch.setenv("SCOUT_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "stdin", io.StringIO("sent plain-key-without-a-prefix\n"))
    assert main(["redact"]) == 0
    assert capsys.readouterr().out == f"sent {MASK}\n"


def test_secret_looking_keys_are_masked_in_data():
    data = {"env": {"HF_TOKEN": "anything", "CUDA_VISIBLE_DEVICES": "0"}, "max_tokens": 64}
    assert Redactor().data(data) == {
        "env": {"HF_TOKEN": MASK, "CUDA_VISIBLE_DEVICES": "0"},
        "max_tokens": 64,
    }


@pytest.mark.parametrize(
    "kind",
    ["RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY",
     "ENCRYPTED PRIVATE KEY"],
)  # fmt: skip
def test_scout_redact_keeps_every_line_after_a_private_key(monkeypatch, tmp_path, capsys, kind):
    """Issue 24.3: the block is masked and nothing after it is lost."""
    text = f"before\n-----BEGIN {kind}-----\nMIIE\n-----END {kind}-----\nafter 1\nafter 2\n"
    out = scout_redact(monkeypatch, tmp_path, text, capsys)
    assert out == f"before\n-----BEGIN {kind}----- {MASK} -----END {kind}-----\nafter 1\nafter 2\n"
