"""Answerers: question analysis, the extractive reader (no LLM), the generative backends and their guard."""
