"""The bridge does not widen access to driverd: token, Origin and method list; it survives a 2 MiB frame and
200 connections."""
import asyncio
import json
import os

import pytest
import websockets
import websockets.exceptions
from websockets.asyncio.client import connect


def ws_url(stack, token):
    base = stack.origin.replace("http://", "ws://")
    return f"{base}/rpc" + (f"?token={token}" if token is not None else "")


async def _refused(url, origin):
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        async with connect(url, origin=origin, open_timeout=5):
            pass
    return refused.value.response.status_code


async def _call(ws, method, params=None, id=1):
    request = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        request["params"] = params
    await ws.send(json.dumps(request))
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message.get("id") == id:
            return message


def test_bridge_refuses_and_survives(parked_stack):
    asyncio.run(_bridge(parked_stack))


async def _bridge(stack):
    origin = stack.origin
    # Hummingbird answers a refused upgrade 400; the kiosk's log says why.
    assert await _refused(ws_url(stack, None), origin) == 400
    assert await _refused(ws_url(stack, "0" * 64), origin) == 400
    assert await _refused(ws_url(stack, stack.token), "http://evil.example") == 400
    assert await _refused(ws_url(stack, stack.token), None) == 400
    log = open(os.path.join(stack.dir, "driverd-kiosk.log")).read()
    for why in ("the kiosk token is missing", "the kiosk token is wrong", "origin http://evil.example is not the kiosk's",
                "no Origin header"):
        assert f"refused a WebSocket: {why}" in log, why

    async with connect(ws_url(stack, stack.token), origin=origin, max_size=None) as ws:
        for method in ("auth.logout", "diag.report", "config.show", "agent.setLogLevel", "pod.photo"):
            reply = await _call(ws, method, {"level": "trace", "path": "/etc/shadow"})
            assert reply["error"]["code"] == -32601, reply
        # A 2 MiB frame: refused with an error; the connection and the daemon carry on.
        big = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "route.get", "params": {"pad": "x" * (2 << 20)}})
        await ws.send(big)
        reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert reply["error"]["code"] == -32600, reply
        assert "result" in await _call(ws, "agent.describe", id=6)
        assert (await _call(ws, "not json", id=7))["error"]["code"] == -32601
        await ws.send("{broken")
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["error"]["code"] == -32700

    # 200 pages at once, each answered by its own connection to driverd.
    async def one(index):
        async with connect(ws_url(stack, stack.token), origin=origin, open_timeout=20) as ws:
            reply = await _call(ws, "agent.describe", id=index)
            return "result" in reply
    results = await asyncio.gather(*(one(i) for i in range(200)), return_exceptions=True)
    answered = sum(1 for r in results if r is True)
    assert answered == 200, [r for r in results if r is not True][:3]
    async with connect(ws_url(stack, stack.token), origin=origin) as ws:
        assert "result" in await _call(ws, "route.get")
