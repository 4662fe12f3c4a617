"""`python -m mnemo.cli oauth connect-code|grants|revoke-grant` (docs/oauth.md): what an operator does
for a person connecting an app, acting as the tenant's admin."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemo.bootstrap import Container


def add_commands(commands: argparse._SubParsersAction) -> None:
    oauth = commands.add_parser("oauth", help="MCP authorization: connect codes and grants").add_subparsers(
        dest="action", required=True)
    mint = oauth.add_parser("connect-code", help="mint a one-time connect code (printed once) for a user")
    mint.add_argument("--tenant", required=True)
    mint.add_argument("--user-id", default="default")
    mint.add_argument("--minutes", type=int, default=10)
    mint.add_argument("--scopes", default="memory:read,memory:write,memory:delete", help="comma-separated")
    grants = oauth.add_parser("grants", help="list a user's grants (connected apps)")
    grants.add_argument("--tenant", required=True)
    grants.add_argument("--user-id", default="default")
    revoke = oauth.add_parser("revoke-grant", help="revoke a grant: every token under it stops working")
    revoke.add_argument("--tenant", required=True)
    revoke.add_argument("--user-id", default="default")
    revoke.add_argument("grant_id")


def run(services: Container, args: argparse.Namespace) -> None:
    from mnemo.domain.models import Permission, Principal

    operator = Principal(tenant=args.tenant, key_prefix="cli", name="operator", permissions=frozenset({Permission.ADMIN}))
    if args.action == "connect-code":
        scopes = [s.strip() for s in args.scopes.split(",") if s.strip()]
        minted = services.connect_codes.mint(operator, args.user_id, minutes=args.minutes, scopes=scopes)
        print(f"connect code for user {minted.record.user_id} of tenant {args.tenant} ({', '.join(minted.record.scopes)}),"
              f" valid until {minted.record.expires_at:%Y-%m-%d %H:%M} UTC, single use:")
        print(minted.code)
    elif args.action == "grants":
        for grant in services.oauth_grants.grants(operator, args.user_id):
            state = f"revoked {grant.revoked_at:%Y-%m-%d}" if grant.revoked_at else "active"
            print(json.dumps({"grant_id": grant.grant_id, "client": grant.client_name, "resource": grant.resource,
                              "scopes": grant.scopes, "via": grant.via, "created_at": f"{grant.created_at:%Y-%m-%d}",
                              "state": state}))
    elif args.action == "revoke-grant":
        grant = services.oauth_grants.revoke_grant(operator, args.user_id, args.grant_id)
        print(f"revoked grant {grant.grant_id} ({grant.client_name or grant.client_id})")
