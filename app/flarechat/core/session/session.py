"""ChatSession: one conversation's operations — send, stop, regenerate, edit, continue,
branches, compare, tools, licences, the retry banner's actions — coordinated over its rooms."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flarechat.api.retry import RetryPolicy
from flarechat.core.conversation import ROLE_ASSISTANT, Attachment, ConversationTree, Message
from flarechat.core.current_model import model_in_use
from flarechat.core.session import capabilities
from flarechat.core.session.branches import Branches
from flarechat.core.session.capabilities import (
    Catalogue,
    Licences,
    Refusal,
    SchemaBook,
    SendRefused,
    refusal_for,
)
from flarechat.core.session.events import (
    ConversationStored,
    PathChanged,
    RetryPlanned,
    SessionListener,
    StoreTrouble,
)
from flarechat.core.session.gate import ModelGate
from flarechat.core.session.launching import ReplyLauncher
from flarechat.core.session.requests import ColumnSpec, RequestMaker, TurnSettings
from flarechat.core.session.retrying import RetryActions
from flarechat.core.session.running import ReplyRunner
from flarechat.core.session.saving import ConversationSaver, Recovery, SessionStore
from flarechat.core.session.structured import JsonVerdict
from flarechat.core.session.turns import Turns, can_continue
from flarechat.core.store import STREAM_SAVE_INTERVAL
from flarechat.core.tasks import TaskKeeper
from flarechat.core.turn import ChatStreamer

__all__ = ["ChatSession"]


class ChatSession:
    """One conversation's turns. Operations are plain calls that start kept tasks; what
    happens is reported to ``listener`` as events (``core.session.events``).

    Turn state is kept per message id, so a reply keeps streaming while the conversation is
    off screen, and nothing is shared with other sessions but the optional ``gate``.
    """

    def __init__(
        self,
        tree: ConversationTree,
        *,
        client: ChatStreamer,
        store: SessionStore,
        settings: TurnSettings,
        listener: SessionListener,
        stored: bool = True,
        gate: ModelGate | None = None,
        policy_factory: Callable[[], RetryPolicy] = RetryPolicy,
        clock: Callable[[], float] = time.monotonic,
        save_interval: float = STREAM_SAVE_INTERVAL,
        catalogue: Catalogue | None = None,
        schemas: SchemaBook | None = None,
    ) -> None:
        self.tree = tree
        self._client = client
        #: what the catalogue says of a model: vision (images are refused without), terms URL…
        self._catalogue = catalogue
        self._settings = settings
        self._emit = listener
        self._clock = clock
        self._saver = ConversationSaver(
            store, tree.conversation, stored=stored, report=self._trouble
        )
        self._jobs = TaskKeeper(f"session:{tree.conversation.id[:8]}")
        self._recovery = Recovery(
            self._saver,
            name=f"recover:{tree.conversation.id[:8]}",
            on_written=lambda: listener(ConversationStored(tree.conversation.id)),
        )
        self._requests = RequestMaker(
            tree,
            client=client,
            settings=settings,
            catalogue=catalogue,
            schemas=schemas if schemas is not None else SchemaBook(),
        )
        self._licences = Licences(
            tree.conversation.id,
            client=client,
            store=store,
            settings=settings,
            catalogue=catalogue,
            emit=listener,
        )
        self._compose_replies(
            client, gate=gate, policy_factory=policy_factory, save_interval=save_interval
        )

    def _compose_replies(
        self,
        client: ChatStreamer,
        *,
        gate: ModelGate | None,
        policy_factory: Callable[[], RetryPolicy],
        save_interval: float,
    ) -> None:
        """The rooms that add, start, run and retry this conversation's replies."""
        tree, listener, clock = self.tree, self._emit, self._clock
        self._runner = ReplyRunner(
            tree.conversation.id,
            client=client,
            saver=self._saver,
            emit=listener,
            jobs=self._jobs,
            renew=self._licences.renew,
            gate=gate,
            policy_factory=policy_factory,
            clock=clock,
            save_interval=save_interval,
        )
        self._launcher = ReplyLauncher(
            tree,
            runner=self._runner,
            requests=self._requests,
            saver=self._saver,
            emit=listener,
            jobs=self._jobs,
            clock=clock,
        )
        self._turns = Turns(
            tree,
            launcher=self._launcher,
            requests=self._requests,
            emit=listener,
            clock=clock,
            model=self.model,
        )
        self._branches = Branches(
            tree,
            emit=listener,
            save_selected=lambda: self._save_fields(selected=dict(tree.selected)),
        )
        self._retry = RetryActions(
            tree,
            runner=self._runner,
            launcher=self._launcher,
            requests=self._requests,
            regenerate=self.regenerate,
            emit=listener,
            jobs=self._jobs,
            clock=clock,
        )

    # -- queries ---------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.tree.conversation.id

    @property
    def stored(self) -> bool:
        return self._saver.stored

    @property
    def is_busy(self) -> bool:
        return self._launcher.is_busy

    @property
    def unsaved(self) -> int:
        return self._saver.unsaved

    def is_running(self, message_id: str) -> bool:
        return self._launcher.is_running(message_id)

    def running(self) -> list[str]:
        return self._launcher.running()

    def model(self) -> str:
        """The current model (``core.current_model``): the conversation's own, else its last
        reply's (a chat made by compare), else the default."""
        return model_in_use(
            self.tree.conversation, self.tree.path(), default=self._settings.default_model()
        )

    def live_text(self, message_id: str) -> tuple[str, str] | None:
        """What a running reply has received so far (text, reasoning), else None."""
        return self._runner.live_text(message_id)

    def pending_retry(self) -> RetryPlanned | None:
        """The retry countdown now running (delay = seconds left), to re-show its banner."""
        return self._retry.pending()

    # -- sending ---------------------------------------------------------------------------

    def send(self, text: str, *, images: Sequence[Attachment] = ()) -> str | None:
        """Send ``text`` (and ``images``); returns the reply's message id (None when there is
        nothing to send, or while busy).

        Raises :class:`SendRefused` before anything is added when the message cannot go to the
        model as it is: images for a model whose catalogue entry says it has no vision
        (``refusal.kind == "no_vision"``; offer to switch to a vision model, then send again).
        While an edit is pending, the new message becomes a sibling of the edited one (a new
        branch; the old one is kept).
        """
        text = text.strip()
        if (not text and not images) or self.is_busy:
            return None
        if (refusal := self.refusal(images)) is not None:
            raise SendRefused(refusal)
        if (edited := self._branches.take_edit()) is not None:
            parent_id = self.tree.get(edited).parent_id
        else:
            last = self.tree.last()
            parent_id = last.id if last is not None else None
        user = self._turns.add_user(text, parent_id=parent_id, replaces=edited, images=images)
        return self._turns.begin_reply(user, store_first=[user])

    def refusal(self, images: Sequence[Attachment], model: str | None = None) -> Refusal | None:
        """Why ``images`` could not be sent to ``model`` (default: the conversation's), or None.

        The composer can ask this as images are attached, before the user presses Send.
        """
        return refusal_for(model or self.model(), images, self._catalogue)

    def send_compare(
        self,
        text: str,
        columns: Sequence[ColumnSpec],
        *,
        after: Sequence[str | None] | None = None,
    ) -> list[str] | None:
        """Send one prompt to every column at once (or each column its own ``ColumnSpec.prompt``);
        returns each column's reply id, in order.

        The first round shares one user message and its replies are siblings (the columns);
        a follow-up (``after``: each column's last reply id) continues each column's own
        branch. Every reply runs, retries and fails on its own. None when busy or empty.
        """
        texts = [(c.prompt if c.prompt is not None else text).strip() for c in columns]
        if not columns or not all(texts) or self.is_busy:
            return None
        if after is not None and len(after) != len(columns):
            raise ValueError("A follow-up needs one previous reply per column.")
        self.cancel_edit()
        return self._turns.compare(texts, columns, after=after)

    # -- saving ----------------------------------------------------------------------------

    def _trouble(self, problem: str | None, unsaved: int) -> None:
        self._emit(StoreTrouble(self.id, problem, unsaved))
        if problem is not None:
            self._recovery.start()

    def _save_fields(self, **fields: Any) -> None:
        self._jobs.spawn(self._saver.update(**fields), name="save-conversation")

    # -- stop, regenerate, edit, continue, branches ----------------------------------------

    def stop(self, message_id: str | None = None) -> None:
        """Stop a reply (default: every reply of this conversation); its text so far is kept."""
        self._launcher.stop(message_id)

    async def stop_all(self) -> None:
        """Stop every reply and wait until each is saved."""
        await self._launcher.stop_all()

    def regenerate(self, message_id: str) -> str | None:
        """A new reply to the same user message, as a sibling: the old reply stays a branch."""
        if message_id not in self.tree or self.is_busy:
            return None
        message = self.tree.get(message_id)
        if message.role != ROLE_ASSISTANT or message.parent_id is None:
            return None
        self._emit(PathChanged(self.id, message_id))
        return self._turns.begin_reply(self.tree.get(message.parent_id), store_first=[])

    def start_edit(self, message_id: str) -> None:
        """Put a user message in the composer; the next send makes a new branch from it."""
        self._branches.start_edit(message_id)

    def edit_last(self) -> None:
        """Up in an empty composer: edit the last user message on the path."""
        self._branches.edit_last()

    def cancel_edit(self) -> None:
        self._branches.cancel_edit()

    def continue_reply(self, message_id: str) -> str | None:
        """Continue a reply cut at max_tokens: the same message grows from where it stopped
        (its id is returned; None when it cannot be continued, or while busy).

        The request is the conversation up to and including the reply so far, as an assistant
        prefill, or for a reasoning model that plus a user turn asking it to go on, sent but
        never stored (``core.session.continuing``). Its text is appended to the reply, whose
        usage becomes the sum of its requests' and whose request record the last one's; a
        continuation that fails or is stopped keeps the text before it, still cut short.
        """
        if message_id not in self.tree or self.is_busy:
            return None
        message = self.tree.get(message_id)
        if not can_continue(self.tree, message):
            return None
        self._launcher.extend(message)
        return message_id

    def switch_branch(self, message_id: str, step: int) -> None:
        """Show the previous (-1) or next (+1) sibling of a message, and its branch."""
        self._branches.switch(message_id, step)

    def reveal(self, message_id: str) -> bool:
        """Put a message (a search hit) on the visible path; False when it is not in here."""
        return self._branches.reveal(message_id)

    def choose_branch(self, message_id: str) -> list[Message] | None:
        """Choose (and save) the branch holding a message; the path shown before, or None."""
        return self._branches.choose(message_id)

    # -- model and options -----------------------------------------------------------------

    def set_model(self, model: str) -> None:
        """Use ``model`` from now on (saved with the conversation). A reply held up by
        capacity, or failed because its model is unavailable, is sent again with it."""
        self.tree.conversation.model = model
        self._save_fields(model=model)
        self.switch_model(model)

    def set_options(self, system_prompt: str, params: Mapping[str, Any]) -> None:
        """The conversation's system prompt and sampling parameters (saved with it)."""
        conversation = self.tree.conversation
        conversation.system_prompt, conversation.params = system_prompt, dict(params)
        self._save_fields(system_prompt=system_prompt, params=dict(params))

    # -- tools, JSON replies, licences ------------------------------------------------------

    def send_tool_results(self, reply_id: str, results: Mapping[str, str]) -> str | None:
        """Answer a reply's tool calls: one ``tool`` message per call (in the calls' order,
        each with its call id), then the model's next reply, whose id is returned.

        ``results`` maps every call id of the reply to its result text (a typed answer or a
        tool's canned one). None when the reply is not the last message on the path or the
        session is busy; ValueError when a call has no result or a result names no call.
        """
        if self.is_busy:
            return None
        if (ids := capabilities.tool_call_ids(self.tree, reply_id, results)) is None:
            return None
        self.cancel_edit()
        return self._turns.answer_tools(reply_id, [(i, results[i]) for i in ids])

    def json_verdict(self, message_id: str) -> JsonVerdict | None:
        """Whether a reply asked for as JSON parses and follows the schema it was asked for
        (read from its request record); None for a reply that was not asked for JSON."""
        return capabilities.json_verdict(self.tree, message_id)

    def agree_terms(self, message_id: str | None = None) -> bool:
        """ "Agree and continue" on a 5016 banner: accept the model's licence for the account
        (the documented agreement request), remember it, then send the held reply again.

        False when the reply (default: the failed one) did not fail for licence terms or the
        client cannot agree; the outcome comes as events (Notice, then the reply's TurnStarted
        …, or a TurnFailed when the agreement did not go through).
        """
        target = message_id or self._runner.failed
        if target is None or target not in self.tree or self._launcher.is_running(target):
            return False
        message = self.tree.get(target)
        if not self._licences.can_agree(message):
            return False
        self._jobs.spawn(self._agree_and_rerun(message), name="agree-terms")
        return True

    async def _agree_and_rerun(self, message: Message) -> None:
        if await self._licences.agree(message, message.model or self.model()):
            self._launcher.rerun(message.id, reject_if_busy=None)

    # -- the retry banner's actions (``retrying``) -----------------------------------------

    def retry_now(self, message_id: str | None = None) -> None:
        """Cut the countdown short; after the retry budget, send the failed reply again."""
        self._retry.retry_now(message_id)

    def wait_in_queue(self, message_id: str | None = None) -> None:
        """Send the reply again once with "Reject if busy" off: wait in Cloudflare's queue."""
        self._retry.wait_in_queue(message_id)

    def switch_model(self, model: str, message_id: str | None = None) -> None:
        """Send the reply waiting on capacity (or failed: model unavailable) with ``model``."""
        self._retry.switch_model(model, message_id)

    def cancel_retry(self, message_id: str | None = None) -> None:
        """Stop retrying: the reply is marked failed with its error; nothing is invented."""
        self._retry.cancel_retry(message_id)

    def retry_failed(self, message_id: str | None = None) -> None:
        """Retry a failed or interrupted reply: in place when it has no text, else a sibling."""
        self._retry.retry_failed(message_id)

    # -- lifetime --------------------------------------------------------------------------

    async def shutdown(self) -> None:
        """Stop every reply (partial text saved as "stopped"), then every job; one last
        attempt to write anything a failed save kept."""
        await self.stop_all()
        await self._recovery.stop()
        await self._jobs.aclose()
        if self._saver.failing:
            with contextlib.suppress(Exception):
                await self._saver.flush()

    async def drain(self) -> None:
        """Wait until no reply or job runs (tests)."""
        await self._launcher.drain()
