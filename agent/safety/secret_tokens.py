"""Tokens known by their vendor's prefix: masked wherever they appear, whatever name they carry.

Each entry is (prefix, body): a token is the prefix at a word start followed by a body of at
least that many token characters. Prefixes are those vendors document for their keys (so a
secret scanner can find them); the body lengths keep ordinary words (`sk-learn`, `hf_hub`,
`SG.1`) out.
"""

from __future__ import annotations

import re

_B64URL = r"[A-Za-z0-9_\-]"
_ALNUM = r"[A-Za-z0-9]"

# (prefix regex, body regex). Grouped by vendor; the comment names the vendor.
VENDOR_TOKENS: list[tuple[str, str]] = [
    (r"sk-ant-", rf"{_B64URL}{{8,}}"),  # Anthropic
    (r"sk-", rf"{_B64URL}{{20,}}"),  # OpenAI, DeepSeek, OpenRouter (sk-, sk-proj-, sk-or-v1-)
    (r"(?:sk|rk|pk)_(?:live|test)_", rf"{_ALNUM}{{16,}}"),  # Stripe keys
    (r"whsec_", rf"{_ALNUM}{{16,}}"),  # Stripe (and Svix) webhook signing secrets
    (r"hf_", rf"{_ALNUM}{{16,}}"),  # Hugging Face user tokens
    (r"api_org_", rf"{_ALNUM}{{16,}}"),  # Hugging Face organisation tokens
    (r"nvapi-", rf"{_B64URL}{{16,}}"),  # NVIDIA NGC / build.nvidia.com
    (r"gh[pousr]_", rf"{_ALNUM}{{20,}}"),  # GitHub
    (r"github_pat_", r"[A-Za-z0-9_]{20,}"),  # GitHub fine-grained
    (r"gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|cd|rit|ffct)-", rf"{_B64URL}{{16,}}"),  # GitLab
    (r"(?:AKIA|ASIA|AROA|AIDA|ANPA|AGPA|AIPA|ANVA|ASCA)", r"[A-Z0-9]{16}\b"),  # AWS key ids
    (r"AIza", rf"{_B64URL}{{35}}"),  # Google API keys
    (r"ya29\.", rf"{_B64URL}{{20,}}"),  # Google OAuth access tokens
    (r"GOCSPX-", rf"{_B64URL}{{20,}}"),  # Google OAuth client secrets
    (r"xox[abeprsc]-", r"[A-Za-z0-9\-]{10,}"),  # Slack
    (r"xapp-", r"[A-Za-z0-9\-]{10,}"),  # Slack app-level
    (r"npm_", rf"{_ALNUM}{{30,}}"),  # npm
    (r"pypi-", rf"{_B64URL}{{40,}}"),  # PyPI
    (r"tskey-(?:auth|api|client|scim|webhook)?-?", r"[A-Za-z0-9\-]{10,}"),  # Tailscale
    (r"hv[sbr]\.", rf"{_B64URL}{{20,}}"),  # HashiCorp Vault (service, batch, recovery)
    (r"s\.", rf"{_ALNUM}{{24}}\b"),  # HashiCorp Vault, before 1.10
    (r"dckr_(?:pat|oat)_", rf"{_B64URL}{{16,}}"),  # Docker Hub
    (r"gsk_", rf"{_ALNUM}{{20,}}"),  # Groq
    (r"SG\.", rf"{_B64URL}{{16,}}\.{_B64URL}{{16,}}"),  # SendGrid
    (r"xai-", rf"{_ALNUM}{{20,}}"),  # xAI
    (r"r8_", rf"{_ALNUM}{{20,}}"),  # Replicate
    (r"pplx-", rf"{_ALNUM}{{20,}}"),  # Perplexity
    (r"tvly-", rf"{_B64URL}{{16,}}"),  # Tavily
    (r"csk-", rf"{_ALNUM}{{20,}}"),  # Cerebras
    (r"fw_", rf"{_ALNUM}{{20,}}"),  # Fireworks
    (r"lsv2_(?:pt|sk)_", r"[A-Za-z0-9_]{20,}"),  # LangSmith
    (r"pcsk_", r"[A-Za-z0-9_]{20,}"),  # Pinecone
    (r"sbp_", rf"{_ALNUM}{{20,}}"),  # Supabase
    (r"dop_v1_|doo_v1_|dor_v1_", r"[a-f0-9]{32,}"),  # DigitalOcean
    (r"dapi", r"[a-f0-9]{32}\b"),  # Databricks
    (r"glsa_|glc_", r"[A-Za-z0-9_=]{20,}"),  # Grafana
    (r"sntry[su]_", r"[A-Za-z0-9_=+/]{20,}"),  # Sentry
    (r"PMAK-", r"[A-Za-z0-9\-]{20,}"),  # Postman
    (r"HRKU-", r"[A-Za-z0-9_\-]{20,}"),  # Heroku
    (r"ATATT", r"[A-Za-z0-9_\-=]{20,}"),  # Atlassian
    (r"ops_", r"eyJ[A-Za-z0-9_\-]{30,}"),  # 1Password service accounts
    (r"dp\.(?:pt|st|sa|ct|scim|audit)\.", rf"{_ALNUM}{{20,}}"),  # Doppler
    (r"pul-", r"[a-f0-9]{40}"),  # Pulumi
    (r"lin_api_", rf"{_ALNUM}{{20,}}"),  # Linear
    (r"shp(?:at|ss|ca|pa)_", r"[a-fA-F0-9]{32}"),  # Shopify
    (r"AGE-SECRET-KEY-1", r"[0-9A-Z]{50,}"),  # age
    (r"wandb_v1_", r"[A-Za-z0-9_]{20,}"),  # Weights & Biases (new keys)
    (r"", r"[A-Za-z0-9_\-]{14,}\.atlasv1\.[A-Za-z0-9_\-]{20,}"),  # Terraform Cloud
    (r"(?:bot)?", r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}"),  # Telegram bots
    (r"[MN]", r"[A-Za-z0-9]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}"),  # Discord bots
    (r"key-", r"[0-9a-f]{32}\b"),  # Mailgun
    (r"SK", r"[0-9a-f]{32}\b"),  # Twilio API keys
    (r"sq0(?:atp|csp)-", r"[A-Za-z0-9_\-]{22,}"),  # Square
    (r"eyJ", rf"{_B64URL}{{8,}}\.{_B64URL}{{8,}}\.{_B64URL}{{8,}}"),  # JWT
    # crypt(3) hashes: $6$ (SHA-512), $y$ (yescrypt), $2b$ (bcrypt), argon2
    (r"\$(?:1|2[abxy]?|5|6|y|gy|7|sha1|md5|argon2(?:id|i|d))\$", r"[A-Za-z0-9./+=$,\-]{8,}"),
]

_PLAIN = [f"{prefix}{body}" for prefix, body in VENDOR_TOKENS if not prefix.startswith(r"\$")]
_CRYPT = [f"{prefix}{body}" for prefix, body in VENDOR_TOKENS if prefix.startswith(r"\$")]
# One lookbehind for all prefixes (a word start): thirty times faster than one per prefix.
TOKEN = re.compile(rf"(?<![A-Za-z0-9_\-.])(?:{'|'.join(_PLAIN)})|{'|'.join(_CRYPT)}")
