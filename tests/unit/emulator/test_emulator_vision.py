"""Vision: image parts and the native llama-3.2 image input, described back; 5006 otherwise."""

from __future__ import annotations

import base64
from collections.abc import Mapping

import httpx
import pytest
from emulator_helpers import (
    ACCOUNT,
    GEMMA,
    LLAMA,
    SCOUT,
    VISION_32,
    ask,
    chat_url,
    gateway_url,
    run_url,
    sse_json,
)
from emulator_images import gif, image_part, jpeg, png, webp_extended, webp_lossless, webp_lossy

from flarechat.emulator import vision
from flarechat.emulator.server import EmulatorServer


@pytest.mark.parametrize(
    ("data", "mime", "size"),
    [
        (png(640, 480), "image/png", (640, 480)),
        (jpeg(33, 17), "image/jpeg", (33, 17)),
        (gif(7, 9), "image/gif", (7, 9)),
        (webp_lossy(320, 200), "image/webp", (320, 200)),
        (webp_lossless(100, 3000), "image/webp", (100, 3000)),
        (webp_extended(4000, 12), "image/webp", (4000, 12)),
    ],
)
def test_sniff_reads_type_and_size(data: bytes, mime: str, size: tuple[int, int]) -> None:
    image = vision.sniff(data)
    assert (image.mime, image.width, image.height) == (mime, *size)


def test_sniff_admits_what_it_cannot_read() -> None:
    assert vision.sniff(b"not an image").mime is None


def _vision_ask(*parts: Mapping[str, object], text: str = "What is in these?") -> dict[str, object]:
    content = [{"type": "text", "text": text}, *parts]
    return {"messages": [{"role": "user", "content": content}]}


def test_chat_completions_describe_every_image(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    body = {
        "model": GEMMA,
        **_vision_ask(image_part(png(64, 48)), image_part(jpeg(10, 20), "image/jpeg")),
    }
    reply = http.post(chat_url(emulator), json=body)
    assert reply.status_code == 200
    content = reply.json()["choices"][0]["message"]["content"]
    by = "\N{MULTIPLICATION SIGN}"
    assert content.startswith(
        f"I received 2 images: 1. a 64{by}48 PNG (image/png); 2. a 10{by}20 JPEG"
    )
    assert "(image/jpeg)" in content


def test_gateway_chat_and_native_content_arrays(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    body = {"model": SCOUT, **_vision_ask(image_part(gif(5, 6), "image/gif"))}
    via_gateway = http.post(gateway_url(emulator, "workers-ai/v1/chat/completions"), json=body)
    assert (
        "1 image: 1. a 5\N{MULTIPLICATION SIGN}6 GIF (image/gif)"
        in via_gateway.json()["choices"][0]["message"]["content"]
    )
    native = http.post(run_url(emulator, SCOUT), json=_vision_ask(image_part(webp_lossy(8, 9))))
    assert "a 8\N{MULTIPLICATION SIGN}9 WEBP (image/webp)" in native.json()["result"]["response"]


def test_streamed_reply_describes_the_image(emulator: EmulatorServer, http: httpx.Client) -> None:
    body = {**_vision_ask(image_part(png(2, 3))), "stream": True}
    reply = http.post(run_url(emulator, SCOUT), json=body)
    text = "".join(e.get("response", "") for e in sse_json(reply.content))
    assert text.startswith("I received 1 image: 1. a 2\N{MULTIPLICATION SIGN}3 PNG (image/png).")


def _agree(emulator: EmulatorServer) -> None:
    emulator.state.agree_terms(VISION_32, ACCOUNT)


@pytest.mark.parametrize("as_bytes", [True, False])
def test_llama_32_vision_takes_the_native_image_field(
    emulator: EmulatorServer, http: httpx.Client, as_bytes: bool
) -> None:
    _agree(emulator)
    data = png(1024, 768)
    image: object = list(data) if as_bytes else base64.b64encode(data).decode()
    reply = http.post(run_url(emulator, VISION_32), json=ask("Describe it", image=image))
    assert reply.status_code == 200, reply.text
    assert reply.json()["result"]["response"].startswith(
        "I received 1 image: 1. a 1024\N{MULTIPLICATION SIGN}768 PNG (image/png)."
    )


def test_non_vision_model_refuses_image_parts_with_5006(
    emulator: EmulatorServer, http: httpx.Client
) -> None:
    reply = http.post(run_url(emulator, LLAMA), json=_vision_ask(image_part(png(1, 1))))
    assert reply.status_code == 400
    [error] = reply.json()["errors"]
    assert error["code"] == 5006
    assert "Type mismatch of '/messages/0/content', 'array' not in 'string'" in error["message"]
    text_only = {"model": "@cf/qwen/qwq-32b", **_vision_ask(image_part(png(1, 1)))}
    assert http.post(chat_url(emulator), json=text_only).status_code == 400


def test_broken_base64_is_5004(emulator: EmulatorServer, http: httpx.Client) -> None:
    part = {"type": "image_url", "image_url": {"url": "data:image/png;base64,!!!"}}
    reply = http.post(chat_url(emulator), json={"model": GEMMA, **_vision_ask(part)})
    assert reply.status_code == 400
    assert reply.json()["errors"][0]["code"] == 5004
    assert "Invalid data type for base64 input: image/png" in reply.json()["errors"][0]["message"]
