"""Key admin over REST (admin keys, the caller's own tenant): create, list, revoke; and `whoami`, what
any key learns about itself (the console shows only what the key may do; the server enforces anyway).

The secret is in the create answer only; a listing shows each key's prefix, name, scopes, binding,
expiry and last use, never a secret or a hash. Revocation reaches every warm function within the
key cache's minute (services/tenancy/keys.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response
from pydantic import BaseModel, ConfigDict, Field

from mnemo.domain.models import NamespaceId, Principal
from mnemo.domain.timestamps import IsoTimestamp
from mnemo.ports import ApiKeyRecord
from mnemo.surfaces.facade import ServiceFacade
from mnemo.surfaces.rest.api import principal, services
from mnemo.surfaces.rest.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES)
Caller = Annotated[Principal, Depends(principal)]
Services = Annotated[ServiceFacade, Depends(services)]


class CreateKey(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, description="What the key is for (shown in lists and logs).")
    scopes: list[str] = Field(min_length=1, max_length=4, description="memory:read, memory:write, memory:delete, admin.")
    user_id: NamespaceId | None = Field(default=None, description="Bind the key to this user's memories only.")
    expires_at: IsoTimestamp | None = Field(default=None, description="After this instant the key is refused.")


class KeyView(BaseModel):
    prefix: str
    name: str
    scopes: list[str]
    user_id: str | None
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None

    @classmethod
    def of(cls, record: ApiKeyRecord) -> KeyView:
        return cls.model_validate(record.model_dump(exclude={"key_hash", "tenant"}))


class CreatedKeyView(KeyView):
    secret: str = Field(description="Shown once: only its hash is kept.")


@router.post("/keys", status_code=201, response_model=CreatedKeyView)
def create_key(body: CreateKey, caller: Caller, container: Services) -> CreatedKeyView:
    created = container.keys.issue(caller, body.name, body.scopes, user_id=body.user_id, expires_at=body.expires_at)
    return CreatedKeyView(secret=created.secret, **KeyView.of(created.record).model_dump())


@router.get("/keys", response_model=list[KeyView])
def list_keys(caller: Caller, container: Services) -> list[KeyView]:
    return [KeyView.of(record) for record in container.keys.listing(caller)]


@router.delete("/keys/{prefix}", response_model=KeyView)
def revoke_key(prefix: Annotated[str, Path(max_length=64)], caller: Caller, container: Services) -> KeyView:
    return KeyView.of(container.keys.withdraw(caller, prefix))


class WhoAmI(BaseModel):
    tenant: str
    key_prefix: str = Field(description="The key's public prefix (never the secret).")
    name: str
    permissions: list[str] = Field(description="Scopes the key holds; admin implies every other.")
    user_id: str | None = Field(description="The user the key is bound to; null: any user of the tenant.")


@router.get("/whoami", response_model=WhoAmI)
def whoami(caller: Caller, response: Response) -> WhoAmI:
    """The calling key: tenant, prefix, name, permissions and bound user (any valid key)."""
    response.headers["cache-control"] = "no-store"
    return WhoAmI(tenant=caller.tenant, key_prefix=caller.key_prefix, name=caller.name,
                  permissions=sorted(p.value for p in caller.permissions), user_id=caller.user_id)
