"""Which environment variable names hold secrets, so their values are masked wherever env is shown.

Both `docker inspect`'s parsed env and docker_ctl's displayed command lines use this.
"""

from __future__ import annotations

import re

SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH", re.IGNORECASE
)
MASK = "***"


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))
