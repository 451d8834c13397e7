"""The text layer, below both `index` and `bot`: one spaCy pipeline parses documents (at indexing) and questions
(at ask time), so indexing and answering cannot disagree about where a sentence ends or what a name is.
`pipeline` parses; `sentences` is what a parse keeps and how it is stored beside the chunks."""
