#!/usr/bin/env python3
"""A minimal WebSocket client (standard library only) for the package test: opens driverd-kiosk's bridge the
way the kiosk browser does and makes JSON-RPC calls through it.

    kiosk-probe.py URL METHOD [PARAMS_JSON] ...   prints each reply on a line
    kiosk-probe.py URL --status                   prints the HTTP status of the upgrade (101 when let in)
"""
import base64
import json
import os
import socket
import struct
import sys
from urllib.parse import urlsplit


def open_socket(url, origin):
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    query = f"?{parts.query}" if parts.query else ""
    request = (f"GET /rpc{query} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: {origin}\r\n\r\n")
    sock.sendall(request.encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    status = int(head.split(b" ", 2)[1]) if head else 0
    return sock, status


def send_text(sock, text):
    data = text.encode()
    mask = os.urandom(4)
    length = len(data)
    header = bytes([0x81]) + (bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + struct.pack(">H", length)
                              if length < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", length))
    sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def read_exact(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise EOFError("the kiosk closed the connection")
        data += chunk
    return data


def read_text(sock):
    first, second = read_exact(sock, 2)
    length = second & 0x7F
    if length == 126:
        length = struct.unpack(">H", read_exact(sock, 2))[0]
    elif length == 127:
        length = struct.unpack(">Q", read_exact(sock, 8))[0]
    payload = read_exact(sock, length)
    if first & 0x0F == 0x8:
        raise EOFError(f"closed: {payload[2:].decode(errors='replace')}")
    return payload.decode()


def main():
    url = sys.argv[1]
    parts = urlsplit(url)
    origin = os.environ.get("ORIGIN", f"http://{parts.hostname}:{parts.port}")
    sock, status = open_socket(url, origin)
    if sys.argv[2:] == ["--status"]:
        print(status)
        return
    if status != 101:
        sys.exit(f"the kiosk refused the WebSocket: HTTP {status}")
    args = sys.argv[2:]
    request_id = 0
    while args:
        method = args.pop(0)
        params = json.loads(args.pop(0)) if args and args[0].startswith("{") else None
        request_id += 1
        request = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            request["params"] = params
        send_text(sock, json.dumps(request))
        while True:
            reply = json.loads(read_text(sock))
            if reply.get("id") == request_id:
                print(json.dumps(reply))
                break


main()
