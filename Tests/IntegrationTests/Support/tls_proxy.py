#!/usr/bin/env python3
"""A TLS front for dispatch-sim on loopback: terminates TLS with the given certificate and forwards the bytes
to the plain HTTP port, both ways (HTTP and WebSocket alike). Prints the port it listens on, then serves until
killed. Usage: tls_proxy.py CERT KEY BACKEND_PORT"""
import socket
import ssl
import sys
import threading


def pump(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(client, context, backend_port):
    try:
        tls = context.wrap_socket(client, server_side=True)
    except (ssl.SSLError, OSError):
        client.close()
        return
    upstream = socket.create_connection(("127.0.0.1", backend_port))
    threading.Thread(target=pump, args=(tls, upstream), daemon=True).start()
    pump(upstream, tls)


def main():
    cert, key, backend_port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, context, backend_port), daemon=True).start()


if __name__ == "__main__":
    main()
