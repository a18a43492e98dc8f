#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A slow HTTP client, bounded in count and time, for the agent's suites.

    slowloris.py HOST PORT N INTERVAL SECONDS [SRC[,SRC...]]

Opens N connections to HOST:PORT (from the addresses SRC in turn when given), sends
each a request
line, then one header line every INTERVAL seconds and never the blank line that ends
the headers, for SECONDS in all. Prints one line of key=value:
  opened      connections established
  refused     connects that failed
  burst_open  connections still open 0.5 s after the last connect (what the server
              let these peers hold at once)
  closed      connections the server closed (EOF or reset) while the client talked
  max_held    the longest a closed connection stayed open, in seconds
  still_open  connections open at the end
"""
import errno
import select
import socket
import sys
import time


def is_closed(s):
    try:
        r, _, _ = select.select([s], [], [], 0)
        if not r:
            return False
        return s.recv(4096, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def main():
    host, port, n, interval, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        float(sys.argv[4]), float(sys.argv[5])
    srcs = sys.argv[6].split(",") if len(sys.argv) > 6 else [None]
    conns, refused = [], 0
    for i in range(n):
        src = srcs[i % len(srcs)]
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            if src:
                s.bind((src, 0))
            s.connect((host, port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: slow\r\n")
            conns.append({"s": s, "t0": time.monotonic(), "closed": None})
        except OSError:
            refused += 1
            s.close()
    time.sleep(0.5)
    for c in conns:
        if is_closed(c["s"]):
            c["closed"] = time.monotonic()
    burst_open = sum(1 for c in conns if c["closed"] is None)
    end = time.monotonic() + seconds
    nxt = time.monotonic() + interval
    k = 0
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= nxt:
            nxt = now + interval
            k += 1
            for c in conns:
                if c["closed"] is None:
                    try:
                        c["s"].send(b"X-Slow-%d: %d\r\n" % (k, k), socket.MSG_DONTWAIT)
                    except OSError as e:
                        if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                            c["closed"] = now
        for c in conns:
            if c["closed"] is None and is_closed(c["s"]):
                c["closed"] = time.monotonic()
        time.sleep(0.05)
    closed = [c for c in conns if c["closed"] is not None]
    max_held = max((c["closed"] - c["t0"] for c in closed), default=0.0)
    print("opened=%d refused=%d burst_open=%d closed=%d max_held=%.1f still_open=%d" %
          (len(conns), refused, burst_open, len(closed), max_held, len(conns) - len(closed)))
    for c in conns:
        c["s"].close()


if __name__ == "__main__":
    main()
