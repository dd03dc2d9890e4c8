"""LoRA adapters (/ai/finetunes, `lora`, 3039, 5005) and model terms (5016 until 'agree')."""

from __future__ import annotations

import httpx
import pytest
from emulator_helpers import ACCOUNT, LLAMA, MISTRAL_LORA, QWQ, VISION_32, ask, chat_url, run_url

from flarechat.emulator.server import EmulatorServer

OTHER_ACCOUNT = "f" * 32


def test_finetunes_lists_the_demo_accounts_adapters(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    reply = http.get(f"{emulator.api_base}/accounts/{ACCOUNT}/ai/finetunes")
    body = reply.json()
    assert list(body) == ["result", "success", "errors", "messages"]
    names = {item["name"]: item for item in body["result"]}
    assert names["support-tone"]["model"] == MISTRAL_LORA
    keys = {"id", "name", "model", "description", "created_at", "modified_at"}
    assert all(set(item) == keys for item in body["result"])
    other = http.get(f"{emulator.api_base}/accounts/{OTHER_ACCOUNT}/ai/finetunes")
    assert other.json()["result"] == []
    anonymous = httpx.get(f"{emulator.api_base}/accounts/{ACCOUNT}/ai/finetunes")
    assert anonymous.status_code == 400


@pytest.mark.parametrize("variant", ["prompt", "messages"])
def test_lora_by_name_on_the_native_route(
    emulator: EmulatorServer, http: httpx.Client, variant: str
) -> None:
    body = (
        ask("hi", lora="support-tone")
        if variant == "messages"
        else {"prompt": "hi", "lora": "support-tone", "raw": True}
    )
    reply = http.post(run_url(emulator, MISTRAL_LORA), json=body)
    assert reply.status_code == 200
    assert "(Answering with the LoRA adapter `support-tone`.)" in reply.json()["result"]["response"]


def test_lora_in_chat_completions_is_a_variant(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    body = {"model": QWQ, **ask("hi", lora="math-steps")}
    content = http.post(chat_url(emulator), json=body).json()["choices"][0]["message"]["content"]
    assert "`math-steps`" in content
    emulator.state.set_variant("chat_lora", "reject")
    assert http.post(chat_url(emulator), json=body).status_code == 400


def test_unknown_adapter_is_3039(emulator: EmulatorServer, http: httpx.Client) -> None:
    for name in ("no-such-adapter", "math-steps"):  # math-steps belongs to another base model
        reply = http.post(run_url(emulator, MISTRAL_LORA), json=ask("hi", lora=name))
        assert reply.status_code == 400
        [error] = reply.json()["errors"]
        assert error["code"] == 3039
        assert "Finetune is missing required files" in error["message"]


def test_lora_on_a_model_without_lora_is_5005(emulator: EmulatorServer, http: httpx.Client) -> None:
    reply = http.post(run_url(emulator, LLAMA), json=ask("hi", lora="support-tone"))
    assert reply.status_code == 405
    [error] = reply.json()["errors"]
    assert error["code"] == 5005
    assert f"The model {LLAMA} does not support LoRa inference" in error["message"]


def _terms_code(reply: httpx.Response) -> tuple[int, int]:
    return reply.status_code, reply.json()["errors"][0]["code"]


def test_terms_need_agreement_per_account(emulator: EmulatorServer, http: httpx.Client) -> None:
    refused = http.post(run_url(emulator, VISION_32), json=ask("hi"))
    assert _terms_code(refused) == (403, 5016)
    assert list(refused.json()) == ["errors", "success", "result", "messages"]
    assert "User has not agreed to Llama3.2 model terms" in refused.json()["errors"][0]["message"]
    agreed = http.post(run_url(emulator, VISION_32), json={"prompt": "agree"})
    assert agreed.status_code == 200
    assert "agreeing" in agreed.json()["result"]["response"]
    assert http.post(run_url(emulator, VISION_32), json=ask("hi")).status_code == 200
    other = http.post(run_url(emulator, VISION_32, account=OTHER_ACCOUNT), json=ask("hi"))
    assert _terms_code(other) == (403, 5016)
    emulator.control("reset_agreements")
    assert _terms_code(http.post(run_url(emulator, VISION_32), json=ask("hi"))) == (403, 5016)


def test_terms_message_variant(emulator: EmulatorServer, http: httpx.Client) -> None:
    emulator.control("set_variant", name="terms_message", value="live")
    refused = http.post(run_url(emulator, VISION_32), json=ask("hi"))
    assert "you must submit the prompt 'agree'" in refused.json()["errors"][0]["message"]
