"""`/bot<token>/<method>`: the Bot API endpoint, its method table, faults and error answers.

Method names match case-insensitively and are counted under their proper names (`calls`), as
Telegram's do; a fault rule (`faults.Failures`) is applied before the method runs, or after it
for a garbled answer, so a test can tell a call that took effect from one that did not.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from sandbox.telegram.commands import Commands, Profile
from sandbox.telegram.faults import Failures
from sandbox.telegram.inline import InlineAnswers
from sandbox.telegram.messages import Messages
from sandbox.telegram.params import TEST_ENVIRONMENT, ApiError, Params, read_params
from sandbox.telegram.state import Bot, State
from sandbox.telegram.updates import Updates

Method = Callable[[Bot, Params], Awaitable[Any]]
Answer = dict[str, Any]  # the JSON body of an answer: {"ok": ..., "result" or "description"}
_UNAUTHORIZED = ApiError(401, "Unauthorized")


def _garbled(result: Any) -> Any:
    """A result as an emulator might answer it: a message with only its id (see `faults`)."""
    if isinstance(result, dict) and "message_id" in result:
        return {"message_id": result["message_id"]}
    return {}


def _answer(exc: ApiError) -> tuple[int, Answer]:
    body: Answer = {
        "ok": False,
        "error_code": exc.status,
        "description": exc.description,
    }
    if exc.parameters:
        body["parameters"] = exc.parameters
    return exc.status, body


async def _get_me(bot: Bot, params: Params) -> dict[str, Any]:
    return {
        **bot.user(),
        "can_join_groups": True,
        "can_read_all_group_messages": False,
        "supports_inline_queries": bot.inline_placeholder is not None,
        "can_connect_to_business": False,
        "has_main_web_app": False,
    }


async def _true(bot: Bot, params: Params) -> bool:
    return True


class BotApi:
    def __init__(
        self,
        state: State,
        *,
        messages: Messages,
        updates: Updates,
        commands: Commands,
        inline: InlineAnswers,
    ) -> None:
        self.state = state
        self.calls: collections.Counter[str] = collections.Counter()
        # Calls being answered right now, long polls left out (one is always waiting).
        self.in_flight = 0
        self.failures = Failures()
        profile = Profile(state)
        table: list[tuple[str, Method]] = [
            ("getMe", _get_me),
            ("getUpdates", updates.get_updates),
            ("setWebhook", updates.set_webhook),
            ("deleteWebhook", updates.delete_webhook),
            ("getWebhookInfo", updates.webhook_info),
            ("sendMessage", messages.send_message),
            ("editMessageText", messages.edit_text),
            ("editMessageReplyMarkup", messages.edit_markup),
            ("deleteMessage", messages.delete_message),
            ("answerCallbackQuery", messages.answer_callback),
            ("answerInlineQuery", inline.answer),
            ("sendChatAction", messages.send_chat_action),
            ("setMyCommands", commands.set_commands),
            ("getMyCommands", commands.get_commands),
            ("deleteMyCommands", commands.delete_commands),
            ("setMyDescription", profile.set_description),
            ("getMyDescription", profile.get_description),
            ("setMyShortDescription", profile.set_short_description),
            ("getMyShortDescription", profile.get_short_description),
            ("close", _true),
            ("logOut", _true),
        ]
        self._methods = {name.lower(): (name, method) for name, method in table}

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", r"/bot{token}/{method}", self.handle)
        app.router.add_route("*", r"/bot{token}/test/{method}", self.handle_test)

    async def handle(self, request: web.Request, *, test: bool = False) -> web.Response:
        token = request.match_info["token"]
        method_name = request.match_info["method"]
        status, body = await self.call(token, method_name, lambda: read_params(request), test)
        return web.json_response(body, status=status)

    async def handle_test(self, request: web.Request) -> web.Response:
        """Telegram's test environment (`/bot<token>/test/<method>`): the same bots and chats
        here, with the test environment's one difference the bot meets, http Mini Apps."""
        return await self.handle(request, test=True)

    async def call(
        self,
        token: str,
        method_name: str,
        read: Callable[[], Awaitable[Params]],
        test: bool = False,
    ) -> tuple[int, Answer]:
        """One Bot API call as its HTTP status and JSON body, whoever carried it here: the
        aiohttp route above, or an in-process request (`inprocess.StandInRequest`). `read`
        reads the parameters, after the token and the method were found (as Telegram);
        `test`: the call came to the test environment."""
        environment = TEST_ENVIRONMENT.set(test)
        try:
            return await self._call(token, method_name, read)
        finally:
            TEST_ENVIRONMENT.reset(environment)

    async def _call(
        self, token: str, method_name: str, read: Callable[[], Awaitable[Params]]
    ) -> tuple[int, Answer]:
        bot = self.state.bots.get(token)
        found = self._methods.get(method_name.lower())
        self.calls[found[0] if found else method_name] += 1
        if bot is None:
            return _answer(_UNAUTHORIZED)
        if found is None:
            return _answer(ApiError(404, "Not Found"))
        name, method = found
        counted = name != "getUpdates"
        self.in_flight += counted
        try:
            params = await read()
            fault = self.failures.take(name)
            if fault is not None:
                if fault.delay:
                    await asyncio.sleep(fault.delay)
                if fault.status is not None:
                    parameters = {"retry_after": fault.retry_after} if fault.retry_after else None
                    raise ApiError(fault.status, fault.error_description(), parameters)
            result = await method(bot, params)
            if fault is not None and fault.garbled:
                result = _garbled(result)
        except ApiError as exc:
            return _answer(exc)
        finally:
            self.in_flight -= counted
        body: Answer = {"ok": True, "result": result}
        if name == "setWebhook":
            body["description"] = (
                "Webhook was set" if params.get("url") else "Webhook is already deleted"
            )
        return 200, body
