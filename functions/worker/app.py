"""Enrichment worker Lambda: SQS batch in, partial batch failures out."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from mnemo.surfaces.worker import handle_batch, logger, metrics


@logger.inject_lambda_context
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict, context: LambdaContext) -> dict:
    return handle_batch(event, context)
