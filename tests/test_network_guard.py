import socket

import pytest

from tests.conftest import NetworkBlocked


def test_non_loopback_connection_is_blocked() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s, pytest.raises(NetworkBlocked):
        s.connect(("192.0.2.1", 443))


def test_name_resolution_is_blocked() -> None:
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("api.openai.com", 443)


def test_loopback_is_allowed() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as c:
        c.connect(("127.0.0.1", port))
    server.close()
