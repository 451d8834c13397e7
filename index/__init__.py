"""Ingestion: documents → chunks → embeddings → Chroma store. Knows nothing of `bot`."""
