"""Names vulture (at 60 % confidence, tests/test_structure.py) takes for dead code that a framework or a reader of
the data uses: each called or read by something other than this code's own calls."""
# ruff: noqa: B018, F821

# FastAPI routes, Typer commands and the uvicorn app factory: called by the framework, by their decorator.
healthz, add_documents, list_documents, remove_document, document_passage  # ui/api.py
add_feedback, list_feedback  # ui/feedback_api.py
list_conversations, get_conversation, remove_conversation  # ui/conversations_api.py
list_collections, delete_collection  # ui/collections_api.py, ui/cli_collections.py
chat_completions, list_models, get_model  # ui/openai_api.py
main, evaluate, serve, train_reader, install_llm, bench  # ui/cli.py
export_feedback  # ui/cli_feedback.py
app_from_env  # ui/server.py (uvicorn --factory)

# Fields of response models and typed dicts: read by the JSON a client gets, or by the chain's steps by key.
indexed_at  # ui/api.py
owned_by  # ui/openai_api.py
commit  # bot/feedback.py
ungrounded  # bot/eval/metrics.py (each item of `eventbot eval --json`)
domains  # bot/lang (which domains' word lists are loaded)
standalone_question, llm_corpus, extractive_draft, overview  # bot/answer/state.py

# Methods and attributes a library calls or reads: LangChain's LLM, torch's Module, fpdf's page footer, sqlite3's
# row factory, llama.cpp's model parameters, an HTTP session's timeout, atexit.
_._llm_type, _._identifying_params, _._generate  # bot/answer/llamacpp.py
_.on_llm_new_token  # bot/answer/generative.py (TokenSink)
_.use_extra_bufts  # bot/answer/llamacpp.py
_.forward  # bot/reader/model.py
_.footer  # bot/eval/pdfs.py
_.row_factory  # bot/feedback.py
_.timeout  # index/store.py
_kill_servers_left  # bot/eval/bench/processes.py

# Read by the tests only: how many texts the vector cache had to embed (tests/test_answers.py).
_.misses  # index/embeddings.py

# PDFs only the tests make (bot/eval/pdfs.py keeps every PDF maker in one place).
make_encrypted_pdf, make_image_only_pdf
