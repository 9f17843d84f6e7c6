"""The loopback Ollama double now lives in carenav_core/eval/ollama_double.py (the evaluation harnesses use it too)."""
from carenav_core.eval.ollama_double import OllamaDouble, RecordedRequest, ScriptedReply, fake_embedding  # noqa: F401
