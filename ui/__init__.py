"""Interfaces: the `eventbot` CLI, the HTTP API, the Gradio chat, and the server composing them."""
