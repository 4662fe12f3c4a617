"""`make dev`: the whole stack in one process on 127.0.0.1.

moto's server (DynamoDB + SQS) in a thread, tables and queues created from template.yaml, the API
key registered, the queue poller feeding the real worker handler, and uvicorn serving REST + MCP.
The stack builds its own `Container(settings)` naming its tables and queues; only boto3's own
variables (credentials, `AWS_ENDPOINT_URL_*` pointing at moto) go into the environment.
"""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
# Short visibility timeout and few receives locally, so a failing memory reaches `failed` + DLQ
# within minutes instead of the production hour (see docs/enrichment.md).
LOCAL_QUEUE_OVERRIDES = {"VisibilityTimeout": 10, "maxReceiveCount": 3}


@contextmanager
def refusing_address() -> Iterator[str]:
    """An address that refuses every connection while the block runs (e.g. an AWS endpoint that must
    fail fast, never the internet): bound and never listening, so no server binding port 0 meanwhile
    can be given it. Servers bind port 0 themselves (`start_moto`, `listen`): a port picked free and
    bound later can be taken in between, even by the next bind in the same process."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def start_moto() -> tuple[Any, str]:
    """moto's server (DynamoDB + SQS) in a thread on a port the kernel picks: (server, endpoint)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything else picks a port (PORT=0: the kernel picks one).

    Made with its protocol named (IPPROTO_TCP, not 0): asyncio turns Nagle's algorithm off
    (TCP_NODELAY) only on connections whose socket says TCP, and a connection inherits the listener's.
    Left at 0, every response written in two parts (headers, then body) waited ~40 ms for the
    client's delayed ACK (uvicorn issue 3149, its own pre-bound sockets)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart reuses the port at once
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def load_function(name: str) -> Any:
    """Import functions/<name>/app.py exactly as Lambda would load the handler module."""
    path = REPO / "functions" / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"mnemo_function_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class LocalStack:
    """moto + resources + key + poller. `start()` returns the API key in use."""

    def __init__(self, api_key: str | None = None, public_url: str = "") -> None:
        self.api_key = api_key
        self.public_url = public_url  # the server's own address: the OAuth issuer unless MNEMO_PUBLIC_URL says otherwise
        self._moto: Any = None
        self.aws_endpoint = ""
        self.poller: Any = None
        self.reconciler: Any = None
        self.resources: dict[str, str] = {}
        self.container: Any = None  # mnemo.bootstrap.Container, built by start()

    def start(self) -> str:
        import logging

        from mnemo.local import moto_patches

        moto_patches.install()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's per-request access log
        self._moto, endpoint = start_moto()
        self.aws_endpoint = endpoint
        os.environ.update(
            {
                "AWS_ACCESS_KEY_ID": "local",
                "AWS_SECRET_ACCESS_KEY": "local",
                "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1"),
                "AWS_ENDPOINT_URL_DYNAMODB": endpoint,
                "AWS_ENDPOINT_URL_SQS": endpoint,
                "POWERTOOLS_METRICS_NAMESPACE": "Mnemo",
                "POWERTOOLS_DEV": os.environ.get("POWERTOOLS_DEV", "false"),
            }
        )
        from mnemo import bootstrap
        from mnemo.adapters.aws import client
        from mnemo.local.inprocess import answer_in_process
        from mnemo.local.template_resources import create_local_resources
        from mnemo.settings import MnemoSettings
        from mnemo.surfaces.worker import worker_handler

        bootstrap.reset()  # boto3's shared session must see the endpoints above
        overrides = dict(LOCAL_QUEUE_OVERRIDES)
        self.resources = create_local_resources(
            client("dynamodb"), client("sqs"), os.environ.get("MNEMO_TEMPLATE", str(REPO / "template.yaml")), overrides
        )
        # OAuth on without MNEMO_PUBLIC_URL: this server's own address is the issuer (the settings refuse none).
        issuer: dict[str, Any] = {"public_url": self.public_url} if (
            self.public_url and _oauth_on() and not os.environ.get("MNEMO_PUBLIC_URL")) else {}
        # The stack's own settings object: the rest (index, embedder, extractor, key) still comes from MNEMO_*.
        settings = MnemoSettings(
            memories_table=self.resources["MemoriesTable"],
            keys_table=self.resources["KeysTable"],
            oauth_table=self.resources["OAuthTable"],
            queue_url=self.resources["EnrichmentQueue"],
            dlq_url=self.resources["EnrichmentDLQ"],
            max_receive_count=overrides["maxReceiveCount"],
            **issuer,
        )
        services = self.container = bootstrap.Container(settings)
        # The app's clients reach moto in process (the server above still serves the same state to
        # the AWS CLI): ~2 ms a call instead of ~5 over HTTP (bench/local_stack_bench.py).
        answer_in_process(services._dynamodb)
        answer_in_process(services._sqs)
        if self.api_key:
            services.keys.ensure(settings.local_tenant, "local", ["admin"], self.api_key)
        else:
            self.api_key = services.keys.create(settings.local_tenant, "local", ["admin"]).secret

        from mnemo.local.poller import QueuePoller

        # The worker function's handler, over this stack's container instead of the environment's.
        self.poller = QueuePoller(answer_in_process(client("sqs")), settings.queue_url, worker_handler(lambda: services),
                                  concurrency=settings.local_worker_concurrency)
        self.poller.start()
        from mnemo.local.reconciler import Reconciler

        self.reconciler = Reconciler(lambda grace: services.recovery.requeue_stale(grace=grace),
                                     idle=lambda: queue_idle(services._sqs, settings.queue_url))
        self.reconciler.start()
        return self.api_key

    def stop(self, *, forget: bool = False) -> None:
        """Stop the poller, then moto. `forget`: also empty moto's backends, which are process-wide,
        so that the next stack started in this process starts from nothing. The poller stops first:
        a worker still reading a queue or table that is being reset would fail."""
        if self.reconciler is not None:
            self.reconciler.stop()
        if self.poller is not None:
            self.poller.stop()
        if forget and self.aws_endpoint:
            import urllib.request

            urllib.request.urlopen(urllib.request.Request(f"{self.aws_endpoint}/moto-api/reset", method="POST"),
                                   timeout=30).close()
        if self._moto is not None:
            self._moto.stop()


def address_in_banner(printed: str) -> str:
    """The server's address from what `main` printed (its banner's REST line), or "" before it is printed:
    how a script that started it with PORT=0 learns the port."""
    found = re.search(r"^  REST: +(http://\S+)/v1 ", printed, re.MULTILINE)
    return found.group(1) if found else ""


def spawn(log: Path, *, code: Path = REPO, timeout: float = 120.0, **env: str) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m mnemo.local` of the checkout `code` as a child process (what the e2e tests and the benches
    that go over HTTP start): `env` on top of this process's environment minus MNEMO_* and AWS_*, its output
    in `log`. It binds a port itself (PORT=0, printed in its banner): a port picked here and passed in could
    be taken before it binds. Returns (the process, its base URL) once /healthz answers."""
    import httpx  # a dev dependency, as this helper is

    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMO_", "AWS_"))}
    environment.update({"PORT": "0", "PYTHONPATH": str(code / "shared"), **env})
    process = subprocess.Popen([sys.executable, "-m", "mnemo.local"], cwd=code, env=environment,
                               stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the local server exited early:\n{log.read_text()}")
        base = base or address_in_banner(log.read_text())
        try:
            if base and httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"the local server did not become healthy in {timeout:.0f} s:\n{log.read_text()}")


def main() -> int:
    import uvicorn

    host = os.environ.get("HOST", "127.0.0.1")
    # Bound first, so that no port picked while the stack starts (moto's) can be this one.
    requested = os.environ.get("PORT", "8000")
    if not (requested.isascii() and requested.isdigit() and int(requested) <= 65535):
        print(f"PORT: {requested!r} is not a port number (0 to 65535, 0 for any free one)", file=sys.stderr)
        return 1
    try:
        sock = listen(host, int(requested))
    except OSError as error:
        print(f"Mnemo cannot listen on {host}:{requested}: {error.strerror} "
              "(set PORT to another port, or PORT=0 for any free one)", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]
    base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    stack = LocalStack(os.environ.get("MNEMO_API_KEY") or None, public_url=base)
    key = stack.start()
    from mnemo.surfaces.app import create_app

    print(
        f"\nMnemo is running (local stack: moto DynamoDB + SQS, local index/embedder/extractor)\n"
        f"  MCP:      {base}/mcp   (also {base}/api/mcp)\n"
        f"  REST:     {base}/v1    OpenAPI: {base}/docs\n"
        f"  Console:  {base}/console/   (sign in with the API key below)\n"
        f"  API key:  {key}\n"
        f"  Header:   Authorization: Bearer {key}\n"
        f"  AWS:      {stack.aws_endpoint}   (moto: DynamoDB + SQS, inspect with the AWS CLI --endpoint-url)\n"
        + (f"  OAuth:    on (issuer {stack.container.settings.issuer}); a connect code for the consent page:\n"
           f"            curl -X POST {base}/v1/oauth/connect-codes -H 'Authorization: Bearer {key}'\n"
           if stack.container.settings.oauth_enabled else "")
        + "Ctrl-C stops it.\n",
        flush=True,
    )
    config = uvicorn.Config(create_app(stack.container), host=host, port=port,
                            log_level=os.environ.get("MNEMO_LOG_LEVEL", "warning"))
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C: uvicorn has shut down and re-raised it (what uvicorn.run swallows)
        pass
    finally:
        sock.close()
        stack.stop()
    return 0 if server.started else 3  # 3: uvicorn's own exit code for a server that never started


if __name__ == "__main__":
    sys.exit(main())


def _oauth_on() -> bool:
    """MNEMO_OAUTH_ENABLED as pydantic reads a bool: then the issuer defaults to this server's address."""
    return os.environ.get("MNEMO_OAUTH_ENABLED", "").strip().lower() in ("1", "true", "yes", "on", "t", "y")


def queue_idle(sqs: Any, queue_url: str) -> bool:
    """No message visible or in flight: a task not yet enriched can only have been lost."""
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=names)["Attributes"]
    return all(int(attributes.get(name, "0")) == 0 for name in names)
