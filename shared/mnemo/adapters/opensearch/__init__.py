"""OpenSearch adapters: the k-NN + BM25 memory and fact indexes (SigV4, opensearch-py)."""
