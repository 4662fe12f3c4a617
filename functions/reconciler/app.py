"""Scheduled reconciler Lambda: re-enqueue memories whose enrichment task was lost."""

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from mnemo.bootstrap import container

logger = Logger(service="mnemo-reconciler")
metrics = Metrics(namespace="Mnemo", service="mnemo-reconciler")


@logger.inject_lambda_context
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: LambdaContext) -> dict:
    requeued = container().recovery.requeue_stale()
    metrics.add_metric(name="MemoriesRequeued", unit=MetricUnit.Count, value=requeued)
    return {"requeued": requeued}
