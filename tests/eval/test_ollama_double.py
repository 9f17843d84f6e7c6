"""The shared loopback double: queued replies first, then the responder; a failing responder is an HTTP error."""
import ollama
import pytest

from carenav_core.eval.ollama_double import OllamaDouble, ScriptedReply


def test_queue_first_then_responder():
    with OllamaDouble(responder=lambda body: ["computed ", body["messages"][-1]["content"]]) as double:
        double.enqueue("queued")
        client = ollama.Client(host=double.url)
        replies = [client.chat(model="m", messages=[{"role": "user", "content": q}]).message.content for q in "ab"]
        streamed = "".join(p.message.content for p in client.chat(model="m", messages=[{"role": "user", "content": "c"}],
                                                                   stream=True))
    assert replies == ["queued", "computed b"] and streamed == "computed c"


def test_responder_may_return_an_error_reply_and_failures_become_errors():
    with OllamaDouble(responder=lambda body: ScriptedReply(chunks=(), status=503, error="busy")) as double:
        with pytest.raises(ollama.ResponseError, match="busy"):
            ollama.Client(host=double.url).chat(model="m", messages=[])
    with OllamaDouble(responder=lambda body: 1 / 0) as double:
        with pytest.raises(ollama.ResponseError, match="responder failed"):
            ollama.Client(host=double.url).chat(model="m", messages=[])
