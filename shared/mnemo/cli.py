"""Admin CLI: `python -m mnemo.cli keys create|list|revoke`, `tenants set|show`, `usage`, `status`, `export`, `import`,
`oauth connect-code|grants|revoke-grant` (cli_oauth.py),
against local or AWS tables.

Uses the normal AWS credential chain; point it at a deployment with --keys-table/--memories-table
(the stack Outputs) or the MNEMO_* environment variables.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from mnemo.errors import MnemoError

if TYPE_CHECKING:
    from mnemo.bootstrap import Container


def _limit(value: str) -> int | str:
    if value == "unlimited":
        return value
    if not value.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number or 'unlimited', not {value!r}")
    return int(value)


def _tenants(services: Container, args: argparse.Namespace) -> None:
    from mnemo.domain.tenancy import Counter, TenantStatus

    if getattr(args, "action", "show") == "set":
        given = {c: getattr(args, c.value) for c in Counter if getattr(args, c.value) is not None}
        limits = {c: (None if v == "unlimited" else int(v)) for c, v in given.items()}
        services.meter.configure(args.tenant, limits, TenantStatus(args.status) if args.status else None)
    print(json.dumps(services.meter.usage(args.tenant).model_dump(mode="json"), indent=2))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mnemo", description="Administer a Mnemo deployment.")
    parser.add_argument("--keys-table", help="API keys table name (default: $MNEMO_KEYS_TABLE)")
    parser.add_argument("--memories-table", help="memories table name (default: $MNEMO_MEMORIES_TABLE)")
    parser.add_argument("--queue-url", help="enrichment queue URL (default: $MNEMO_QUEUE_URL)")
    parser.add_argument("--dlq-url", help="dead-letter queue URL (default: $MNEMO_DLQ_URL)")
    parser.add_argument("--oauth-table", help="OAuth table name (default: $MNEMO_OAUTH_TABLE)")
    commands = parser.add_subparsers(dest="command", required=True)
    from mnemo import cli_oauth

    cli_oauth.add_commands(commands)

    keys = commands.add_parser("keys", help="manage API keys").add_subparsers(dest="action", required=True)
    create = keys.add_parser("create", help="create a key; the secret is printed once")
    create.add_argument("--tenant", required=True)
    create.add_argument("--name", required=True)
    create.add_argument("--scopes", default="memory:read,memory:write,memory:delete", help="comma-separated")
    listing = keys.add_parser("list", help="list a tenant's keys (never their secrets)")
    listing.add_argument("--tenant", required=True)
    revoke = keys.add_parser("revoke", help="revoke a key by its prefix")
    revoke.add_argument("--tenant", required=True)
    revoke.add_argument("prefix")

    tenants = commands.add_parser("tenants", help="manage tenants' plans").add_subparsers(dest="action", required=True)
    configure = tenants.add_parser("set", help="set monthly limits and status; an omitted limit is unchanged")
    configure.add_argument("--tenant", required=True)
    for counter in ("writes", "retrievals", "intents"):
        configure.add_argument(f"--{counter}", type=_limit, help="a monthly limit (a whole number) or 'unlimited'")
    configure.add_argument("--status", choices=["active", "past_due", "suspended"])
    show = tenants.add_parser("show", help="a tenant's plan and this month's usage")
    show.add_argument("--tenant", required=True)
    usage = commands.add_parser("usage", help="a tenant's usage this month")
    usage.add_argument("--tenant", required=True)

    status = commands.add_parser("status", help="enrichment status of a tenant")
    status.add_argument("--tenant", required=True)
    redrive = commands.add_parser("redrive", help="move DLQ messages back to the queue; failed memories turn pending")
    redrive.add_argument("--limit", type=int, default=1000)
    exporting = commands.add_parser("export", help="write a user's memories and recorded facts as JSON Lines (docs/import-export.md)")
    exporting.add_argument("--tenant", required=True)
    exporting.add_argument("--user-id", default="default")
    exporting.add_argument("--out", type=argparse.FileType("w", encoding="utf-8"), default=sys.stdout)
    importing = commands.add_parser("import", help="import JSON Lines or JSON (an export, mem0's, r3's) into a user")
    importing.add_argument("--tenant", required=True)
    importing.add_argument("--user-id", default="default")
    importing.add_argument("file", type=argparse.FileType("r", encoding="utf-8"))
    commands.add_parser("reconcile", help="re-enqueue memories whose enrichment task was lost")
    commands.add_parser("reindex", help="create the current index versions, re-enrich every memory, re-index every fact, list every job for its user")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from mnemo import cli_portability as portability
    from mnemo.bootstrap import Container
    from mnemo.settings import MnemoSettings

    # Flags override the MNEMO_* environment for this run only; the process environment is left alone.
    flags = ("keys_table", "memories_table", "queue_url", "dlq_url", "oauth_table")
    services = Container(MnemoSettings(**{name: getattr(args, name) for name in flags if getattr(args, name)}))
    try:
        if args.command == "keys" and args.action == "create":
            created = services.keys.create(args.tenant, args.name, [s.strip() for s in args.scopes.split(",") if s.strip()])
            print(f"created key {created.record.prefix} for tenant {args.tenant} ({', '.join(created.record.scopes)})")
            print(f"secret (shown once, store it now): {created.secret}")
        elif args.command == "keys" and args.action == "list":
            for record in services.keys.list(args.tenant):
                state = f"revoked {record.revoked_at:%Y-%m-%d}" if record.revoked_at else "active"
                print(f"{record.prefix}\t{record.name}\t{','.join(record.scopes)}\t{record.created_at:%Y-%m-%d}\t{state}")
        elif args.command == "keys" and args.action == "revoke":
            record = services.keys.revoke(args.tenant, args.prefix)
            print(f"revoked {record.prefix} ({record.name})")
        elif args.command in ("tenants", "usage"):
            _tenants(services, args)
        elif args.command == "status":
            print(json.dumps(services.status.for_tenant(args.tenant, operator=True).model_dump(), indent=2))
        elif args.command == "redrive":
            print(json.dumps(services.recovery.redrive(args.limit).model_dump()))
        elif args.command == "reindex":
            services.index().ensure_index()
            services.fact_index().ensure_index()
            # memories: one re-enrichment task each (the worker re-embeds and re-derives); facts:
            # indexed here from DynamoDB, recorded ones included (docs/facts.md, "Where facts live");
            # jobs: each listed for its user, so the user's erasure finds older ones (docs/erasure.md)
            print(json.dumps({"enqueued": services.recovery.reindex(), "facts_indexed": services.recovery.reindex_facts(),
                              "jobs_listed": services.recovery.list_jobs()}))
        elif args.command == "export":
            portability.export(services, args.tenant, args.user_id, args.out)
        elif args.command == "import":
            report = portability.import_(services, args.tenant, args.user_id, args.file)
            print(json.dumps({"imported": len(report.imported), "facts_imported": len(report.facts_imported),
                              "skipped": len(report.skipped), "failed": len(report.failed),
                              "problems": [f"item {f.index}: {f.reason}" for f in report.failed]}))
        elif args.command == "oauth":
            from mnemo import cli_oauth

            cli_oauth.run(services, args)
        elif args.command == "reconcile":
            print(json.dumps({"requeued": services.recovery.requeue_stale()}))
    except MnemoError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
