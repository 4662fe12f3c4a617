"""REST API Lambda: FastAPI behind Mangum (HTTP API payload v2)."""

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext
from mangum import Mangum

from mnemo.bootstrap import container
from mnemo.surfaces import snapstart
from mnemo.surfaces.app import create_app

logger = Logger(service="mnemo-api")
metrics = Metrics(namespace="Mnemo", service="mnemo-api")
# The composition root itself, not a container: it is built on the first request, not at import.
_app = create_app(container, rest=True, mcp=False)
_asgi = Mangum(_app, lifespan="off")
snapstart.register(container, _app.prime)  # SnapStart: prime the snapshot; after a restore, reseed and reconnect


@logger.inject_lambda_context(correlation_id_path="requestContext.requestId")
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: LambdaContext) -> dict:
    return _asgi(event, context)
