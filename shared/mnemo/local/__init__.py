"""The embedded local stack: moto (DynamoDB + SQS), the local index, embedder and extractor."""
