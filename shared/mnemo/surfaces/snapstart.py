"""Lambda SnapStart: what to build before the snapshot, and what a restored instance must redo.

With SnapStart (template.yaml: the MCP and REST functions), Lambda runs init once per published
version, snapshots the microVM, and starts every new instance of that version from the same
snapshot. Init itself stays small (a cold start without SnapStart pays it: `bench/coldstart.py`);
the before-snapshot hook builds what init leaves to the first request (the services, the AWS
clients, every MCP profile's server), so that restored instances start with it.

Anything init and the hook leave in memory is therefore shared by all instances and may be hours old:

- `random`'s state: every instance would draw the same retry jitter (adapters/bedrock/base.py) and
  retry in lockstep. Reseeded from the OS after restore. `uuid.uuid4()` and `secrets` read the
  OS's random source on every call, which Lambda reseeds on restore: nothing to do for them.
- AWS credentials and open connections of boto3 clients, the OpenSearch client's SigV4 signer:
  the credentials may have expired and the sockets are dead. Dropped after restore
  (`Container.forget_connections`), rebuilt by the next request from a fresh session that keeps the
  parsed service models.
- the API-key cache (services/tenancy/keys.py): its entries are timed by `time.monotonic()`, which does not
  count the time the snapshot spent on the shelf. Dropped with the rest.

The hooks are registered with the runtime's `snapshot_restore_py` (part of Lambda's Python 3.12+
managed runtimes); where it is absent (local stack, tests) nothing is registered.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemo.bootstrap import Container

logger = logging.getLogger(__name__)

__all__ = ["after_restore", "before_snapshot", "register"]


def register(services: Callable[[], Container], prime: Callable[[], None]) -> bool:
    """Register the hooks for the container `services` gives and the app's `prime` (what the app
    builds on first use); False where the runtime has no hook API."""
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:
        return False
    register_before_snapshot(before_snapshot, services, prime)
    register_after_restore(after_restore, services)
    return True


def before_snapshot(services: Callable[[], Container], prime: Callable[[], None]) -> None:
    """Build what every request needs and that holds no connection: the settings, the services and
    the AWS clients (their service models are most of a client's build time), then what the app
    builds on first use (`prime`: every MCP profile's server, its module imported). No request is made."""
    container = services()
    _ = container.keys, container.memories, container.status
    prime()
    logger.info("snapshot primed")


def after_restore(services: Callable[[], Container]) -> None:
    """Forget what must not be shared between instances restored from one snapshot."""
    random.seed()
    services().forget_connections()
    logger.info("restored from a snapshot: random reseeded, connections and key cache dropped")
