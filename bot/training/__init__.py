"""Making the reader: fine-tuning (`eventbot train-reader`), learning when to answer (calibration) and the model card.
Apart from the serving path: nothing under bot/ but the CLI imports this."""
