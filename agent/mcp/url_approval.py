"""URL-mode elicitation for a pending approval: the client is shown Scout's approval page.

Where a client declares URL-mode elicitation and Scout has an approval page, a call that waits
for a person returns an `InputRequiredResult` instead of a bare `approval_pending`: one URL
request (the page for that approval, where the person sees what would run and decides through
Scout's own approvers) and a sealed `requestState` (agent/mcp/sealed_state.py). The client's
retry carries the state back; the server opens it, once, and runs the same call with the
approval id it names, so Scout's approver hands over the decision if a person made one. The
client's answer to the URL request ("accept": it showed the page) is never read as consent; a
retry before the person decided gets the plain `approval_pending`, to come back with the id.
"""

from __future__ import annotations

from typing import Any

from mcp import types
from mcp.server.context import ServerRequestContext

from agent.mcp.bridge import APPROVAL_ARG, CallOutcome
from agent.mcp.sealed_state import RequestStateSeal, call_digest

#: the key of the one input request Scout makes
REQUEST_KEY = "scout_approval"
#: the client echoes the state at once (the SDK retries within about two seconds)
STATE_TTL_S = 120.0


def declares_url_mode(ctx: ServerRequestContext[Any, Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and elicitation.url is not None


class UrlApprovals:
    def __init__(self, page: str, principal: str) -> None:
        """`page` is the approval page's address with `{id}` where the approval's id goes."""
        self.page = page
        self.principal = principal
        self.seal = RequestStateSeal(ttl_s=STATE_TTL_S)

    def ask(
        self, name: str, arguments: dict[str, Any], outcome: CallOutcome
    ) -> types.InputRequiredResult:
        """Point the client at the page for the approval `outcome` waits on."""
        approval_id = outcome.fields["approval_id"]
        message = (
            f"Scout's operator must decide approval {approval_id} ({outcome.fields['tool']}: "
            f"{outcome.fields['why']}). The page shows what would run; accepting here "
            "approves nothing."
        )
        request = types.ElicitRequest(
            params=types.ElicitRequestURLParams(
                message=message, url=self.page.replace("{id}", approval_id)
            )
        )
        state = self.seal.seal(
            approval_id=approval_id,
            digest=call_digest(name, _without_id(arguments)),
            principal=self.principal,
        )
        return types.InputRequiredResult(input_requests={REQUEST_KEY: request}, request_state=state)

    def redeem(self, name: str, arguments: dict[str, Any], state: str) -> dict[str, Any]:
        """The call's input with the approval id its state names (StateRefused if none)."""
        plain = _without_id(arguments)
        digest = call_digest(name, plain)
        approval_id = self.seal.open(state, digest=digest, principal=self.principal)
        return {**plain, APPROVAL_ARG: approval_id}


def _without_id(arguments: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in arguments.items() if k != APPROVAL_ARG}
