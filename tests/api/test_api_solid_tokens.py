"""A Solid channel is bound to the bearer token that established it: once that token is
revoked (or expires), a WebSocketChannel2023 socket is closed with 4401 and the reason,
and a WebhookChannel2023 channel stops, within the bound of the other streams (a stream's
recheck plus the token cache), on a real ``semps serve``. Another token of the same
subject does not keep the channel going: the channel is the token's, not the subject's."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from semps_test_support import PATIENCE, Server, wait_for
from solid_service import Receiver, Subscribers, establish, hot, publish, solutions
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    extra = ("--webhook-allow", "127.0.0.1/32")
    srv = Server(tmp_path_factory.mktemp("solid-tokens") / "data", extra=extra)
    yield srv
    srv.stop()


@pytest.fixture
def subscriber(server: Server) -> Iterator[Subscribers]:
    made = Subscribers(server)
    yield made
    made.close()


def _revoke(server: Server, token_id: str) -> None:
    with server.client("admin") as admin:
        assert admin.delete(f"/tokens/{token_id}").status_code == 204


def test_a_revoked_token_closes_its_websocket_channel_with_4401(
    server: Server, subscriber: Subscribers
) -> None:
    client, token_id = subscriber("ws-revoked")
    subscriber("ws-revoked")  # another token of the same subject, still good
    channel = establish(client, "WebSocketChannel2023", topic=hot(client))
    with connect(channel["receiveFrom"], open_timeout=PATIENCE) as ws:
        publish(server, (1, 40))
        assert solutions(json.loads(ws.recv(timeout=PATIENCE))) == ["<http://ex.org/room1>"]
        _revoke(server, token_id)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=PATIENCE)  # the close frame ends the wait; no notification comes
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
    assert "revoked or expired" in closed.value.rcvd.reason


def test_a_websocket_channel_of_a_revoked_token_is_closed_when_opened(
    server: Server, subscriber: Subscribers
) -> None:
    client, token_id = subscriber("ws-late")
    channel = establish(client, "WebSocketChannel2023", topic=hot(client))
    _revoke(server, token_id)
    with connect(channel["receiveFrom"], open_timeout=PATIENCE) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=PATIENCE)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


def test_a_revoked_token_stops_its_webhook_channel(server: Server, subscriber: Subscribers) -> None:
    """After the revocation the next matching event reaches another subscriber's channel
    (the positive signal) and not the revoked token's."""
    client, token_id = subscriber("hook-revoked")
    same, _ = subscriber("hook-revoked")  # the same subject, another token
    other, _ = subscriber("hook-kept")
    revoked, kept = Receiver(), Receiver()
    try:
        channel = establish(client, "WebhookChannel2023", topic=hot(client), sendTo=revoked.url)
        establish(other, "WebhookChannel2023", topic=hot(other), sendTo=kept.url)
        publish(server, (2, 50))
        assert wait_for(lambda: len(revoked.received) == 1 and len(kept.received) == 1)
        assert same.get(channel["id"]).status_code == 200  # running
        _revoke(server, token_id)
        assert wait_for(lambda: same.get(channel["id"]).status_code == 404)  # ended
        publish(server, (3, 60))
        assert wait_for(lambda: len(kept.received) == 2)
        assert [solutions(note) for note in revoked.notes()] == [["<http://ex.org/room2>"]]
    finally:
        revoked.close()
        kept.close()


def test_an_expired_token_closes_its_websocket_channel_with_4401(server: Server) -> None:
    """The token expires 15 s after it is made (long enough to establish the channel on a
    loaded machine); the socket, opened before or after that, is closed with 4401."""
    with server.client("admin") as admin:
        made = admin.post(
            "/tokens", json={"role": "subscriber", "subject": "ws-expiring", "expires_in": 15}
        ).json()
    headers = {"Authorization": f"Bearer {made['token']}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=None) as client:
        channel = establish(client, "WebSocketChannel2023", topic=hot(client))
    with connect(channel["receiveFrom"], open_timeout=PATIENCE) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=PATIENCE)  # nothing is published: only the close frame comes
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
    assert "revoked or expired" in closed.value.rcvd.reason
