"""core.current_model: which model a conversation's next message goes to, and its observable."""

from __future__ import annotations

from flarechat.core.conversation import ROLE_ASSISTANT, ROLE_USER, Conversation, Message
from flarechat.core.current_model import CurrentModel, model_in_use

DEFAULT = "@cf/meta/llama-3.1-8b-instruct-fast"
COLUMN = "@cf/mistral/mistral-7b-instruct-v0.2-lora"


def _path(model: str | None) -> list[Message]:
    question = Message(id="q", conversation_id="c", parent_id=None, role=ROLE_USER, content="Hi")
    answer = Message(
        id="a", conversation_id="c", parent_id="q", role=ROLE_ASSISTANT, content="Hi", model=model
    )
    return [question, answer]


def test_the_conversations_own_model_comes_first() -> None:
    conversation = Conversation(id="c", model="@cf/own")
    assert model_in_use(conversation, _path(COLUMN), default=DEFAULT) == "@cf/own"


def test_a_chat_with_no_model_of_its_own_goes_on_with_its_last_replys() -> None:
    assert model_in_use(Conversation(id="c"), _path(COLUMN), default=DEFAULT) == COLUMN
    assert model_in_use(Conversation(id="c"), _path(None), default=DEFAULT) == DEFAULT
    assert model_in_use(Conversation(id="c"), [], default=DEFAULT) == DEFAULT


def test_listeners_hear_of_each_change_once() -> None:
    heard: list[str] = []
    current = CurrentModel(DEFAULT)
    current.subscribe(heard.append)
    assert not current.update(DEFAULT)
    assert current.update(COLUMN)
    assert not current.update(COLUMN)
    assert current.update(COLUMN, force=True)
    assert (current.value, heard) == (COLUMN, [COLUMN, COLUMN])
