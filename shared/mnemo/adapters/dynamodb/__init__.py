"""DynamoDB adapters: the tables behind the store, fact, key, tenant, job and OAuth ports."""
