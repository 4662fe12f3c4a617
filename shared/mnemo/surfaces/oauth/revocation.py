"""`POST /revoke` (RFC 7009): the MCP SDK's `RevocationHandler` with its request model fixed.

mcp 2.3.0 declares `client_secret: str | None` without a default, which pydantic reads as required:
a public client's post (`token` and `client_id`, as RFC 7009 §2.1 and our metadata's
`revocation_endpoint_auth_methods_supported: ["none"]` allow) was a 400 and its grant lived on
(issue 53; modelcontextprotocol/python-sdk#3508). Drop this module once the pinned SDK defaults it.

Client authentication stays the SDK's `ClientAuthenticator`: a client registered with a secret must
still send it. A token is revoked only for the client it was issued to; every other outcome is the
same empty 200 (RFC 7009 §2.2), so the endpoint neither ends nor reveals another client's tokens."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial

from mcp.server.auth.errors import stringify_pydantic_error
from mcp.server.auth.handlers.revoke import RevocationErrorResponse, RevocationHandler, RevocationRequest
from mcp.server.auth.json_response import PydanticJSONResponse
from mcp.server.auth.middleware.client_auth import AuthenticationError
from mcp.server.auth.provider import AccessToken, RefreshToken
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response


class PublicRevocationRequest(RevocationRequest):
    client_secret: str | None = None  # a public client (auth method `none`) has none to send


class MnemoRevocationHandler(RevocationHandler):
    """The SDK's `handle`, step for step, validating with `PublicRevocationRequest`."""

    async def handle(self, request: Request) -> Response:
        try:
            client = await self.client_authenticator.authenticate_request(request)
        except AuthenticationError as exc:
            return PydanticJSONResponse(status_code=401, content=RevocationErrorResponse(
                error="unauthorized_client", error_description=exc.message))
        try:
            asked = PublicRevocationRequest.model_validate(dict(await request.form()))
        except ValidationError as exc:
            return PydanticJSONResponse(status_code=400, content=RevocationErrorResponse(
                error="invalid_request", error_description=stringify_pydantic_error(exc)))
        # The access-token loader finds any client's token; the ownership check below decides.
        loaders: list[Callable[[str], Awaitable[AccessToken | RefreshToken | None]]] = [
            self.provider.load_access_token, partial(self.provider.load_refresh_token, client)]
        if asked.token_type_hint == "refresh_token":
            loaders.reverse()
        token: AccessToken | RefreshToken | None = None
        for load in loaders:
            token = await load(asked.token)
            if token is not None:
                break
        if token is not None and token.client_id == client.client_id:
            await self.provider.revoke_token(token)
        return Response(status_code=200, headers={"cache-control": "no-store", "pragma": "no-cache"})
