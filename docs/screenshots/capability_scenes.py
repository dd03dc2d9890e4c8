"""Screenshot scenes for what the models can do (make_screenshots.py runs them): an image
message, a tool-call card waiting for its result, and a JSON reply with its verdict."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QLinearGradient, QPainter, QRadialGradient

from flarechat.core.conversation import Attachment
from flarechat.ui.app import Session
from flarechat.ui.capabilities.tool_cards import ToolCallsPanel

__all__ = ["CAPABILITY_SCENES", "capability_scene"]

CAPABILITY_SCENES = ("image", "tools", "json")
VISION_MODEL = "@cf/meta/llama-4-scout-17b-16e-instruct"
#: Takes tools and JSON mode in the emulator's catalogue.
TOOLS_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast"
PHOTO_SIZE = (960, 640)
WEATHER_TOOL: dict[str, Any] = {
    "name": "get_weather",
    "description": "The weather in a city right now",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
        "required": ["city"],
    },
    "canned_result": '{"temp_c": 21, "sky": "clear", "wind_kmh": 9}',
}
TRIP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "highlights": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city", "days", "highlights"],
}
SETTLE = 0.8


def _sunset() -> Attachment:
    """A drawn picture (no stock photo needed): sky, sun and sea."""
    width, height = PHOTO_SIZE
    image = QImage(width, height, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    sky = QLinearGradient(0, 0, 0, height * 0.62)
    sky.setColorAt(0, QColor("#2b3a67"))
    sky.setColorAt(1, QColor("#f6a35b"))
    painter.fillRect(QRectF(0, 0, width, height * 0.62), sky)
    sun = QRadialGradient(QPointF(width * 0.5, height * 0.6), height * 0.18)
    sun.setColorAt(0, QColor("#fff3c4"))
    sun.setColorAt(1, QColor("#f28c38"))
    painter.setBrush(sun)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(QPointF(width * 0.5, height * 0.6), height * 0.16, height * 0.16)
    sea = QLinearGradient(0, height * 0.62, 0, height)
    sea.setColorAt(0, QColor("#1f4e79"))
    sea.setColorAt(1, QColor("#0b1d33"))
    painter.fillRect(QRectF(0, height * 0.62, width, height * 0.38), sea)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "JPEG", 88)  # type: ignore[call-overload]  # the stubs say bytes
    return Attachment("image/jpeg", bytes(data.data()), width, height, "sunset.jpg")


def _finished(session: Session) -> asyncio.Future[str]:
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_finished(message_id: str, _data: object) -> None:
        if not future.done():
            future.set_result(message_id)

    session.chat.turn_finished.connect(on_finished)
    return future


async def _send(session: Session, text: str, **kw: Any) -> str:
    finished = _finished(session)
    session.chat.send(text, **kw)
    reply = await finished
    await asyncio.sleep(SETTLE)
    return reply


async def capability_scene(session: Session, scene: str) -> None:
    """Bring the window to ``scene``; make_screenshots.py grabs it afterwards."""
    chat = session.chat
    chat.set_models(await session.client.list_models(session.prefs.connection()))
    chat.new_conversation()
    if scene == "image":
        chat.set_model(VISION_MODEL)
        await _send(session, "What is in this photo? One sentence, please.", images=(_sunset(),))
    elif scene == "tools":
        chat.set_model(TOOLS_MODEL)
        chat.set_options("", {"tools": [WEATHER_TOOL]})
        reply = await _send(session, "Use get_weather: is it warm in Lisbon right now?")
        view = session.window.pane.transcript.view_for(reply)
        panel = view.findChild(ToolCallsPanel) if view is not None else None
        if panel is not None and panel.cards:
            panel.cards[0].use_canned()  # as if the user picked the canned result
    elif scene == "json":
        chat.set_model(TOOLS_MODEL)
        response_format = {"type": "json_schema", "schema": TRIP_SCHEMA, "name": "trip"}
        chat.set_options("", {"response_format": response_format})
        await _send(session, "Plan a three-day trip to Lisbon as JSON.")
    session.window.pane.transcript_to_end()
    await asyncio.sleep(SETTLE)
