"""The MCP SDK's `TokenStorage` kept in memory: what an OAuth client test hands `OAuthClientProvider`
(tests/integration/oauth/test_oauth_flow.py in process, tests/e2e/test_oauth_local.py over the network)."""

from __future__ import annotations

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class TokenMemory:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info
