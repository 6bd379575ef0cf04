"""`host-shim mcp` driven by the official MCP Python SDK (`mcp` on PyPI), as a client
such as Claude Code drives it: spawn the server on stdio, list the tools, call each.

Run by `.ci/run` (which installs the pinned SDK in a venv):
    HOST_SHIM=target/debug/host-shim python tests/mcp/client_test.py
Each check prints one line; the first failure stops with a message saying what differed.
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp import MCPError as McpError

ROOT = Path(__file__).resolve().parents[2]
HOST_SHIM = os.environ.get("HOST_SHIM", str(ROOT / "target" / "debug" / "host-shim"))
CORPUS = str(ROOT / "tests" / "corpora" / "harness.json")
SCRATCH = Path(tempfile.mkdtemp(prefix="mcp-client-"))


def check(condition, what):
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what.splitlines()[0]}")


def server(*args, env=None):
    # A scratch compiled-plugin cache; the SDK passes only a few variables of its own.
    env = {"XDG_CACHE_HOME": str(SCRATCH / "cache"), **(env or {})}
    return StdioServerParameters(command=HOST_SHIM, args=["mcp", *args], env=env)


def text(result):
    return "\n".join(block.text for block in result.content)


async def session(params, body):
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            await client.initialize()
            await body(client)


async def the_tools_and_their_answers():
    deliveries = SCRATCH / "deliveries.json"
    catalog = json.loads(subprocess.run(
        [HOST_SHIM, "catalog"], check=True, capture_output=True, text=True,
        env={**os.environ, "XDG_CACHE_HOME": str(SCRATCH / "cache")},
    ).stdout)

    async def body(client):
        listed = (await client.list_tools()).tools
        check([t.name for t in listed] == ["sessions_list", "sessions_read", "sessions_send", "sessions_claim"],
              "tools/list gives the plugin's four tools")
        for tool, spec in zip(listed, catalog):
            check(tool.description == spec["description"] and tool.input_schema == spec["input_schema"],
                  f"{tool.name}: description and inputSchema are the plugin's own, unchanged")
            shown = tool.annotations.model_dump(by_alias=True, exclude_none=True)
            check(shown == spec["annotations"],
                  f"{tool.name}: the plugin's annotations reach the client: {shown}")
        hints = {t.name: t.annotations for t in listed}
        check(hints["sessions_read"].read_only_hint is True and hints["sessions_list"].read_only_hint is True
              and hints["sessions_send"].read_only_hint is False and hints["sessions_send"].destructive_hint is False
              and hints["sessions_send"].idempotent_hint is True and hints["sessions_send"].open_world_hint is False,
              "a client reads list and read as read-only, send as additive, idempotent and closed-world")

        answer = await client.call_tool("sessions_list", {"scope": "all"})
        check(not answer.is_error and "- s-me [live, top-level] | cwd=" in text(answer)
              and "| this session" in text(answer) and "considered sessions" in text(answer),
              f"an answer is a text result without isError:\n{text(answer)}")

        refusal = await client.call_tool("sessions_read", {"session_id": "s-nobody"})
        check(refusal.is_error and text(refusal).startswith("sessions_read refused (not-found): "),
              f"a refusal is a text result with isError:\n{text(refusal)}")

        bad = await client.call_tool("sessions_list", {"limit": 500})
        check(bad.is_error and text(bad) == "invalid arguments: limit must be an integer from 1 to 200 (got 500)",
              f"bad arguments are a refusal with isError:\n{text(bad)}")

        claimed = await client.call_tool("sessions_claim", {"paths": ["notes.md"], "reason": "MCP check"})
        check(not claimed.is_error and text(claimed).startswith("claimed c-")
              and "/w/me/notes.md" in text(claimed),
              f"a claim is granted as a text result without isError:\n{text(claimed)}")
        released = await client.call_tool("sessions_claim", {"release": True})
        check(not released.is_error and text(released).startswith("released c-"),
              f"the claim is released:\n{text(released)}")

        not_messageable = await client.call_tool("sessions_send", {"session_id": "s-kid", "message": "hi"})
        check(not_messageable.is_error and "(not-messageable)" in text(not_messageable),
              "a send to a subagent is refused with isError")

        # The same tool call twice (Claude Code retries with the same tool-use id): one delivery.
        meta = {"claudecode/toolUseId": "toolu_01MCPTEST"}
        send = {"session_id": "s-cold", "message": "Docs can ship."}
        first = await client.call_tool("sessions_send", send, meta=meta)
        again = await client.call_tool("sessions_send", send, meta=meta)
        check(not first.is_error and text(first).startswith("accepted for s-cold | mode=queue | chars=14 | hop=1 (woke a cold session)"),
              f"an accepted send:\n{text(first)}")
        check(text(again) == text(first) and not again.is_error,
              f"the retried call is accepted again with the same text:\n{text(again)}")
        recorded = [json.loads(line) for line in deliveries.read_text().splitlines()]
        check(len(recorded) == 1 and recorded[0]["target"] == "s-cold"
              and recorded[0]["key"] == "4:s-metoolu_01MCPTEST"
              and recorded[0]["body"].endswith("--- message begins ---\nDocs can ship.\n--- message ends ---"),
              f"the deliveries file holds the one delivery, with its key: {recorded}")
        read = await client.call_tool("sessions_read", {"session_id": "s-cold", "max_messages": 1})
        check("Docs can ship." in text(read) and "[live, top-level]" in text(read),
              "the delivery shows in the next read, on the same server")

        # Without a call id, each new message delivers; the same words from the same
        # caller again are a repeat (SPEC, "Repeats a host should catch").
        await client.call_tool("sessions_send", {"session_id": "s-live", "message": "one"})
        await client.call_tool("sessions_send", {"session_id": "s-live", "message": "two"})
        again = await client.call_tool("sessions_send", {"session_id": "s-live", "message": "one"})
        check(len(deliveries.read_text().splitlines()) == 3 and not again.is_error,
              "sends without a call id each deliver, the same words again once")

        # Contract 0.4.0's arguments pass through: a send that awaits its reply (over a
        # corpus no other session can reply: the answer says none came).
        awaited = await client.call_tool("sessions_send", {"session_id": "s-live", "message": "three",
                                                           "await_reply_seconds": 5})
        check(not awaited.is_error and text(awaited).endswith(
                  "Waiting up to 5 seconds for its reply.\n"
                  "No reply within 5 seconds; it will reach you like any other message."),
              f"a send awaits its reply through MCP: {text(awaited)!r}")
        paged = await client.call_tool("sessions_read", {"session_id": "s-cold", "before_seq": 2,
                                                         "include_actions": True})
        check(not paged.is_error and text(paged).startswith("session s-cold ["),
              f"a read pages back and shows actions through MCP: {text(paged)[:200]!r}")

        # Calls in flight at once are served at once.
        many = await asyncio.gather(*[
            client.call_tool("sessions_list", {"limit": 1}) for _ in range(8)
        ])
        check(all(not r.is_error and "1 of " in text(r) for r in many), "eight calls at once are all answered")

        try:
            await client.call_tool("sessions_kill", {})
            check(False, "an unknown tool is a protocol error")
        except McpError as err:
            check("unknown tool" in str(err), f"an unknown tool is a protocol error: {err}")

    await session(server("--corpus", CORPUS, "--deliveries", str(deliveries)), body)


async def the_caller_comes_from_the_client():
    async def body(client):
        answer = await client.call_tool("sessions_list", {"scope": "all"})
        check("- s-live [live, top-level] | cwd=/w/parser | preset=standard | this session\n" in text(answer)
              and text(answer).count("| this session") == 1,
              f"CLAUDE_CODE_SESSION_ID names the caller:\n{text(answer)}")

    await session(server("--corpus", CORPUS, env={"CLAUDE_CODE_SESSION_ID": "s-live"}), body)


async def no_caller():
    empty = SCRATCH / "empty.json"
    empty.write_text('{"sessions": [{"id": "a", "created_at": "2026-01-01T00:00:00Z"}]}')

    async def body(client):
        check(len((await client.list_tools()).tools) == 4, "without a caller the server still lists its tools")
        answer = await client.call_tool("sessions_list", {})
        check(answer.is_error and "--caller ID" in text(answer) and "CLAUDE_CODE_SESSION_ID" in text(answer),
              f"without a caller a call says how to name one:\n{text(answer)}")

    await session(server("--corpus", str(empty)), body)


async def a_disabled_deployment():
    settings = SCRATCH / "disabled.json"
    settings.write_text('{"enabled": false}')

    async def body(client):
        check((await client.list_tools()).tools == [], "enabled: false lists no tools")
        try:
            await client.call_tool("sessions_list", {})
            check(False, "a call on a disabled deployment is a protocol error")
        except McpError as err:
            check("unknown tool" in str(err), f"a call on a disabled deployment is a protocol error: {err}")

    await session(server("--corpus", CORPUS, "--settings", str(settings)), body)


async def claude_code_end_to_end():
    """Two Claude Code sessions of the project's fixtures: one sends, the other's Stop
    hook hands the message over."""
    projects = str(ROOT / "host-shim" / "harnesses" / "claude-code" / "fixtures" / "projects")
    state = SCRATCH / "state"
    sender = "11111111-aaaa-4aaa-8aaa-000000000001"
    target = "22222222-bbbb-4bbb-8bbb-000000000002"

    def hook(event, session):
        return subprocess.run(
            [HOST_SHIM, "claude-hook", "--state-dir", str(state)],
            input=json.dumps({"session_id": session, "hook_event_name": event,
                              "transcript_path": "/x.jsonl", "cwd": "/home/ada/shop"}),
            check=True, capture_output=True, text=True,
        ).stdout

    async def body(client):
        listing = await client.call_tool("sessions_list", {"scope": "all"})
        check(not listing.is_error and "7 of 7 considered sessions" in text(listing)
              and f"- {sender} [live, top-level] | cwd=/home/ada/shop | preset=claude-opus-4-5-20251101 | this session\n  Checkout: split into steps"
              in text(listing) and "- agent-a1b2c3d4 [cold, subagent]" in text(listing),
              f"the Claude Code sessions and subagents are listed, the server's own session live:\n{text(listing)}")
        read = await client.call_tool("sessions_read", {"session_id": target})
        check(not read.is_error and "--- user (seq 15, user, replaced) ---" in text(read)
              and "SECRET" not in text(read) and "system-reminder" not in text(read),
              f"a read shows the surface after the compaction, no thinking, tool output or reminders:\n{text(read)}")
        meta = {"claudecode/toolUseId": "toolu_01E2E"}
        send = {"session_id": target, "message": "The clock fix is merged; rebase."}
        first = await client.call_tool("sessions_send", send, meta=meta)
        again = await client.call_tool("sessions_send", send, meta=meta)
        check(not first.is_error and text(first).startswith(f"accepted for {target} | mode=queue | chars=32 | hop=1 | id=m-")
              and text(again) == text(first),
              f"the send is accepted, and its retry with the same tool-use id too:\n{text(first)}")
        spooled = list((state / "inbox" / target).iterdir())
        check(len(spooled) == 1, f"one message in the target's spool: {spooled}")
        check(len(list((state / "live").iterdir())) == 1, "the server registered its session as live")

    await session(server("--claude-projects", projects, "--state-dir", str(state),
                         env={"CLAUDE_CODE_SESSION_ID": sender}), body)
    check(list((state / "live").iterdir()) == [], "the registration is cleared when the server ends")
    check(hook("PostToolUse", target) == "", "a tool use in the target does not take a queued message")
    answer = json.loads(hook("Stop", target))["hookSpecificOutput"]
    context = answer["additionalContext"]
    check(answer["hookEventName"] == "Stop" and context.startswith(
        "Cross-session message from another session of this harness.\n"
        f"from-session: {sender} (\"Checkout: split into steps\")\ndelivery: queue\nhop: 1\n"
        "message-id: m-") and context.endswith(
        "\n--- message begins ---\nThe clock fix is merged; rebase.\n--- message ends ---"),
        f"the target's Stop hook hands the message over as its next turn: {answer}")
    check(hook("Stop", target) == "", "it is handed over once")


async def main():
    await the_tools_and_their_answers()
    await claude_code_end_to_end()
    await the_caller_comes_from_the_client()
    await no_caller()
    await a_disabled_deployment()
    print("all MCP client checks passed")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
