"""Sampling backends and serving: the local Hugging Face model, etude's native models with a
KV cache, OpenAI-compatible servers, the llama.cpp server this process owns, GGUF export and
weight sync."""
