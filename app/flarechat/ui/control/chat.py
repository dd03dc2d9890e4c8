"""The chat controller: what the user asks of replies (send, regenerate, edit, continue,
branches, the retry banner's actions) and which conversation is on screen.

The reply tasks themselves, their signals and shutdown live in the ``TurnBook`` base class.
"""

from __future__ import annotations

import asyncio
from typing import Any

from flarechat.api.errors import CapacityExceeded, ModelUnavailable
from flarechat.core.conversation import (
    ROLE_ASSISTANT,
    ROLE_USER,
    STATUS_STREAMING,
    Conversation,
    ConversationTree,
    Message,
    new_id,
)
from flarechat.core.store import StoreError
from flarechat.ui.control import presenting
from flarechat.ui.control.reply import CANCEL_RETRY, REQUEUE, STOP, Reply
from flarechat.ui.control.turn_book import TurnBook

__all__ = ["CONTINUE_PROMPT", "ChatController"]

#: The user message a "Continue" click sends after a reply stopped at max_tokens.
CONTINUE_PROMPT = "Continue exactly where you stopped."
#: The error kind of Workers AI being at capacity (429 / 3040): the retry banner's case.
CAPACITY = CapacityExceeded.kind
#: Failures another model can fix: picking one (Switch model…) sends the reply again with it.
SWITCHABLE_FAILURES = frozenset({CapacityExceeded.kind, ModelUnavailable.kind})


class ChatController(TurnBook):
    """Turns user intents into replies; its signals (declared on TurnBook) are plain values.

    Signals: see ``TurnBook`` (conversation_opened, message_added, path_changed, turn_started,
    turn_text_appended, turn_reasoning_appended, turn_finished, turn_failed, retry_scheduled,
    retry_cleared, busy_changed, model_changed, metrics_changed, …).
    """

    # -- conversations ---------------------------------------------------------------------

    def new_conversation(self) -> str:
        """Show a draft conversation (it is stored with its first message)."""
        settings = self._prefs.settings
        conversation = Conversation(
            id=new_id(), model=settings.last_model, system_prompt=settings.default_system_prompt
        )
        self._trees[conversation.id] = ConversationTree(conversation)
        self._show(conversation.id)
        return conversation.id

    async def open_conversation(self, conversation_id: str, *, at: str | None = None) -> bool:
        """Load (unless in memory) and show a stored conversation; False if it can't be read.

        ``at``: a message to be shown (a search hit); the branch holding it is chosen first.
        """
        if conversation_id not in self._trees:
            try:
                tree = await self.writer.store.load_tree(conversation_id)
            except StoreError as error:
                self.writer.report(error)
                return False
            self._trees[conversation_id] = tree
            self.writer.stored.add(conversation_id)
        tree = self._trees[conversation_id]
        if at is not None and at in tree:
            self._choose_branch(tree, at)
        self._show(conversation_id)
        return True

    def _show(self, conversation_id: str) -> None:
        self.cancel_edit()
        self._current = conversation_id
        busy = set(self._owners.values())
        for other in [c for c in self._trees if c != conversation_id and c not in busy]:
            del self._trees[other]  # only the open and the streaming conversations stay loaded
        self.conversation_opened.emit(conversation_id, self.path_view(conversation_id))
        self.model_changed.emit(self.current_model())
        self.busy_changed.emit(self.is_busy())

    def forget(self, conversation_id: str) -> None:
        """A conversation was deleted: drop it from memory (stop its replies first)."""
        self._trees.pop(conversation_id, None)
        self._failed.pop(conversation_id, None)
        if conversation_id == self._current:
            self._current = None

    async def stop_conversation(self, conversation_id: str) -> None:
        """Stop every reply running in one conversation and wait until they are saved."""
        ids = [m for m, owner in self._owners.items() if owner == conversation_id]
        await asyncio.gather(*(self._cancel(m, STOP) for m in ids))

    def set_model(self, model: str) -> None:
        """Use ``model`` for the current conversation (saved with it) and as the last used.

        A reply of this conversation held up by capacity moves to ``model`` at once (the retry
        banner's Switch model…): see ``_move_capacity_reply``.
        """
        self._prefs.settings.last_model = model
        self._jobs.spawn(self._prefs.save(), name="save-settings")
        tree = self.current_tree()
        if tree is not None:
            tree.conversation.model = model
            self._save_conversation(tree, "save-model", model=model)
        self.model_changed.emit(model)
        if tree is not None:
            self._move_capacity_reply(tree, model)

    def _move_capacity_reply(self, tree: ConversationTree, model: str) -> None:
        """Send the reply waiting to retry on capacity (or whose retry budget is spent, or that
        failed because its model is unavailable) again at once with ``model``: the pending
        retries end, the same message gets a new attempt, and its stored model and request
        record become the new ones. Nothing else changes."""
        reply = self._retrying_here()
        retry = reply.state.last_retry if reply is not None else None
        if reply is not None and retry is not None:
            if retry.error.kind == CAPACITY and reply.request.model != model:
                reply.message.model = model
                self._requeue(reply, reject_if_busy=None)
            return
        failed = self._failed_here()
        if failed is None or failed not in tree:
            return
        message = tree.get(failed)
        if (message.error or {}).get("kind") in SWITCHABLE_FAILURES and message.model != model:
            message.model = model
            self._rerun(failed, reject_if_busy=None)

    def set_options(self, system_prompt: str, params: dict[str, Any]) -> None:
        """The current conversation's system prompt and parameters (saved with it)."""
        tree = self.current_tree()
        if tree is None:
            return
        tree.conversation.system_prompt = system_prompt
        tree.conversation.params = dict(params)
        self._save_conversation(
            tree, "save-options", system_prompt=system_prompt, params=dict(params)
        )

    # -- sending ---------------------------------------------------------------------------

    def send(self, text: str) -> str | None:
        """Send ``text`` in the current conversation; returns the reply's message id.

        While an edit is pending, the new message becomes a sibling of the edited one (a new
        branch; the old one is kept). Ignored while a reply runs in this conversation.
        """
        text = text.strip()
        if not text or self.is_busy():
            return None
        if self._current is None:
            self.new_conversation()
        tree = self._trees[str(self._current)]
        edited = self._editing.pop(tree.conversation.id, None)
        if edited is not None:
            self.editing_changed.emit(False)
            parent_id = tree.get(edited).parent_id
        else:
            last = tree.last()
            parent_id = last.id if last is not None else None
        user = self._add_user(tree, text, parent_id=parent_id, replaces=edited)
        return self._begin_reply(tree, user, store_first=[user])

    def _add_user(
        self, tree: ConversationTree, text: str, *, parent_id: str | None, replaces: str | None
    ) -> Message:
        previous = tree.last()
        conversation_id = tree.conversation.id
        user = Message(new_id(), conversation_id, parent_id, ROLE_USER, text)
        tree.add(user)
        if replaces is not None:
            self.path_changed.emit(conversation_id, replaces, [self._view(tree, user)])
            return user
        if previous is not None and previous.role == ROLE_ASSISTANT:
            self.message_updated.emit(self._view(tree, previous))  # its Continue button goes
        self.message_added.emit(conversation_id, self._view(tree, user))
        return user

    def _begin_reply(
        self, tree: ConversationTree, parent: Message, *, store_first: list[Message]
    ) -> str:
        conversation = tree.conversation
        assistant = Message(
            id=new_id(),
            conversation_id=conversation.id,
            parent_id=parent.id,
            role=ROLE_ASSISTANT,
            content="",
            status=STATUS_STREAMING,
            model=conversation.model or self._prefs.settings.last_model,
        )
        tree.add(assistant)
        self._start(assistant, self._send_flow(tree, assistant, store_first=store_first))
        self.turn_started.emit(conversation.id, assistant.id)
        index, count = tree.sibling_position(assistant.id)
        if count > 1:
            self.siblings_changed.emit(assistant.id, index - 1, count)
        return assistant.id

    # -- stop, regenerate, edit, continue, branches ----------------------------------------

    def regenerate(self, message_id: str) -> str | None:
        """A new reply to the same user message, as a sibling: the old reply stays a branch."""
        tree = self.current_tree()
        if tree is None or message_id not in tree or self.is_busy():
            return None
        message = tree.get(message_id)
        if message.role != ROLE_ASSISTANT or message.parent_id is None:
            return None
        self.path_changed.emit(tree.conversation.id, message_id, [])
        return self._begin_reply(tree, tree.get(message.parent_id), store_first=[])

    def start_edit(self, message_id: str) -> None:
        """Put a user message in the composer; the next send makes a new branch from it."""
        tree = self.current_tree()
        if tree is None or message_id not in tree or tree.get(message_id).role != ROLE_USER:
            return
        self._editing[tree.conversation.id] = message_id
        self.composer_text_requested.emit(tree.get(message_id).content)
        self.editing_changed.emit(True)

    def edit_last(self) -> None:
        """Up in an empty composer: edit the last user message on the path."""
        tree = self.current_tree()
        users = [m for m in tree.path() if m.role == ROLE_USER] if tree is not None else []
        if users:
            self.start_edit(users[-1].id)

    def cancel_edit(self) -> None:
        if self._current is not None and self._editing.pop(self._current, None) is not None:
            self.editing_changed.emit(False)

    def continue_reply(self, message_id: str) -> str | None:
        """Continue a reply cut at max_tokens, as a new user turn and a new assistant message.

        A new message rather than text appended to the old one, because every assistant
        message keeps the exact request, usage and timings that produced it: appending would
        mix two requests' records, and a failed continuation could put the saved text at
        risk. The "Continue" user message is stored too, so the tree shows what the model saw.
        """
        tree = self.current_tree()
        if tree is None or message_id not in tree or self.is_busy():
            return None
        if not presenting.message_data(tree, tree.get(message_id)).can_continue:
            return None
        user = self._add_user(tree, CONTINUE_PROMPT, parent_id=message_id, replaces=None)
        return self._begin_reply(tree, user, store_first=[user])

    def switch_branch(self, message_id: str, step: int) -> None:
        """Show the previous (-1) or next (+1) sibling of a message, and its branch."""
        tree = self.current_tree()
        if tree is None or message_id not in tree:
            return
        siblings = [m.id for m in tree.siblings(message_id)]
        index = siblings.index(message_id) + step
        if not 0 <= index < len(siblings):
            return
        tree.select(siblings[index])
        path = tree.path()
        start = next(i for i, m in enumerate(path) if m.id == siblings[index])
        shown = self._views(tree, path[start:])
        self.path_changed.emit(tree.conversation.id, message_id, shown)
        self._save_selection(tree)

    def reveal(self, message_id: str) -> bool:
        """Put a message of the open conversation on screen (a search hit, a find match).

        On a branch that is not shown (an earlier version of an edited message, a regenerated
        reply's older sibling), that branch is chosen and saved, as with the 1/2 switcher. A reply
        streaming on the branch left keeps running and is saved; it is only off screen.
        False when the message is not in the open conversation.
        """
        tree = self.current_tree()
        if tree is None or message_id not in tree:
            return False
        before = self._choose_branch(tree, message_id)
        if before is not None:
            after = tree.path()
            pairs = enumerate(zip(before, after, strict=False))
            fork = next((i for i, (a, b) in pairs if a.id != b.id), len(before))
            first = before[fork].id if fork < len(before) else after[fork].id
            self.path_changed.emit(tree.conversation.id, first, self._views(tree, after[fork:]))
        return True

    def _choose_branch(self, tree: ConversationTree, message_id: str) -> list[Message] | None:
        """Choose the branch holding a message (saved); the path shown before, or None when
        the message was on it already."""
        chain = tree.path_to(message_id)
        chosen = (tree.chosen_child(m.parent_id) for m in chain)
        if all(c is not None and c.id == m.id for c, m in zip(chosen, chain, strict=True)):
            return None
        before = tree.path()
        tree.select(message_id)
        self._save_selection(tree)
        return before

    def _save_selection(self, tree: ConversationTree) -> None:
        self._save_conversation(tree, "save-branch", selected=dict(tree.selected))

    def _save_conversation(self, tree: ConversationTree, job: str, **fields: Any) -> None:
        """Save some fields of a stored conversation in a kept background job."""
        if tree.conversation.id in self.writer.stored:
            self._jobs.spawn(self._update_conversation(tree.conversation.id, fields), name=job)

    async def _update_conversation(self, conversation_id: str, fields: dict[str, Any]) -> None:
        # The store call is made here, not by the caller: a save cancelled at quit before it
        # started then leaves no coroutine unawaited (a RuntimeWarning at shutdown).
        await self.writer.guard(self.writer.store.update_conversation(conversation_id, **fields))

    # -- the retry banner's actions --------------------------------------------------------

    def retry_now(self) -> None:
        """Cut the countdown short; after the retry budget, send the failed reply again."""
        reply = self._retrying_here()
        if reply is not None:
            reply.sleep.cut()
        else:
            self.retry_failed()

    def wait_in_queue(self) -> None:
        """Send the reply again once with "Reject if busy" off: wait in Cloudflare's queue."""
        reply = self._retrying_here()
        if reply is not None:
            self._requeue(reply, reject_if_busy=False)
        elif (failed := self._failed_here()) is not None:
            self._rerun(failed, reject_if_busy=False)

    def cancel_retry(self) -> None:
        """Stop retrying: the reply is marked failed with its error; nothing is invented."""
        reply = self._retrying_here()
        if reply is not None:
            self._jobs.spawn(self._cancel(reply.message.id, CANCEL_RETRY), name="cancel-retry")
        elif self._current is not None:
            self._failed.pop(self._current, None)

    def retry_failed(self, message_id: str | None = None) -> None:
        """Retry a failed or interrupted reply: in place when it has no text, else as a sibling
        (an interrupted reply's partial text is kept as its own branch)."""
        target = message_id or self._failed_here()
        tree = self.current_tree()
        if target is None or tree is None or target not in tree or self.is_busy():
            return
        message = tree.get(target)
        if message.content or message.reasoning:
            self.regenerate(target)
        else:
            self._rerun(target, reject_if_busy=None)

    def _requeue(self, reply: Reply, *, reject_if_busy: bool | None) -> None:
        """Send a reply waiting to retry again at once (Wait in queue, Switch model…). Its task
        is cancelled now, while it has no text; a switched model shows the reply anew."""
        task = self._tasks.get(reply.message.id)
        if task is None:
            return
        reply.outcome = REQUEUE
        task.cancel()
        self._jobs.spawn(
            self._resend(task, reply, reject_if_busy=reject_if_busy), name="requeue-reply"
        )

    async def _resend(
        self, task: asyncio.Task[None], reply: Reply, *, reject_if_busy: bool | None
    ) -> None:
        await asyncio.gather(task, return_exceptions=True)
        message = reply.message
        if reply.banner_shown:
            reply.banner_shown = False
            self.retry_cleared.emit(message.id)
        tree = self._trees.get(reply.conversation_id)
        if tree is None or message.id in self._tasks:
            return
        switched = message.model != reply.request.model
        if switched:
            self.path_changed.emit(tree.conversation.id, message.id, [])
        self._start(message, self._rerun_flow(tree, message, reject_if_busy=reject_if_busy))
        if switched:
            self.turn_started.emit(tree.conversation.id, message.id)

    def _rerun(self, message_id: str, *, reject_if_busy: bool | None) -> None:
        tree = self.current_tree()
        if tree is None or message_id not in tree or self.is_busy():
            return
        message = tree.get(message_id)
        message.status, message.error, message.finish_reason = STATUS_STREAMING, None, None
        self._failed.pop(tree.conversation.id, None)
        self.path_changed.emit(tree.conversation.id, message_id, [])
        self._start(message, self._rerun_flow(tree, message, reject_if_busy=reject_if_busy))
        self.turn_started.emit(tree.conversation.id, message_id)
