"""SQS adapters: the enrichment and job queues."""
