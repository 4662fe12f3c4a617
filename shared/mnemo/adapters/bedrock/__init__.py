"""Bedrock adapters: extraction, embeddings, edits, intents and reranking through the Converse and Rerank APIs."""
