"""`JobStore` on the memories table, beside the erasure jobs (docs/import-export.md "Jobs").

| item | `pk` | `sk` |
|---|---|---|
| job | `T#<tenant>#JOB#<job id>` | `JOB` (`job_kind`, the job as JSON, `revision` for the conditions) |
| job part | `T#<tenant>#JOB#<job id>` | `P#<00000>` (one chunk of the job's input as JSON, under 400 KB; `expires_at`: TTL, 30 days) |
| user's job listing | `T#<tenant>#U#<user>#JOBS` | `<job id>` (`job_id`): written before the job, so the user's erasure finds every job of the user with one Query |
| tenant's job listing | `T#<tenant>#JOBS` | `<requested_at>#<job id>` (`job_id`, `job_kind`): every job of the tenant, erasures too, newest first |

The tenant leads every key, so a job id of another tenant addresses nothing. An erasure job's item
has no `job_kind`: `get` answers None for it and the erasure store reads it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from mnemo.adapters.dynamodb.codec import all_items, deserialize, serialize
from mnemo.adapters.dynamodb.erasure_jobs import JOB_SK, job_pk, tenant_jobs_pk, tenant_listing
from mnemo.adapters.dynamodb.table import DynamoDbTable
from mnemo.domain.jobs import Job
from mnemo.errors import DependencyError
from mnemo.ports import JobListing

PART_PREFIX = "P#"
# Parts hold what the caller sent; DynamoDB's TTL removes them long after any job has finished.
PART_LIFETIME = timedelta(days=30)


def part_sk(index: int) -> str:
    return f"{PART_PREFIX}{index:05d}"


def listing_pk(tenant: str, user_id: str) -> str:
    """User ids hold no '#', so this key meets no entity posting (`...#U#<user>#ENT#...`) or fact listing."""
    return f"T#{tenant}#U#{user_id}#JOBS"


class DynamoDbJobStore(DynamoDbTable):
    conflict = "erasure job changed concurrently; the newer state wins"  # the wording it always had

    def create(self, job: Job, parts: Sequence[list[Any]]) -> None:
        # The listing, then the parts, the job last: a job that can be read is listed and has its parts.
        self._call("put_item", TableName=self._table, Item=serialize(_listing(job)))
        self._call("put_item", TableName=self._table, Item=serialize(_tenant_listing(job)))
        self.write_parts(job.tenant, job.job_id, parts)
        self._call("put_item", TableName=self._table, Item=serialize(_item(job)), ConditionExpression="attribute_not_exists(pk)")

    def write_parts(self, tenant: str, job_id: str, parts: Sequence[list[Any]], first: int = 0) -> None:
        pk, expires_at = job_pk(tenant, job_id), int((datetime.now(UTC) + PART_LIFETIME).timestamp())
        requests = [{"PutRequest": {"Item": serialize({"pk": pk, "sk": part_sk(first + i), "items": json.dumps(part),
                                                       "expires_at": expires_at})}}
                    for i, part in enumerate(parts)]
        self._batch_write(requests)

    def get(self, tenant: str, job_id: str) -> Job | None:
        key = serialize({"pk": job_pk(tenant, job_id), "sk": JOB_SK})
        item = self._call("get_item", TableName=self._table, Key=key, ConsistentRead=True).get("Item")
        if item is None or "job_kind" not in item:
            return None
        return Job.model_validate_json(deserialize(item)["job"])

    def part(self, tenant: str, job_id: str, index: int) -> list[object]:
        key = serialize({"pk": job_pk(tenant, job_id), "sk": part_sk(index)})
        item = self._call("get_item", TableName=self._table, Key=key, ConsistentRead=True).get("Item")
        if item is None:
            raise DependencyError(f"job {job_id}: part {index} is missing")
        items: list[object] = json.loads(deserialize(item)["items"])
        return items

    def drop_parts(self, tenant: str, job_id: str, count: int) -> None:
        pk = job_pk(tenant, job_id)
        requests = [{"DeleteRequest": {"Key": serialize({"pk": pk, "sk": part_sk(i)})}} for i in range(count)]
        self._batch_write(requests)

    def of_user(self, tenant: str, user_id: str) -> list[str]:
        rows = all_items(self._call, "query", TableName=self._table, ConsistentRead=True, ProjectionExpression="job_id",
                         KeyConditionExpression="pk = :pk", ExpressionAttributeValues=serialize({":pk": listing_pk(tenant, user_id)}))
        return [row["job_id"] for row in rows]

    def erase(self, tenant: str, job_id: str, user_id: str, *, whole: bool) -> int:
        pk = job_pk(tenant, job_id)
        job = self.get(tenant, job_id) if whole else None  # its request time keys its tenant listing row
        keys = all_items(self._call, "query", TableName=self._table, ConsistentRead=True, ProjectionExpression="pk, sk",
                         KeyConditionExpression="pk = :pk", ExpressionAttributeValues=serialize({":pk": pk}))
        doomed = [{"pk": pk, "sk": k["sk"]} for k in keys if whole or k["sk"].startswith(PART_PREFIX)]
        if whole:  # the job's record is part of `keys`; its listing item goes with it
            doomed.append({"pk": listing_pk(tenant, user_id), "sk": job_id})
            if job is not None:
                doomed.append({k: v for k, v in _tenant_listing(job).items() if k in ("pk", "sk")})
        self._batch_write([{"DeleteRequest": {"Key": serialize(key)}} for key in doomed])
        return len(doomed)

    def list_every_job(self) -> int:
        # Scan: the admin reindex only (jobs created before the listing existed); the same keys and body each run.
        rows = all_items(self._call, "scan", TableName=self._table, ProjectionExpression="job",
                         FilterExpression="sk = :j AND attribute_exists(job_kind)", ExpressionAttributeValues=serialize({":j": JOB_SK}))
        jobs = [Job.model_validate_json(row["job"]) for row in rows]
        self._batch_write([{"PutRequest": {"Item": serialize(item)}} for j in jobs for item in (_listing(j), _tenant_listing(j))])
        return len(jobs)

    def listing(self, tenant: str, kinds: Sequence[str], *, limit: int, after: str | None = None) -> JobListing:
        values: dict[str, Any] = {":pk": tenant_jobs_pk(tenant), **{f":k{i}": kind for i, kind in enumerate(kinds)}}
        query: dict[str, Any] = {
            "TableName": self._table, "KeyConditionExpression": "pk = :pk", "ScanIndexForward": False, "Limit": limit,
            "FilterExpression": f"job_kind IN ({', '.join(f':k{i}' for i in range(len(kinds)))})",
            "ExpressionAttributeValues": serialize(values), "ProjectionExpression": "sk, job_id, job_kind",
        }
        if after is not None:
            query["ExclusiveStartKey"] = serialize({"pk": tenant_jobs_pk(tenant), "sk": after})
        response = self._call("query", **query)
        rows = [deserialize(item) for item in response.get("Items", [])]
        last = response.get("LastEvaluatedKey")
        return JobListing(jobs=[(row["job_id"], row["job_kind"]) for row in rows],
                          next_cursor=deserialize(last)["sk"] if last else None)

    def save(self, job: Job) -> Job:
        written = job.model_copy(update={"revision": job.revision + 1})
        self._call("put_item", TableName=self._table, Item=serialize(_item(written)), ConditionExpression="revision = :r",
                   ExpressionAttributeValues=serialize({":r": job.revision}))
        return written


def _listing(job: Job) -> dict[str, Any]:
    return {"pk": listing_pk(job.tenant, job.owner), "sk": job.job_id, "job_id": job.job_id}


def _tenant_listing(job: Job) -> dict[str, Any]:
    return tenant_listing(job.tenant, job.job_id, job.kind.value, job.requested_at)


def _item(job: Job) -> dict[str, Any]:
    return {"pk": job_pk(job.tenant, job.job_id), "sk": JOB_SK, "revision": job.revision, "status": job.status.value,
            "job_kind": job.kind.value, "job": job.model_dump_json()}
