"""Evaluation harnesses: the chat golden set with its independent oracle, and the loopback Ollama double."""
