"""OAuth admin over REST (admin keys, the caller's own tenant; docs/oauth.md): mint a one-time
connect code for a user, list a user's grants (connected apps), revoke one."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from mnemo.domain.models import NamespaceId, Principal
from mnemo.domain.oauth_records import Grant
from mnemo.errors import NotFoundError
from mnemo.services.oauth.connect_codes import DEFAULT_MINUTES, MAX_MINUTES
from mnemo.surfaces.facade import ServiceFacade
from mnemo.surfaces.rest.api import principal, services
from mnemo.surfaces.rest.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/v1/oauth", responses=ERROR_RESPONSES, tags=["oauth"])
Caller = Annotated[Principal, Depends(principal)]
Services = Annotated[ServiceFacade, Depends(services)]
User = Annotated[NamespaceId, Query(description="Whose grants.")]


def _enabled(container: ServiceFacade) -> None:
    if not container.settings.oauth_enabled:
        raise NotFoundError("OAuth is off on this deployment (MNEMO_OAUTH_ENABLED): connect apps with an API key")


class MintCode(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: NamespaceId = Field(default="default", description="Whose memories the connected app reads and writes.")
    minutes: StrictInt = Field(default=DEFAULT_MINUTES, ge=1, le=MAX_MINUTES, description="How long the code stays valid.")
    scopes: list[str] | None = Field(default=None, max_length=3, description="At most memory:read, memory:write, memory:delete (default: all three).")


class MintedCodeView(BaseModel):
    code: str = Field(description="Shown once: type it on the consent page. Single use.")
    user_id: str
    scopes: list[str]
    expires_at: datetime


class GrantView(BaseModel):
    grant_id: str
    user_id: str
    client_id: str
    client_name: str
    scopes: list[str]
    resource: str
    via: str
    approved_by: str
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None

    @classmethod
    def of(cls, grant: Grant) -> GrantView:
        return cls(approved_by=grant.key_prefix, **grant.model_dump(exclude={"key_hash", "tenant", "key_prefix"}))


@router.post("/connect-codes", status_code=201, response_model=MintedCodeView)
def mint_code(caller: Caller, container: Services, body: MintCode | None = None) -> MintedCodeView:
    _enabled(container)
    body = body or MintCode()  # no body: a code for user `default`, every scope, 10 minutes
    minted = container.connect_codes.mint(caller, body.user_id, minutes=body.minutes, scopes=body.scopes)
    return MintedCodeView(code=minted.code, user_id=minted.record.user_id, scopes=minted.record.scopes,
                          expires_at=minted.record.expires_at)


@router.get("/grants", response_model=list[GrantView])
def list_grants(caller: Caller, container: Services, user_id: User = "default") -> list[GrantView]:
    _enabled(container)
    return [GrantView.of(g) for g in container.oauth_grants.grants(caller, user_id)]


@router.delete("/grants/{grant_id}", response_model=GrantView)
def revoke_grant(grant_id: Annotated[str, Path(max_length=64)], caller: Caller, container: Services,
                 user_id: User = "default") -> GrantView:
    _enabled(container)
    return GrantView.of(container.oauth_grants.revoke_grant(caller, user_id, grant_id))
