"""Private keys as blocks: the key material masked, every byte around it kept.

A block runs from its BEGIN line to the END line *of the same kind* (RSA, EC, DSA, OPENSSH,
ENCRYPTED, plain PKCS#8, PGP, OpenVPN static keys), with real or JSON-escaped (`\\n`) line
breaks, or spaces where a tool flattened it. Output cut short by truncation leaves half a block:
after a BEGIN with no END only the lines shaped like key material (base64, `Proc-Type:` headers)
are masked; before an END with no BEGIN, the base64 lines that lead up to it. PuTTY key files
carry theirs after `Private-Lines: N`.
"""

from __future__ import annotations

import re

from agent.safety.secret_names import MASK

_LABEL = r"(?P<label>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?|OpenVPN Static key V1)"
_BREAK = r"(?:\r?\n|\\r\\n|\\n)"
_BODY_LINE = (  # a base64 line (a short one only when padded), or a header such as DEK-Info
    r"(?:[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z0-9+/]{0,15}={1,2}"
    r"|[A-Za-z][A-Za-z0-9-]*+:[ \t][^\r\n\\]*+)?"
)
_LINE_END = r'(?=\r?\n|\\r|\\n|\Z|")'

COMPLETE = re.compile(
    rf"-----BEGIN {_LABEL}-----(?:(?!-----BEGIN )[\s\S])*?-----END (?P=label)-----"
)
CUT_AT_END = re.compile(
    rf"(?P<begin>-----BEGIN {_LABEL}-----)(?! {re.escape(MASK)})"
    rf"(?P<body>(?:{_BREAK}[ \t]*{_BODY_LINE}{_LINE_END})+)"
)
CUT_AT_BEGIN = re.compile(
    rf"(?m)(?:^|(?<=\\n))(?P<body>(?:[ \t]*[A-Za-z0-9+/=]{{16,}}{_BREAK})+"
    rf"[ \t]*[A-Za-z0-9+/=]*)(?P<sep>{_BREAK}?[ \t]*)(?=-----END (?:[A-Z0-9]+ )*PRIVATE KEY)"
)
PUTTY = re.compile(r"(Private-Lines: \d+)((?:\r?\n[A-Za-z0-9+/=]+)+)")


def mask_blocks(text: str) -> str:
    """Every private-key block in `text` masked; what surrounds it stays as it was."""
    if "PRIVATE KEY" not in text and "Static key" not in text and "Private-Lines" not in text:
        return text
    text = COMPLETE.sub(
        lambda m: f"-----BEGIN {m['label']}----- {MASK} -----END {m['label']}-----", text
    )
    text = CUT_AT_END.sub(lambda m: f"{m['begin']}{_first_break(m['body'])}{MASK}", text)
    if "-----END" in text:
        text = CUT_AT_BEGIN.sub(lambda m: f"{MASK}{m['sep']}", text)
    return PUTTY.sub(lambda m: f"{m[1]}{_first_break(m[2])}{MASK}", text)


def _first_break(body: str) -> str:
    found = re.match(_BREAK, body)
    return found.group() if found else "\n"
