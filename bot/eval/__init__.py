"""Evaluation and benchmark: imported only by `eventbot eval` and `eventbot bench`, never on the serving path."""
