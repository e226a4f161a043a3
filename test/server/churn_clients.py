#!/usr/bin/env python3
"""Connection churn against lull serve's front end (test/server/overload_test.sh).

  churn_clients.py PORT TASK SECONDS CLIENTS

CLIENTS threads on loopback, each for SECONDS, over and over: connect, then
one move picked at random (a whole request and its answer, two on one
connection, part of a header, all but the last byte of the body, nothing,
a request left before its answer, a pause before the request), then close.
Every wait is bounded. Prints JSON: connections made, the statuses of the
answers read ({"200": n, "503": n, ...}; "none" for a connection closed
before an answer, which a client over the connection cap may see), and
connections refused by the OS.
"""
import json
import random
import socket
import sys
import threading
import time


def request(task, body):
    return (f"POST /predictions/{task} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def read_status(sock):
    """The status of one response, or None if the peer closed first (2 s at most)."""
    data = b""
    sock.settimeout(2)
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                return None
            data += chunk
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        length = 0
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        rest = data.split(b"\r\n\r\n", 1)[1]
        while len(rest) < length:
            chunk = sock.recv(4096)
            if not chunk:
                break
            rest += chunk
        return int(head.split(" ")[1])
    except (OSError, ValueError, IndexError):
        return None


def client(port, task, until, seed, counts, lock):
    rng = random.Random(seed)
    while time.monotonic() < until:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
        except OSError:
            with lock:
                counts["refused"] += 1
            continue
        statuses = []
        body = b"x" * rng.randint(1, 64)
        req = request(task, body)
        move = rng.randrange(7)
        try:
            if move == 0:
                sock.sendall(req)
                statuses.append(read_status(sock))
            elif move == 1:
                sock.sendall(req)
                statuses.append(read_status(sock))
                sock.sendall(request(task, body + b"y"))
                statuses.append(read_status(sock))
            elif move == 2:
                sock.sendall(req[: rng.randint(1, 30)])
                time.sleep(rng.random() * 0.02)
            elif move == 3:
                sock.sendall(req[:-1])
                time.sleep(rng.random() * 0.02)
            elif move == 5:
                sock.sendall(req)
            elif move == 6:
                time.sleep(rng.random() * 0.02)
                sock.sendall(req)
                statuses.append(read_status(sock))
        except OSError:
            statuses.append(None)
        finally:
            sock.close()
        with lock:
            counts["connections"] += 1
            for s in statuses:
                key = "none" if s is None else str(s)
                counts["statuses"][key] = counts["statuses"].get(key, 0) + 1


def main():
    port, task, seconds, clients = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    counts = {"connections": 0, "refused": 0, "statuses": {}}
    lock = threading.Lock()
    until = time.monotonic() + seconds
    threads = [threading.Thread(target=client, args=(port, task, until, i + 1, counts, lock)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
