"""Secrets by class: each class is a generator of forms (names × styles × values × contexts), and
every form must come out with the secret gone and the text around it byte for byte.

The forms are built here from the shapes of each class, never from the redactor's own tables:
a vendor's prefix and body alphabet, a secret word and a naming style, a login command and its
positional token, a URL scheme and a password alphabet, a base64 wrapping of a secret document.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Iterator

import pytest

from agent.safety.redact import MASK, Redactor

RNG_SEED = 25
ALNUM = string.ascii_letters + string.digits


def token(rng: random.Random, n: int = 32, alphabet: str = ALNUM) -> str:
    """A random secret that has letters and digits, as real keys do."""
    body = "".join(rng.choice(alphabet) for _ in range(n - 2))
    return rng.choice(string.ascii_letters) + body + rng.choice(string.digits)


def checked(text: str, secret: str, *, kept: tuple[str, ...] = ()) -> None:
    out = Redactor().text(text)
    assert secret not in out, f"secret left in {out!r}"
    assert MASK in out
    for part in kept:
        assert part in out, f"{part!r} lost from {out!r}"


# --- private keys: every kind, every line-break style, text after kept byte for byte -----------
PEM_KINDS = ["RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY",
             "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"]  # fmt: skip
BREAKS = ["\n", "\r\n", "\\n"]


def pem_forms() -> Iterator[tuple[str, str, str, str]]:
    rng = random.Random(RNG_SEED)
    for kind in PEM_KINDS:
        for br in BREAKS:
            lines = [token(rng, 64, ALNUM + "+/") for _ in range(3)] + [token(rng, 20) + "=="]
            headers = ["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,0A1B2C3D"]
            body = br.join((headers if kind == "RSA PRIVATE KEY" else []) + lines)
            block = f"-----BEGIN {kind}-----{br}{body}{br}-----END {kind}-----"
            before, after = f"before{br}", f"{br}after 1{br}after 2{br}"
            yield kind, before + block + after, lines[1], after


@pytest.mark.parametrize(("kind", "text", "secret", "after"), list(pem_forms()),
                         ids=lambda v: v if isinstance(v, str) and len(v) < 24 else "")  # fmt: skip
def test_a_private_key_is_masked_and_the_text_after_it_kept(kind, text, secret, after):
    out = Redactor().text(text)
    assert secret not in out and kind in out
    assert out.startswith(text.split("-----BEGIN")[0]) and out.endswith(after)


@pytest.mark.parametrize("kind", PEM_KINDS)
def test_a_key_cut_short_masks_its_body_and_keeps_the_rest(kind):
    rng = random.Random(kind)
    lines = [token(rng, 64, ALNUM + "+/") for _ in range(4)]
    cut_end = f"-----BEGIN {kind}-----\n" + "\n".join(lines) + "\n[... 3000 characters omitted]\nok"
    out = Redactor().text(cut_end)
    assert not any(line in out for line in lines)
    assert out.endswith("\n[... 3000 characters omitted]\nok")
    cut_begin = (
        "[... 900 characters omitted ...]\n" + "\n".join(lines) + f"\n-----END {kind}-----\n$ "
    )
    out = Redactor().text(cut_begin)
    assert not any(line in out for line in lines)
    assert out.startswith("[... 900 characters omitted ...]\n") and out.endswith(f"{kind}-----\n$ ")


# --- tokens known by their vendor's prefix ------------------------------------------------------
# (prefix, body alphabet, body length) as each vendor documents its keys.
VENDORS = [
    ("whsec_", ALNUM, 32), ("tskey-auth-", ALNUM + "-", 40), ("tskey-api-", ALNUM, 30),
    ("hvs.", ALNUM + "_-", 90), ("dckr_pat_", ALNUM + "_-", 27), ("gsk_", ALNUM, 52),
    ("SG.", ALNUM, 22), ("hf_", ALNUM, 34), ("nvapi-", ALNUM + "_-", 64), ("ghp_", ALNUM, 36),
    ("github_pat_", ALNUM + "_", 82), ("glpat-", ALNUM + "-_", 20), ("sk-ant-api03-", ALNUM, 90),
    ("sk-proj-", ALNUM + "_-", 120), ("xoxb-", string.digits + "-", 40), ("npm_", ALNUM, 36),
    ("pypi-", ALNUM + "_-", 80), ("AKIA", string.ascii_uppercase + string.digits, 16),
    ("AIza", ALNUM + "_-", 35), ("ya29.", ALNUM + "_-", 100), ("xai-", ALNUM, 80),
    ("r8_", ALNUM, 37), ("sk_live_", ALNUM, 24), ("glsa_", ALNUM + "_", 40),
]  # fmt: skip
CONTEXTS = ["{}", "token is {}\n", "export SOME_VAR={}", '{{"value": "{}"}}', "x={};y",
            "curl -H 'X-Custom: {}' https://api", "  - {}\n  - next"]  # fmt: skip


def vendor_forms() -> Iterator[tuple[str, str]]:
    rng = random.Random(RNG_SEED)
    for prefix, alphabet, length in VENDORS:
        body = "".join(rng.choice(alphabet) for _ in range(length - 1)) + rng.choice(string.digits)
        if prefix == "SG.":
            body += "." + token(rng, 43)
        for context in CONTEXTS:
            yield context.format(prefix + body), prefix + body


@pytest.mark.parametrize(("text", "secret"), list(vendor_forms()))
def test_a_vendor_token_is_masked_in_any_context(text, secret):
    checked(text, secret)


# --- names that mean secrets, in every naming and assignment style ------------------------------
SECRET_WORDS = ["password", "passwd", "passphrase", "secret", "token", "api_key", "access_key",
                "secret_key", "private_key", "auth_token", "credentials", "client_secret",
                "session_token", "account_key", "authkey"]  # fmt: skip
PREFIXES = ["", "db", "my_app", "aws", "hf", "pg", "wandb", "ngc"]


def spellings(prefix: str, word: str) -> Iterator[str]:
    words = [w for w in (*prefix.split("_"), *word.split("_")) if w]
    yield "_".join(words).upper()
    yield "-".join(words)
    yield words[0] + "".join(w.title() for w in words[1:])
    if prefix == "pg" and word == "password":
        yield "PGPASSWORD"


STYLES = ["<{n}>{v}</{n}>", "{n}={v}", "export {n}={v}", "{n}: {v}", '"{n}": "{v}"', "{n}='{v}'",
          "{n} = {v}", "--{n} {v}", "--{n}={v}", '\\"{n}\\": \\"{v}\\"',
          '  {n}: "{v}"\n  next: 1']  # fmt: skip


def named_forms() -> Iterator[tuple[str, str, str]]:
    rng = random.Random(RNG_SEED)
    values = [lambda: token(rng, 24), lambda: "hunter2", lambda: "p@ss/w:rd!" + token(rng, 4)]
    for word in SECRET_WORDS:
        for prefix in PREFIXES:
            for name in spellings(prefix, word):
                style = rng.choice(STYLES)
                value = rng.choice(values)()
                yield style.format(n=name, v=value), value, name


@pytest.mark.parametrize(("text", "secret", "name"), list(named_forms()))
def test_a_value_under_a_secret_name_is_masked(text, secret, name):
    checked(text, secret, kept=(name,))


# --- positional secrets: logins and `set NAME VALUE` --------------------------------------------
LOGINS = ["wandb login {t}", "wandb login --relogin {t}", "vault login {t}",
          "vault login -no-print {t}", "cf auth ops {t}", "npm login {t}"]  # fmt: skip
SETTERS = ["aws configure set aws_session_token {t}", "aws configure set aws_secret_access_key {t}",
           "npm config set //registry.npmjs.org/:_authToken {t}", "vastai set api-key {t}",
           "yarn config set npmAuthToken {t}", "ngrok config add-authtoken {t}",
           "git config --global github.token {t}", "tailscale up --authkey {t}",
           "tailscale up --auth-key={t}", "redis-cli -h db AUTH {t}"]  # fmt: skip


def positional_forms() -> Iterator[tuple[str, str]]:
    rng = random.Random(RNG_SEED)
    for form in LOGINS + SETTERS:
        for n in (24, 40, 64):
            secret = token(rng, n)
            yield form.format(t=secret) + " && echo done", secret


@pytest.mark.parametrize(("text", "secret"), list(positional_forms()))
def test_a_positional_secret_of_a_login_or_setter_is_masked(text, secret):
    checked(text, secret, kept=("&& echo done",))


# --- URL userinfo and connection strings --------------------------------------------------------
SCHEMES = ["postgres", "postgresql", "mysql", "redis", "rediss", "mongodb+srv", "amqp", "https"]
USERS = ["", "ops", "svc.account"]


def url_forms() -> Iterator[tuple[str, str, str]]:
    rng = random.Random(RNG_SEED)
    for scheme in SCHEMES:
        for user in USERS:
            password = token(rng, 10, ALNUM + "/+=!%") + "/" + token(rng, 6)
            yield (
                f"DATABASE_URL={scheme}://{user}:{password}@db.internal:5432/app",
                password,
                ("@db.internal:5432/app"),
            )
    for _ in range(5):
        key = base64.b64encode(rng.randbytes(64)).decode()
        yield (
            f"DefaultEndpointsProtocol=https;AccountName=st1;AccountKey={key};EndpointSuffix="
            "core.windows.net",
            key,
            "EndpointSuffix=core.windows.net",
        )
        sig = token(rng, 43).replace("a", "%2B") + "%3D"
        yield f"https://st1.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={sig}&se=1", sig, "&se=1"
        yield f"Server=db;Database=app;Uid=sa;Pwd={token(rng, 12)};", "Pwd=", ";"


@pytest.mark.parametrize(("text", "secret", "kept"), list(url_forms()))
def test_url_passwords_and_connection_string_keys_are_masked(text, secret, kept):
    if secret == "Pwd=":  # the password itself is random: check what follows the name
        out = Redactor().text(text)
        assert f"Pwd={MASK};" in out
        return
    checked(text, secret, kept=(kept,))


# --- base64 that wraps a secret -----------------------------------------------------------------
def wrapped_forms() -> Iterator[tuple[str, str]]:
    rng = random.Random(RNG_SEED)
    for registry in ("nvcr.io", "ghcr.io", "https://index.docker.io/v1/"):
        auth = base64.b64encode(f"$oauthtoken:{token(rng, 40)}".encode()).decode()
        config = json.dumps({"auths": {registry: {"auth": auth}}})
        blob = base64.b64encode(config.encode()).decode()
        yield f"data:\n  .dockerconfigjson: {blob}\ntype: kubernetes.io/dockerconfigjson", blob
        yield f'{{"data": {{"config.json": "{blob}"}}}}', blob
        wrapped = "\n".join(blob[i : i + 76] for i in range(0, len(blob), 76))
        yield f"$ base64 ~/.docker/config.json\n{wrapped}\n$ ", wrapped.split("\n")[1]
    for kind in ("RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"):
        pem = f"-----BEGIN {kind}-----\n{token(rng, 64)}\n-----END {kind}-----\n"
        blob = base64.b64encode(pem.encode()).decode()
        yield f"users:\n- name: admin\n  user:\n    client-key-data: {blob}\n", blob
        yield f"    tls.key: {blob}\n    tls.crt: LS0t\n", blob


@pytest.mark.parametrize(("text", "secret"), list(wrapped_forms()))
def test_base64_that_wraps_a_secret_is_masked(text, secret):
    checked(text, secret)


# --- programs that take a password their own way ------------------------------------------------
PROGRAM_FORMS = ["mysql -u root -p{t} app", "mysql -u root -p'{t}' app", "sshpass -p {t} ssh x",
                 "ldapsearch -x -D cn=admin -w {t} -b dc=x", "smbclient //srv/s -U ops%{t}",
                 "redis-cli -h db -a {t} ping", "docker login -u ops -p {t} nvcr.io",
                 "az login --service-principal -u app -p {t} --tenant t",
                 "curl -u ops:{t} https://x", "curl --user :{t} https://x",
                 "htpasswd -bc /etc/nginx/htpasswd ops {t}",
                 "openssl pkcs12 -export -passout pass:{t} -in c.pem",
                 "machine api.example.com login ops password {t}",
                 "kubectl create secret generic x --from-literal=password={t}",
                 "helm upgrade x --set auth.password={t} --set image.tag=1"]  # fmt: skip


def program_forms():
    rng = random.Random(RNG_SEED)
    for form in PROGRAM_FORMS:
        for secret in (token(rng, 12), "hunter2x", token(rng, 10, ALNUM + "!@#")):
            yield form.format(t=secret), secret


@pytest.mark.parametrize(("text", "secret"), list(program_forms()))
def test_a_password_argument_of_a_program_is_masked(text, secret):
    checked(text, secret)


# --- names that hold a secret with a suffix, multi-word values, cookies, JSON Web Keys ----------
def held_forms():
    rng = random.Random(RNG_SEED)
    for name in ("SECRET_KEY_BASE", "api_token_value", "client-key-data", "DB_PASSWORD_B64",
                 "signing_key_material"):  # fmt: skip
        secret = token(rng, 32)
        yield f"{name}={secret}", secret
    for lead in ("", "  ", "- "):
        words = " ".join(token(rng, 8) for _ in range(3))
        yield f"{lead}password: {words}\nnext: 1", words.split()[-1]
        yield f"{lead}db_password = {words}  # set by ops", words.split()[-1]
    for _ in range(3):
        a, b = token(rng, 20), token(rng, 20)
        yield f"Cookie: sessionid={a}; csrftoken={b}", b
        yield f"Set-Cookie: sid={a}; Path=/; HttpOnly", a
        d = token(rng, 40, ALNUM + "_-")
        yield json.dumps({"kty": "RSA", "e": "AQAB", "n": token(rng, 60), "d": d}), d


@pytest.mark.parametrize(("text", "secret"), list(held_forms()))
def test_secrets_held_under_suffixed_names_in_lines_cookies_and_keys(text, secret):
    checked(text, secret)
