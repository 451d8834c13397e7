"""The answering brain: settings, retrieval, answerers, chain, evaluation."""
