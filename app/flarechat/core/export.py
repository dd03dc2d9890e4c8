"""Export conversations as Markdown and JSON, and import a JSON export without losing anything."""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import datetime as dt
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flarechat import safejson
from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_TOOL,
    STATUS_FAILED,
    STATUS_INTERRUPTED,
    STATUS_STOPPED,
    Attachment,
    Conversation,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.store import ChatStore, NotFound
from flarechat.core.store._codec import decode_selected, encode_selected, scrub

__all__ = [
    "CONVERSATION_FORMAT",
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "IMPORTED_SUFFIX",
    "ImportFormatError",
    "ImportReport",
    "RenamedConflict",
    "conversation_to_json",
    "conversation_to_markdown",
    "demote_headings",
    "export_all",
    "file_stem",
    "files_folder",
    "import_all",
    "markdown_files",
    "write_markdown",
]

EXPORT_FORMAT = "flarechat.export"
CONVERSATION_FORMAT = "flarechat.conversation"
#: 2: messages carry images (base64), tool calls and tool call ids. Version 1 still imports.
EXPORT_VERSION = 2
IMPORTED_SUFFIX = " (imported)"
_STATUS_NOTES = {
    STATUS_STOPPED: "_Stopped: this reply is partial._",
    STATUS_INTERRUPTED: "_Interrupted: this reply is partial (the app closed while it streamed)._",
}
#: Fields of a message that decide whether an imported copy is "the same" as a stored one.
_SAME_FIELDS = (
    "parent_id",
    "role",
    "content",
    "reasoning",
    "attachments",
    "tool_calls",
    "tool_call_id",
)
#: Message fields holding records (the only places a credential could have been put by mistake).
_RECORD_FIELDS = ("request", "usage", "meta", "timings", "error")
_NUMBER = (int, float)
_MISSING = object()
_OPTIONAL_TEXT = (str, type(None))
_MESSAGE_KINDS: dict[str, type | tuple[type, ...]] = {
    "parent_id": _OPTIONAL_TEXT,
    "reasoning": str,
    "status": str,
    "created_at": _NUMBER,
    "model": _OPTIONAL_TEXT,
    "finish_reason": _OPTIONAL_TEXT,
    "tool_call_id": _OPTIONAL_TEXT,
    "tool_calls": list,
    "attachments": list,
    **dict.fromkeys(_RECORD_FIELDS, (dict, type(None))),
}
#: File extensions of the image types the app sends; anything else is written as ``.img``.
_IMAGE_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/webp": ".webp",
    "image/gif": ".gif",
}
_OTHER_IMAGE_EXTENSION = ".img"
#: The folder beside ``name.md`` that holds its images (as browsers save "page_files").
FILES_FOLDER_SUFFIX = " files"


class ImportFormatError(ValueError):
    """The data is not a Flarechat export this version can read (message says why)."""


@dataclass(frozen=True, slots=True)
class RenamedConflict:
    """An imported conversation whose id was taken by different content: stored as a copy."""

    original_id: str
    new_id: str
    title: str


@dataclass(slots=True)
class ImportReport:
    added: int = 0  # conversations stored under their own ids
    skipped_same: int = 0  # already here with the same messages
    renamed_conflicts: list[RenamedConflict] = field(default_factory=list)


# -- Markdown ------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


#: A message's own heading level ("## Assistant"); headings inside it go below that.
MESSAGE_HEADING_LEVEL = 2
MAX_HEADING_LEVEL = 6
_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def demote_headings(markdown: str, *, below: int = MESSAGE_HEADING_LEVEL) -> str:
    """ATX headings pushed below level ``below`` (capped at 6); code blocks are left alone."""
    lines, fence = [], ""
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if fence:
            fence = "" if opened and opened.group(1).startswith(fence) else fence
        elif opened:
            fence = opened.group(1)[:3]
        elif match := _HEADING.match(line):
            level = min(len(match.group(2)) + below, MAX_HEADING_LEVEL)
            line = f"{match.group(1)}{'#' * level}{line[match.end() :]}"
        lines.append(line)
    return "\n".join(lines)


#: Characters file systems refuse (Windows' set, which covers the others) and controls.
_UNSAFE_IN_NAMES = re.compile(r'[<>:"/\\|?*\x00-\x1f]+')
DEFAULT_FILE_STEM = "chat"


def file_stem(title: str) -> str:
    """A file name for a conversation: ``"Re: plan / v2"`` -> ``"Re plan v2"``."""
    stem = " ".join(_UNSAFE_IN_NAMES.sub(" ", title).split()).strip(" .")
    return stem or DEFAULT_FILE_STEM


def _image_markdown(attachment: Attachment, link: str | None) -> str:
    label = attachment.name or "image"
    if link is None:
        kind = attachment.mime_type.removeprefix("image/").upper()
        return f"_[{label}: {attachment.width}\N{MULTIPLICATION SIGN}{attachment.height} {kind}]_"
    alt = label.replace("[", "(").replace("]", ")")
    return f"![{alt}](<{link}>)"


def _tool_calls_markdown(message: Message) -> list[str]:
    parts = []
    for call in message.tool_calls:
        arguments = str(call.get("arguments") or "{}")
        with contextlib.suppress(ValueError):  # else shown as the model sent it
            arguments = json.dumps(safejson.loads(arguments), ensure_ascii=False, indent=2)
        fence = "~~~~" if "```" in arguments else "```"
        parts.append(
            f"**Tool call** `{call.get('name')}` (`{call.get('id')}`)\n\n"
            f"{fence}json\n{arguments}\n{fence}"
        )
    return parts


def _message_markdown(
    tree: ConversationTree, message: Message, links: Mapping[tuple[str, int], str]
) -> list[str]:
    heading = message.role.capitalize()
    if message.role == ROLE_ASSISTANT and message.model:
        heading += f" · `{message.model}`"
    parts = [f"## {heading}"]
    if message.role == ROLE_TOOL and message.tool_call_id:
        parts[0] = f"## Tool result · `{message.tool_call_id}`"
    parts += [
        _image_markdown(a, links.get((message.id, i))) for i, a in enumerate(message.attachments)
    ]
    if message.reasoning:
        body = message.reasoning.replace("</details", "&lt;/details")
        parts.append(f"<details>\n<summary>Reasoning</summary>\n\n{body}\n\n</details>")
    if message.content:
        parts.append(demote_headings(message.content))
    parts += _tool_calls_markdown(message)
    if message.status in _STATUS_NOTES:
        parts.append(_STATUS_NOTES[message.status])
    if message.status == STATUS_FAILED:
        reason = (message.error or {}).get("message") or "the request did not complete"
        parts.append(f"_Failed: {_one_line(str(reason))}_")
    index, count = tree.sibling_position(message.id)
    if count > 1:
        parts.append(f"_Version {index} of {count} (the JSON export holds every version)._")
    return parts


def files_folder(markdown_path: Path) -> Path:
    """Where a Markdown export's images go: ``<name> files/`` beside ``<name>.md``."""
    return markdown_path.with_name(markdown_path.stem + FILES_FOLDER_SUFFIX)


def _image_files(tree: ConversationTree) -> dict[tuple[str, int], tuple[str, bytes]]:
    """(message id, index) -> (file name, bytes) for every image on the visible path."""
    files: dict[tuple[str, int], tuple[str, bytes]] = {}
    for number, message in enumerate(tree.path(), start=1):
        for index, attachment in enumerate(message.attachments, start=1):
            ext = _IMAGE_EXTENSIONS.get(attachment.mime_type, _OTHER_IMAGE_EXTENSION)
            name = f"message-{number:03d}-image-{index}{ext}"
            files[(message.id, index - 1)] = (name, attachment.data)
    return files


def markdown_files(tree: ConversationTree) -> dict[str, bytes]:
    """The image files a Markdown export links to, by file name (inside ``files_folder``)."""
    return dict(_image_files(tree).values())


def conversation_to_markdown(tree: ConversationTree, *, folder: str | None = None) -> str:
    """The visible path as Markdown: title, model, a heading per message, reasoning collapsed.

    Images are linked as ``folder/<file>`` (see :func:`markdown_files`) when ``folder`` is
    given, else described in words (their bytes are in the JSON export).
    """
    conv = tree.conversation
    path = tree.path()
    created = dt.datetime.fromtimestamp(conv.created_at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [f"# {_one_line(conv.title)}"]
    facts = [f"- Started: {created}"]
    if conv.model:
        facts.append(f"- Model: `{conv.model}`")
    if any(len(tree.siblings(m.id)) > 1 for m in path):
        facts.append("- Branches: this is the visible path; other versions are in the JSON export.")
    parts.append("\n".join(facts))
    if conv.system_prompt:
        quoted = "\n".join(f"> {line}" for line in conv.system_prompt.splitlines())
        parts.append(f"## System prompt\n\n{quoted}")
    links = (
        {key: f"{folder}/{name}" for key, (name, _data) in _image_files(tree).items()}
        if folder is not None
        else {}
    )
    for message in path:
        parts.extend(_message_markdown(tree, message, links))
    return "\n\n".join(parts) + "\n"


def write_markdown(tree: ConversationTree, path: Path) -> list[Path]:
    """Write ``path`` (the Markdown) and, when the path has images, each of them into
    :func:`files_folder` beside it, linked from the text. The files written, Markdown first.

    Blocking file I/O: call it through ``asyncio.to_thread`` from the event loop.
    """
    files = markdown_files(tree)
    folder = files_folder(path)
    path.write_text(conversation_to_markdown(tree, folder=folder.name), encoding="utf-8")
    written = [path]
    if files:
        folder.mkdir(exist_ok=True)
        for name, data in files.items():
            (folder / name).write_bytes(data)
            written.append(folder / name)
    return written


# -- JSON ----------------------------------------------------------------------------------


def _conversation_doc(tree: ConversationTree) -> dict[str, Any]:
    """Plain data for one conversation; records are scrubbed, the text itself is left alone."""
    doc = dataclasses.asdict(tree.conversation)
    doc["params"] = scrub(doc["params"])
    doc["selected"] = {"" if k is None else k: v for k, v in tree.selected.items()}
    doc["messages"] = [_message_doc(m) for m in tree]
    return doc


def _message_doc(message: Message) -> dict[str, Any]:
    doc = dataclasses.asdict(message)
    for name in _RECORD_FIELDS:
        doc[name] = scrub(doc[name])
    doc["attachments"] = [_attachment_doc(a) for a in message.attachments]
    return doc


def _attachment_doc(attachment: Attachment) -> dict[str, Any]:
    return {
        "mime_type": attachment.mime_type,
        "name": attachment.name,
        "width": attachment.width,
        "height": attachment.height,
        "data": base64.b64encode(attachment.data).decode("ascii"),
    }


def _attachment(doc: Any, message_id: str) -> Attachment:
    problem = ImportFormatError(f"An image of message {message_id} is unreadable.")
    if not isinstance(doc, Mapping):
        raise problem
    mime, name, width, height = (doc.get(k) for k in ("mime_type", "name", "width", "height"))
    data = doc.get("data")
    if not isinstance(mime, str) or not isinstance(data, str):
        raise problem
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (width, height)):
        raise problem
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise problem from None
    return Attachment(
        mime_type=mime,
        data=raw,
        width=int(width),  # type: ignore[arg-type]  # checked just above
        height=int(height),  # type: ignore[arg-type]
        name=name if isinstance(name, str) else "",
    )


def _tool_calls(doc: list[Any], message_id: str) -> list[dict[str, Any]]:
    calls = []
    for call in doc:
        if not isinstance(call, Mapping) or not all(
            isinstance(call.get(k), str) for k in ("id", "name", "arguments")
        ):
            raise ImportFormatError(f"A tool call of message {message_id} is unreadable.")
        calls.append({"id": call["id"], "name": call["name"], "arguments": call["arguments"]})
    return calls


def conversation_to_json(tree: ConversationTree, *, now: float | None = None) -> dict[str, Any]:
    """One conversation with every branch, request record and usage (a versioned document)."""
    return {
        "format": CONVERSATION_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": time.time() if now is None else now,
        "conversation": _conversation_doc(tree),
    }


def export_all(
    store: ChatStore, *, now: float | None = None, lab: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Every conversation not in the trash, as one document for import_all; ``lab``: the
    presets, prompts and templates (``core.lab.exchange.lab_to_json``), kept under "lab"."""
    docs = [_conversation_doc(store.load_tree(s.id)) for s in store.list_conversations()]
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "exported_at": time.time() if now is None else now,
        "conversations": docs,
        **({"lab": dict(lab)} if lab is not None else {}),
    }


# -- import --------------------------------------------------------------------------------


def _field(
    doc: Mapping[str, Any], name: str, *, kind: type | tuple[type, ...], default: Any
) -> Any:
    value = doc.get(name, default)
    if value is not default and not isinstance(value, kind):
        raise ImportFormatError(f"The field {name!r} has the wrong type.")
    return value


def _message(doc: Any, conversation_id: str) -> Message:
    if not isinstance(doc, Mapping) or not isinstance(doc.get("id"), str):
        raise ImportFormatError("A message has no id.")
    known = {f.name for f in dataclasses.fields(Message)} - {"conversation_id"}
    values = {k: v for k, v in doc.items() if k in known}
    for name in ("role", "content"):
        if not isinstance(values.get(name), str):
            raise ImportFormatError(f"Message {doc['id']} has no {name}.")
    for name, kind in _MESSAGE_KINDS.items():
        _field(values, name, kind=kind, default=_MISSING)
    values["attachments"] = [_attachment(a, doc["id"]) for a in values.get("attachments", [])]
    values["tool_calls"] = _tool_calls(values.get("tool_calls", []), doc["id"])
    try:
        return Message(**values, conversation_id=conversation_id)
    except TypeError as error:
        raise ImportFormatError(f"Message {doc['id']} is incomplete.") from error


def _tree(doc: Any) -> ConversationTree:
    if not isinstance(doc, Mapping) or not isinstance(doc.get("id"), str):
        raise ImportFormatError("A conversation has no id.")
    conv = Conversation(
        id=doc["id"],
        title=_field(doc, "title", kind=str, default="Imported chat"),
        created_at=float(_field(doc, "created_at", kind=_NUMBER, default=time.time())),
        updated_at=float(_field(doc, "updated_at", kind=_NUMBER, default=time.time())),
        pinned=bool(_field(doc, "pinned", kind=bool, default=False)),
        model=_field(doc, "model", kind=_OPTIONAL_TEXT, default=None),
        system_prompt=_field(doc, "system_prompt", kind=str, default=""),
        params=_field(doc, "params", kind=dict, default={}),
    )
    messages = [_message(m, conv.id) for m in _field(doc, "messages", kind=list, default=[])]
    selected = decode_selected(encode_selected(_field(doc, "selected", kind=dict, default={})))
    try:
        return ConversationTree(conv, messages, selected)
    except ValueError as error:
        raise ImportFormatError(f"Conversation {conv.id} is inconsistent: {error}") from error


def _conversation_docs(data: Any) -> list[Any]:
    if not isinstance(data, Mapping):
        raise ImportFormatError("This is not a Flarechat export.")
    kind, version = data.get("format"), data.get("version")
    if kind not in (EXPORT_FORMAT, CONVERSATION_FORMAT):
        raise ImportFormatError("This is not a Flarechat export.")
    if not isinstance(version, int) or version > EXPORT_VERSION:
        raise ImportFormatError("This export was made by a newer Flarechat; update to import it.")
    if kind == CONVERSATION_FORMAT:
        return [data.get("conversation")]
    docs = data.get("conversations")
    if not isinstance(docs, list):
        raise ImportFormatError("The export lists no conversations.")
    return docs


def _same_messages(imported: ConversationTree, stored: ConversationTree) -> bool:
    """Every imported message is already in ``stored``, unchanged."""
    for message in imported:
        if message.id not in stored:
            return False
        mine = stored.get(message.id)
        if any(getattr(mine, f) != getattr(message, f) for f in _SAME_FIELDS):
            return False
    return True


def _stored_tree(store: ChatStore, conversation_id: str) -> ConversationTree | None:
    try:
        return store.load_tree(conversation_id)
    except NotFound:
        return None


def _as_copy(tree: ConversationTree) -> ConversationTree:
    """The same conversation under fresh conversation and message ids, titled "(imported)"."""
    conv = dataclasses.replace(
        tree.conversation, id=new_id(), title=tree.conversation.title + IMPORTED_SUFFIX
    )
    ids = {m.id: new_id() for m in tree}
    messages = [
        dataclasses.replace(
            m,
            id=ids[m.id],
            conversation_id=conv.id,
            parent_id=None if m.parent_id is None else ids[m.parent_id],
        )
        for m in tree
    ]
    selected = {
        parent if parent is None else ids[parent]: ids[child]
        for parent, child in tree.selected.items()
    }
    return ConversationTree(conv, messages, selected)


class _Importer:
    """Decides, conversation by conversation, whether to add, skip or copy."""

    def __init__(self, store: ChatStore) -> None:
        self.store = store
        self.report = ImportReport()
        self.accepted: list[ConversationTree] = []
        self._batch: dict[str, ConversationTree] = {}  # original id -> as read, this import
        self._batch_message_ids: set[str] = set()

    def take(self, tree: ConversationTree) -> None:
        original_id = tree.conversation.id
        existing = self._batch.get(original_id)
        if existing is None:
            existing = _stored_tree(self.store, original_id)
        if existing is not None and _same_messages(tree, existing):
            self.report.skipped_same += 1
            return
        ids = [m.id for m in tree]
        taken = self.store.existing_message_ids(ids) | (self._batch_message_ids & set(ids))
        if existing is not None or taken:
            copy = _as_copy(tree)
            self.report.renamed_conflicts.append(
                RenamedConflict(original_id, copy.conversation.id, copy.conversation.title)
            )
            tree_to_store = copy
        else:
            self.report.added += 1
            tree_to_store = tree
        self._batch.setdefault(original_id, tree)
        self._batch_message_ids.update(m.id for m in tree_to_store)
        self.accepted.append(tree_to_store)


def import_all(store: ChatStore, data: Any) -> ImportReport:
    """Import an export_all (or conversation_to_json) document in one transaction.

    Never duplicates (a conversation already here with the same messages is skipped) and never
    overwrites (an id holding different content, or a message id used elsewhere, is imported as
    a renamed copy with new ids and reported). Credentials in records are scrubbed on storing.
    Runs on the store's thread (``await async_store.run(import_all, data)`` from the GUI).
    """
    importer = _Importer(store)
    for doc in _conversation_docs(data):
        importer.take(_tree(doc))
    store.insert_trees(importer.accepted)
    return importer.report
