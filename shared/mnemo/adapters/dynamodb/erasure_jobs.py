"""`ErasureJobStore` and `ErasureMarks` on the memories table (docs/erasure.md has the items).

| item | `pk` | `sk` |
|---|---|---|
| erasure job | `T#<tenant>#JOB#<job id>` | `JOB` (the job as JSON, `revision` for the conditions) |
| erased row | `T#<tenant>#JOB#<job id>` | `R#<memory id>` (one per memory the job erased) |
| tombstone | `T#<tenant>#ERASED#<memory id>` | `ERASED` (`erased_at`, `expires_at` for TTL) |
| user fence | `T#<tenant>#USERERASE#<sha256 of the user id>` | `FENCE` (`latest_job`, `requested_at`, `running` set, `expires_at`) |
| tenant's job listing | `T#<tenant>#JOBS` | `<requested_at>#<job id>` (`job_id`, `job_kind`: `user` for an erasure): every job, newest first (`GET /v1/jobs`) |

The tenant leads every key, so a job id of another tenant addresses nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from mnemo.adapters.dynamodb.codec import all_items, deserialize, serialize, ts
from mnemo.adapters.dynamodb.table import DynamoDbTable
from mnemo.domain.erasure import ErasureJob, UserFence

JOB_SK = "JOB"
ERASED_ROW_PREFIX = "R#"
TOMBSTONE_SK = "ERASED"
FENCE_SK = "FENCE"
# Longer than any enrichment can still be running or be redelivered (3 receives x 720 s visibility).
TOMBSTONE_LIFETIME = timedelta(days=30)


def job_pk(tenant: str, job_id: str) -> str:
    return f"T#{tenant}#JOB#{job_id}"


TENANT_JOBS = "JOBS"


def tenant_jobs_pk(tenant: str) -> str:
    """Tenant ids hold no '#', so this key meets no `T#<tenant>#JOB#<id>` partition."""
    return f"T#{tenant}#{TENANT_JOBS}"


def tenant_listing(tenant: str, job_id: str, kind: str, requested_at: datetime) -> dict[str, Any]:
    """A job's row in its tenant's listing: its id and kind only (no user id, no text), sorted by time."""
    return {"pk": tenant_jobs_pk(tenant), "sk": f"{ts(requested_at)}#{job_id}", "job_id": job_id, "job_kind": kind}


def tombstone_pk(tenant: str, memory_id: str) -> str:
    return f"T#{tenant}#ERASED#{memory_id}"


class _JobsTable(DynamoDbTable):
    """The job items of the memories table: a failed condition is a concurrent writer (the newer state wins)."""

    conflict = "erasure job changed concurrently; the newer state wins"


class DynamoDbErasureMarks(_JobsTable):
    def mark(self, tenant: str, memory_id: str, at: datetime) -> None:
        item = {"pk": tombstone_pk(tenant, memory_id), "sk": TOMBSTONE_SK, "erased_at": ts(at),
                "expires_at": int((at + TOMBSTONE_LIFETIME).timestamp())}
        self._call("put_item", TableName=self._table, Item=serialize(item))

    def erased(self, tenant: str, memory_id: str) -> bool:
        key = serialize({"pk": tombstone_pk(tenant, memory_id), "sk": TOMBSTONE_SK})
        return "Item" in self._call("get_item", TableName=self._table, Key=key, ConsistentRead=True)

    def erased_among(self, tenant: str, memory_ids: Sequence[str]) -> set[str]:
        unique = list(dict.fromkeys(memory_ids))
        keys = [serialize({"pk": tombstone_pk(tenant, i), "sk": TOMBSTONE_SK}) for i in unique]
        erased = {deserialize(item)["pk"] for item in self._batch_get(keys, projection="pk")}
        return {i for i in unique if tombstone_pk(tenant, i) in erased}


def fence_pk(tenant: str, user_id: str) -> str:
    """Keyed by a hash of the user id: the fence outlives the job by 30 days, and the job's record drops
    the person's id when it ends, so the fence does not keep it in clear either."""
    return f"T#{tenant}#USERERASE#{hashlib.sha256(user_id.encode()).hexdigest()}"


class DynamoDbErasureFences(_JobsTable):
    """`running` is a string set of '<requested_at>|<job id>': ADD and DELETE change it atomically
    whatever else runs, and DynamoDB drops the attribute when its last element goes."""

    def raise_fence(self, tenant: str, user_id: str, job_id: str, at: datetime) -> None:
        self._call("update_item", TableName=self._table, Key=serialize({"pk": fence_pk(tenant, user_id), "sk": FENCE_SK}),
                   UpdateExpression="SET latest_job = :j, requested_at = :t, expires_at = :e ADD running :r",
                   ExpressionAttributeValues=serialize({":j": job_id, ":t": ts(at), ":r": {f"{ts(at)}|{job_id}"},
                                                        ":e": int((at + TOMBSTONE_LIFETIME).timestamp())}))

    def lower(self, tenant: str, user_id: str, job_id: str, at: datetime, *, earlier_too: bool) -> None:
        running = self._item(tenant, user_id).get("running", set())
        mine = next((entry for entry in running if entry.endswith(f"|{job_id}")), None)
        if mine is None:
            return
        ended = {e for e in running if e <= mine} if earlier_too else {mine}
        self._call("update_item", TableName=self._table, Key=serialize({"pk": fence_pk(tenant, user_id), "sk": FENCE_SK}),
                   UpdateExpression="SET ended_at = :t, expires_at = :e DELETE running :r",
                   ExpressionAttributeValues=serialize({":t": ts(at), ":r": ended,
                                                        ":e": int((at + TOMBSTONE_LIFETIME).timestamp())}))

    def read(self, tenant: str, user_id: str) -> UserFence:
        item = self._item(tenant, user_id)
        return UserFence(latest_job=item.get("latest_job"), requested_at=item.get("requested_at"),
                         running=sorted(item.get("running", set())))

    def _item(self, tenant: str, user_id: str) -> dict[str, Any]:
        key = serialize({"pk": fence_pk(tenant, user_id), "sk": FENCE_SK})
        item = self._call("get_item", TableName=self._table, Key=key, ConsistentRead=True).get("Item")
        return deserialize(item) if item else {}


class DynamoDbErasureJobStore(_JobsTable):
    def create(self, job: ErasureJob) -> None:
        # Listed first: a job that can be read is listed (a listed id with no job is skipped by the listing).
        self._call("put_item", TableName=self._table, Item=serialize(tenant_listing(job.tenant, job.job_id, job.kind, job.requested_at)))
        self._call("put_item", TableName=self._table, Item=serialize(_item(job)), ConditionExpression="attribute_not_exists(pk)")

    def get(self, tenant: str, job_id: str, *, erased_ids: bool = True) -> ErasureJob | None:
        key = serialize({"pk": job_pk(tenant, job_id), "sk": JOB_SK})
        item = self._call("get_item", TableName=self._table, Key=key, ConsistentRead=True).get("Item")
        if item is None:
            return None
        job = ErasureJob.model_validate_json(deserialize(item)["job"])
        if not erased_ids:
            return job
        rows = all_items(self._call, "query", TableName=self._table, ProjectionExpression="sk", ConsistentRead=True,
                         KeyConditionExpression="pk = :pk AND begins_with(sk, :r)",
                         ExpressionAttributeValues=serialize({":pk": job_pk(tenant, job_id), ":r": ERASED_ROW_PREFIX}))
        return job.model_copy(update={"memory_ids": [row["sk"][len(ERASED_ROW_PREFIX):] for row in rows]})

    def save(self, job: ErasureJob) -> ErasureJob:
        written = job.model_copy(update={"revision": job.revision + 1})
        self._call("put_item", **self._conditional_put(job, written))
        return written

    def record_erased(self, job: ErasureJob, memory_id: str) -> ErasureJob:
        written = job.model_copy(update={"revision": job.revision + 1})
        row = {"pk": job_pk(job.tenant, job.job_id), "sk": ERASED_ROW_PREFIX + memory_id, "memory_id": memory_id}
        self._call("transact_write_items", TransactItems=[
            {"Put": self._conditional_put(job, written)},
            {"Put": {"TableName": self._table, "Item": serialize(row), "ConditionExpression": "attribute_not_exists(pk)"}},
        ])
        return written

    def _conditional_put(self, job: ErasureJob, written: ErasureJob) -> dict[str, Any]:
        return {"TableName": self._table, "Item": serialize(_item(written)), "ConditionExpression": "revision = :r",
                "ExpressionAttributeValues": serialize({":r": job.revision})}


def _item(job: ErasureJob) -> dict[str, Any]:
    """The job as JSON (its ids never include erased text); the rows, not the item, list what it erased,
    so a user with many memories never outgrows DynamoDB's 400 KB item limit."""
    return {"pk": job_pk(job.tenant, job.job_id), "sk": JOB_SK, "revision": job.revision,
            "status": job.status.value, "job": job.model_dump_json(exclude={"memory_ids"})}
