"""Nothing else: ordinary output goes through `scout redact` byte for byte.

The set is real captures (tests/fixtures: nvidia-smi, ibstat, docker, vLLM, SGLang, Ray, rsync,
hf download) and generated documents of the kinds that carry secret-looking names without
secrets: tokenizer configs (eos_token, pad_token), engine argument dumps (`hf_token=None`),
Kubernetes manifests (`key: nvidia.com/gpu`, `secretKeyRef`), kubeconfigs holding only
certificates, environment dumps (`PWD=`, `SSH_AUTH_SOCK=`), command lines naming key *files*.
"""

from __future__ import annotations

import base64
import errno
import io
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.faces.cli import main
from agent.faces.failures import describe_os_error
from agent.safety.redact import Redactor
from tests.support.scout_cli import SCOUT

FIXTURES = Path(__file__).parent.parent / "fixtures"
CAPTURES = sorted(p for folder in ("recon", "jobs") for p in (FIXTURES / folder).iterdir())


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_a_real_capture_is_left_alone(path):
    text = path.read_text()
    assert Redactor().text(text) == text


SPECIAL_TOKENS = {
    "qwen": ("<|im_start|>", "<|im_end|>", "<|endoftext|>"),
    "llama": ("<|begin_of_text|>", "<|eot_id|>", "<|finetune_right_pad_id|>"),
    "mistral": ("<s>", "</s>", "<unk>"),
    "bert": ("[CLS]", "[SEP]", "[PAD]"),
    "gemma": ("<bos>", "<eos>", "<pad>"),
}


def tokenizer_configs() -> Iterator[str]:
    for family, (bos, eos, pad) in SPECIAL_TOKENS.items():
        config = {
            "add_bos_token": False, "bos_token": bos, "eos_token": eos, "pad_token": pad,
            "unk_token": None, "cls_token": bos, "sep_token": eos, "mask_token": pad,
            "additional_special_tokens": [bos, eos], "model_max_length": 131072,
            "tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False,
            "added_tokens_decoder": {"151643": {"content": eos, "special": True}},
            "chat_template": "{% for m in messages %}" + eos + "{% endfor %}", "name": family,
        }  # fmt: skip
        yield json.dumps(config, indent=2)
        yield json.dumps(config)
        yield json.dumps({"eos_token_id": [151645, 151643], "pad_token_id": 151643,
                          "bos_token_id": 151643, "max_new_tokens": 2048})  # fmt: skip
        yield f"eos_token: {eos}\npad_token: {pad}\n"


def engine_dumps() -> Iterator[str]:
    yield ("INFO 05-02 args: Namespace(model='Qwen/Qwen3.5-122B-A10B-FP8', tokenizer=None, "
           "hf_token=None, api_key=None, ssl_keyfile=None, ssl_certfile=None, "
           "max_num_batched_tokens=8192, skip_tokenizer_init=False, tokenizer_mode='auto', "
           "revision=None, token=None, enable_auto_tool_choice=False)")  # fmt: skip
    yield "non-default args: {'model': 'Qwen/Qwen3-8B', 'hf_token': None, 'api_key': None}"
    yield "ServerArgs(model_path='x', tokenizer_path='x', api_key=None, hf_token=None, tp_size=2)"
    yield "engine: hf_token=True max_tokens=4096 --max-num-batched-tokens 8192 tokenizer=Qwen/Q"


def kubernetes_documents(seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    cert = "-----BEGIN CERTIFICATE-----\nMIIDBTCCAe2gAwIBAgIIUxMf\n-----END CERTIFICATE-----\n"
    cert_data = base64.b64encode(cert.encode()).decode()
    for _ in range(4):
        name = rng.choice(["vllm", "sglang", "ray-head", "bench"]) + f"-{rng.randint(0, 99)}"
        yield f"""apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  nodeSelector:
    nvidia.com/gpu.product: NVIDIA-H200
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  - key: node-role.kubernetes.io/control-plane
    operator: Exists
  imagePullSecrets:
  - name: ngc-{name}
  automountServiceAccountToken: false
  containers:
  - name: engine
    env:
    - name: HF_TOKEN
      valueFrom:
        secretKeyRef:
          name: hf-{name}
          key: token
    - name: PASSWORD
      valueFrom:
        secretKeyRef: {{name: db, key: password}}
    resources:
      limits:
        nvidia.com/gpu: {rng.randint(1, 8)}
"""
        yield f"""apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {cert_data}
    server: https://10.0.{rng.randint(0, 9)}.1:6443
  name: {name}
users:
- name: {name}-admin
  user:
    client-certificate: /etc/kubernetes/pki/{name}.crt
    client-key: /etc/kubernetes/pki/{name}.key
"""
        yield f"secrets:\n  token:\n  password:\nnext_key: {name}\n"


ORDINARY_ENV = ["PWD=/home/aurora/work", "OLDPWD=/home/aurora", "HOME=/home/aurora",
                "SSH_AUTH_SOCK=/tmp/ssh-XXXXabcd/agent.1234", "TOKENIZERS_PARALLELISM=false",
                "HF_TOKEN_PATH=/home/aurora/.cache/huggingface/token", "GIT_ASKPASS=/usr/bin/ask",
                "HF_HUB_ENABLE_HF_TRANSFER=1", "KUBECONFIG=/home/aurora/.kube/config",
                "AWS_SHARED_CREDENTIALS_FILE=/home/aurora/.aws/credentials",
                "PASSWORD_STORE_DIR=/x",
                "SSH_KEY_PATH=/home/aurora/.ssh/id_ed25519", "NCCL_IB_HCA=mlx5_0,mlx5_1",
                "CUDA_VISIBLE_DEVICES=0,1", "KEYTIMEOUT=1", "SECRETS_DIR=/run/secrets",
                "HF_TOKEN=", "API_KEY=${API_KEY}", "WANDB_API_KEY=$WANDB_API_KEY",
                "LS_COLORS=rs=0:di=01;34:ln=01;36:mh=00:pi=40;33"]  # fmt: skip


def env_dumps(seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    for _ in range(10):
        yield "\n".join(rng.sample(ORDINARY_ENV, 8)) + "\n"


COMMAND_LINES = [
    "curl --cert ./client.crt --key ./client.key https://10.0.0.1:6443/healthz",
    "openssl s_client -connect x:443 -key /etc/ssl/private/server.key",
    "vllm serve x --ssl-keyfile /etc/ssl/key.pem --ssl-certfile /etc/ssl/cert.pem",
    "ssh -i ~/.ssh/id_ed25519 aurora@spark-a",
    "docker login --password-stdin -u ops nvcr.io",
    "docker login nvcr.io",
    "git rev-parse HEAD → 0123456789abcdef0123456789abcdef01234567",
    "local address: LID 0000 QPN 0x0129 PSN 0x57279d RKey 0x184300 VAddr 0x00ec99bedad000",
    "sha256:4f9d1c1f1b64e3e24f1f0a1d2b8e0d7e8a9c3b2a1f0e9d8c7b6a5f4e3d2c1b0a",
    "Signature   : RSA/SHA256, Tue 01 Oct 2024 10:00:00 AM UTC, Key ID 199e2f91fd431d51",
    "Invalid token provided; token expired for user aurora",
    "Bearer authentication is required for this endpoint",
    "https://registry:5000/v2/library/vllm@sha256:4f9d1c1f1b64e3e2",
    "pip install git+https://github.com/vllm-project/vllm@v0.11.0",
    "kubectl get secret hf-token -o jsonpath='{.data.token}'",
    "ibv_devinfo: max_mr_size 0xffffffffffffffff, page_size_cap 0xfffff000",
    "serviceAccountToken: {expirationSeconds: 3607}",
    "existingSecret: hf-secret",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "Failed password for invalid user admin from 1.2.3.4 port 22 ssh2",
    "Accepted publickey for ops from 10.0.0.1 port 5555 ssh2: ED25519 SHA256:4f9d1c1f1b64e3e2",
    "The key fingerprint is:\nSHA256:abcdEFGH1234ijklMNOP5678 root@spark-a",
    "spark-a ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHkz1k0d2d5Hn4t1xMRp6qA8f1g0y8lq3Yk0n3cJ1cXJ",
    "net.ipv4.tcp_fastopen_key = 00000000-00000000-00000000-00000000",
    "Subject Public Key Info:\n    Public-Key: (2048 bit)\n    keyid:AB:CD:EF:01",
    "keyring 24.3.1\ntokenizers 0.20.3\nsafetensors 0.4.5",
    "WARNING! Your password will be stored unencrypted in /root/.docker/config.json.",
    "wandb: Appending key for api.wandb.ai to your netrc file: /root/.netrc",
    "Token is valid (permission: write).\nYour token has been saved to /root/.cache/hf/token",
    "Run `hf auth login` to log in.\nLogin successful.",
    "hf-token              Opaque                                1      5d",
    "auth_method: oauth\nauth_url: https://x/auth\nKeyringMode=private",
    "max_tokens: 512\ntokens_per_second: 41.3\nbypass=true compass=north",
    "Authorization header missing",
    "<key>CFBundleIdentifier</key><string>com.example.Scout</string>",
]


def ordinary_texts() -> Iterator[str]:
    yield from tokenizer_configs()
    yield from engine_dumps()
    for seed in range(3):
        yield from kubernetes_documents(seed)
        yield from env_dumps(seed)
    yield from COMMAND_LINES


@pytest.mark.parametrize("text", list(ordinary_texts()), ids=lambda t: t.split("\n")[0][:40])
def test_ordinary_text_is_left_alone(text):
    assert Redactor().text(text) == text


@pytest.mark.parametrize("config", list(tokenizer_configs())[:1])
def test_tokenizer_configs_are_left_alone_as_data_too(config):
    data = json.loads(config)
    assert Redactor().data(data) == data


def test_scout_redact_prints_ordinary_output_unchanged(monkeypatch, tmp_path, capsys):
    text = "".join(f"{t}\n" for t in ordinary_texts())
    monkeypatch.setenv("SCOUT_HOME", str(tmp_path))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert main(["redact"]) == 0
    assert capsys.readouterr().out == text


def empty_secret_lines():
    """A secret name with no value on its line: nothing after the line's end may be masked."""
    for name in ("password", "token", "HF_TOKEN", "client_secret", "api-key", "auth", "key"):
        for sep in (":", "=", " =", ": "):
            for following in ("next_key: value1", "  nested: x9Y8z7W6v5U4", "- item_ab12cd34"):
                yield f"{name}{sep}\n{following}\n"


@pytest.mark.parametrize("text", list(empty_secret_lines()))
def test_a_mask_never_crosses_a_line(text):
    assert Redactor().text(text) == text


MESSAGE_NAMES = ("password", "Password", "token", "HF_TOKEN", "passphrase", "secret", "auth", "key")
MESSAGE_ERRNOS = (errno.EACCES, errno.ENOENT, errno.EPERM, errno.ENOSPC, errno.ECONNREFUSED)


def error_messages() -> Iterator[str]:
    """What failed, a colon, the C library's words for why: programs' messages and Scout's own
    (`describe_os_error`), after a name that announces a secret."""
    for code in MESSAGE_ERRNOS:
        said = os.strerror(code)
        for name in MESSAGE_NAMES:
            yield f"{name}: {said}"
            yield f"cannot read the {name}: {said}"
            yield f"aurora@spark-a's {name}: {said}, please try again."
            yield f"{name}: {said} (publickey,password)."
            yield f'{{"error": "open {name}: {said}"}}'
            yield describe_os_error(OSError(code, said, f"/home/aurora/.scout/{name}"))


def test_scout_redact_leaves_error_messages_after_secret_names_alone(tmp_path):
    text = "".join(f"{line}\n" for line in error_messages())
    done = subprocess.run(
        [SCOUT, "redact"],
        input=text,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "SCOUT_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == text


@pytest.mark.parametrize("name", MESSAGE_NAMES)
@pytest.mark.parametrize(
    "secret", ["hunter2hunter2", "Permission-denied-2024", "Permission deniedX9"]
)
def test_a_secret_that_starts_like_an_error_message_is_still_masked(name, secret):
    assert secret.split()[0] not in Redactor().text(f"{name}: {secret}\n").removeprefix(name)
