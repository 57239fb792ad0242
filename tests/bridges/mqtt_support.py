"""A real mosquitto (Debian's) started by the tests on 127.0.0.1, and independent paho-mqtt
clients on the other side of semps."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Mosquitto:
    """mosquitto on a free port with persistence in ``folder`` (saved at every change), so
    a restart after SIGKILL keeps the sessions and the queued messages."""

    def __init__(self, folder: Path, secure: dict[str, str] | None = None) -> None:
        if not os.access(MOSQUITTO, os.X_OK):
            pytest.fail("mosquitto is not installed (scripts/bootstrap installs it with apt-get)")
        self.folder, self.port = folder, _free_port()
        folder.mkdir(parents=True, exist_ok=True)
        self.conf = folder / "mosquitto.conf"
        self.conf.write_text(
            # as root, mosquitto drops to the user 'mosquitto', which cannot write the
            # persistence file here (and says so only in its log): stay who we are
            f"user {getpass.getuser()}\n"
            f"listener {self.port} 127.0.0.1\n"
            "allow_anonymous true\n"
            "persistence true\n"
            f"persistence_location {folder}/\n"
            "autosave_on_changes true\n"
            "autosave_interval 1\n"
            "max_queued_messages 100000\n"
            "max_inflight_messages 0\n"
            f"log_dest file {folder}/mosquitto.log\n"
        )
        if secure is not None:
            self.conf.write_text(
                self.conf.read_text().replace("allow_anonymous true", secure_conf(folder, secure))
            )
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError as exc:
                if self.proc.poll() is not None:
                    log = self.folder / "mosquitto.log"
                    why = log.read_text() if log.exists() else "mosquitto exited"
                    raise RuntimeError(why) from exc
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=120)


def secure_conf(folder: Path, users: dict[str, str]) -> str:
    """TLS with a CA made here (``ca.crt``: trust it) and a certificate for 127.0.0.1, and a
    password file with ``users``; nobody anonymous."""
    ca, key = folder / "ca.crt", folder / "ca.key"
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _run(
        "openssl",
        "req",
        "-x509",
        *ec,
        "-keyout",
        str(key),
        "-out",
        str(ca),
        "-days",
        "2",
        "-subj",
        "/CN=semps test CA",
    )
    _run(
        "openssl",
        "req",
        *ec,
        "-keyout",
        str(folder / "server.key"),
        "-out",
        str(folder / "server.csr"),
        "-subj",
        "/CN=127.0.0.1",
    )
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _run(
        "openssl",
        "x509",
        "-req",
        "-in",
        str(folder / "server.csr"),
        "-CA",
        str(ca),
        "-CAkey",
        str(key),
        "-CAcreateserial",
        "-out",
        str(folder / "server.crt"),
        "-days",
        "2",
        "-extfile",
        str(folder / "san.ext"),
    )
    passwords = folder / "passwords"
    passwords.touch()
    for user, password in users.items():
        _run("mosquitto_passwd", "-b", str(passwords), user, password)
    return (
        "allow_anonymous false\n"
        f"password_file {passwords}\n"
        f"cafile {ca}\n"
        f"certfile {folder / 'server.crt'}\n"
        f"keyfile {folder / 'server.key'}\n"
    )


def _paho(client_id: str, secure: tuple[Path, str, str] | None) -> paho.Client:
    """A paho client with a persistent session; over TLS with a password when ``secure``
    gives the CA file, the user and the password."""
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False)
    if secure is not None:
        ca, user, password = secure
        client.tls_set(ca_certs=str(ca))
        client.username_pw_set(user, password)
    return client


def _stop(client: paho.Client) -> None:
    # The network thread first: paho's thread clears its own handle when a disconnect
    # ends its loop, racing loop_stop's check-then-join (AttributeError at teardown).
    client.loop_stop()
    client.disconnect()


class Collector:
    """A paho subscriber with a persistent session, collecting messages by topic."""

    def __init__(
        self,
        port: int,
        topics: list[str],
        client_id: str,
        secure: tuple[Path, str, str] | None = None,
    ) -> None:
        self.messages: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()
        self.client = _paho(client_id, secure)

        def on_connect(c: object, u: object, flags: object, code: object, p: object) -> None:
            for topic in topics:
                self.client.subscribe(topic, qos=1)

        def on_message(c: object, u: object, msg: paho.MQTTMessage) -> None:
            with self.lock:
                self.messages.append((msg.topic, bytes(msg.payload)))

        self.client.on_connect = on_connect
        self.client.on_message = on_message
        self.client.reconnect_delay_set(1, 2)
        self.client.connect_async("127.0.0.1", port, keepalive=10)
        self.client.loop_start()

    def json_on(self, prefix: str) -> list[dict[str, object]]:
        with self.lock:
            return [json.loads(p) for t, p in self.messages if t.startswith(prefix)]

    def close(self) -> None:
        _stop(self.client)


class Publisher:
    """A paho publisher (QoS 1) that queues while the broker is away."""

    def __init__(
        self, port: int, client_id: str, secure: tuple[Path, str, str] | None = None
    ) -> None:
        self.client = _paho(client_id, secure)
        self.client.max_queued_messages_set(0)
        self.client.reconnect_delay_set(1, 2)
        self.client.connect_async("127.0.0.1", port, keepalive=10)
        self.client.loop_start()

    def send(self, topic: str, payload: bytes) -> paho.MQTTMessageInfo:
        return self.client.publish(topic, payload, qos=1)

    def close(self) -> None:
        _stop(self.client)
