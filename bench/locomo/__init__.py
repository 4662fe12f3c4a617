"""LoCoMo retrieval benchmark: Mnemo's public search API next to BM25-only and dense-only baselines.

See bench/locomo/README.md. The data is not part of the repository (CC BY-NC 4.0).
"""
