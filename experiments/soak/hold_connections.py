#!/usr/bin/env python3
"""Holds abusive connections open against lull's front end for the soak
(experiments/soak.sh): N slowloris clients that send a request header one
byte a second and never finish it, and M idle clients that connect and send
nothing. Whenever the server closes one (header or idle timeout, shedding),
it reconnects, so the counts stay held for the whole run. On SIGTERM it
prints one JSON line, "SOAK_HOLD {...}", with connections opened and closed
by the server, by kind."""
import asyncio
import json
import signal
import sys

HOST = "127.0.0.1"


async def connect(port, stats, kind):
    """A connection, retried a second later while the server refuses."""
    while True:
        try:
            connection = await asyncio.open_connection(HOST, port)
            stats[kind + "_opened"] += 1
            return connection
        except OSError:
            stats[kind + "_connect_failed"] += 1
            await asyncio.sleep(1)


async def slowloris(port, stats):
    header = b"POST /predictions/soak HTTP/1.1\r\nHost: soak\r\nX-Slow: " + b"a" * 100000
    while True:
        reader, writer = await connect(port, stats, "slow")
        try:
            for i in range(len(header)):
                writer.write(header[i:i + 1])
                await writer.drain()
                try:  # one byte a second; the server's close ends the wait early
                    data = await asyncio.wait_for(reader.read(4096), timeout=1.0)
                    if not data:
                        break
                except asyncio.TimeoutError:
                    pass
        except (ConnectionError, OSError):
            pass
        stats["slow_closed_by_server"] += 1
        writer.close()


async def idle(port, stats):
    while True:
        reader, writer = await connect(port, stats, "idle")
        try:
            while await reader.read(4096):
                pass
        except (ConnectionError, OSError):
            pass
        stats["idle_closed_by_server"] += 1
        writer.close()


async def main(port, n_slow, n_idle):
    stats = {k: 0 for k in ("slow_opened", "slow_closed_by_server", "slow_connect_failed", "idle_opened",
                            "idle_closed_by_server", "idle_connect_failed")}
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    tasks = [asyncio.create_task(slowloris(port, stats)) for _ in range(n_slow)]
    tasks += [asyncio.create_task(idle(port, stats)) for _ in range(n_idle)]
    await stop.wait()
    for t in tasks:
        t.cancel()
    print("SOAK_HOLD " + json.dumps(stats), flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
