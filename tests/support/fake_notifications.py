"""A desktop notification server for tests: a private D-Bus session bus (its own dbus-daemon)
with a stand-in ``org.freedesktop.Notifications`` that records every ``Notify`` call.

Real D-Bus on a real socket: the app's notifier talks to it as to GNOME's or KDE's server,
and a call with the wrong argument types is refused here as a strict server refuses it.
jeepney (which keyring's Secret Service backend brings) answers the calls::

    with FakeNotifications() as server:
        env["DBUS_SESSION_BUS_ADDRESS"] = server.address
        ...
        server.wait_for(1)
        server.calls[0].summary
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
NOTIFY_SIGNATURE = "susssasa{sv}i"

INTROSPECTION = """<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
<node>
  <interface name="org.freedesktop.Notifications">
    <method name="Notify">
      <arg type="s" name="app_name" direction="in"/>
      <arg type="u" name="replaces_id" direction="in"/>
      <arg type="s" name="app_icon" direction="in"/>
      <arg type="s" name="summary" direction="in"/>
      <arg type="s" name="body" direction="in"/>
      <arg type="as" name="actions" direction="in"/>
      <arg type="a{sv}" name="hints" direction="in"/>
      <arg type="i" name="expire_timeout" direction="in"/>
      <arg type="u" name="id" direction="out"/>
    </method>
    <method name="GetCapabilities">
      <arg type="as" name="capabilities" direction="out"/>
    </method>
    <method name="GetServerInformation">
      <arg type="s" name="name" direction="out"/>
      <arg type="s" name="vendor" direction="out"/>
      <arg type="s" name="version" direction="out"/>
      <arg type="s" name="spec_version" direction="out"/>
    </method>
  </interface>
  <interface name="org.freedesktop.DBus.Introspectable">
    <method name="Introspect"><arg type="s" name="xml" direction="out"/></method>
  </interface>
</node>
"""


def dbus_available() -> bool:
    return shutil.which("dbus-daemon") is not None


@dataclass(frozen=True)
class Notification:
    app_name: str
    replaces_id: int
    app_icon: str
    summary: str
    body: str
    hints: dict[str, Any]
    expire_timeout: int


class FakeNotifications:
    """A session bus with a notification server; ``calls`` holds each Notify received,
    ``refused`` each call refused for its argument types. ``serve=False``: the bus without
    the server (no notifications on this desktop); ``markup=False``: a server that shows the
    body as it is; ``failing = True``: every Notify is
    answered with an error (a server gone wrong)."""

    def __init__(self, *, serve: bool = True, markup: bool = True) -> None:
        self.serve = serve
        self.markup = markup
        self.failing = False
        self.calls: list[Notification] = []
        self.refused: list[str] = []
        self.address = ""
        self._daemon: subprocess.Popen[str] | None = None
        self._conn: Any = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._changed = threading.Condition()

    def start(self) -> FakeNotifications:
        self._daemon = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        assert self._daemon.stdout is not None
        self.address = self._daemon.stdout.readline().strip()
        if not self.address:
            raise RuntimeError("dbus-daemon printed no address")
        if self.serve:
            from jeepney.bus_messages import message_bus  # type: ignore[import-untyped]
            from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

            self._conn = open_dbus_connection(bus=self.address)
            reply = self._conn.send_and_get_reply(message_bus.RequestName(SERVICE, 4))
            if reply.body[0] != 1:  # DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER
                raise RuntimeError(f"could not own {SERVICE}: {reply.body}")
            self._thread = threading.Thread(target=self._serve, name="fake-notifications",
                                            daemon=True)
            self._thread.start()
        return self

    def _serve(self) -> None:
        from jeepney import HeaderFields, MessageType, new_error, new_method_return

        next_id = 1
        while not self._stop.is_set():
            try:
                msg = self._conn.receive(timeout=0.2)
            except TimeoutError:
                continue
            except (OSError, ValueError):
                return  # the connection was closed: stopping
            header = msg.header
            if header.message_type != MessageType.method_call:
                continue
            member = header.fields.get(HeaderFields.member)
            signature = header.fields.get(HeaderFields.signature, "")
            if member == "Introspect":
                self._conn.send(new_method_return(msg, "s", (INTROSPECTION,)))
            elif member == "GetCapabilities":
                capabilities = ["body", "body-markup"] if self.markup else ["body"]
                self._conn.send(new_method_return(msg, "as", (capabilities,)))
            elif member == "GetServerInformation":
                self._conn.send(new_method_return(msg, "ssss", ("fake", "tests", "1", "1.2")))
            elif member == "Notify":
                if signature != NOTIFY_SIGNATURE or self.failing:
                    with self._changed:
                        self.refused.append(signature)
                        self._changed.notify_all()
                    self._conn.send(new_error(msg, "org.freedesktop.DBus.Error.InvalidArgs",
                                              "s", (f"wrong types {signature}",)))
                    continue
                name, replaces, icon, summary, body, _actions, hints, timeout = msg.body
                hints = {k: v[1] for k, v in hints.items()}  # (signature, value) pairs
                with self._changed:
                    self.calls.append(Notification(name, replaces, icon, summary, body, hints,
                                                   timeout))
                    self._changed.notify_all()
                self._conn.send(new_method_return(msg, "u", (next_id,)))
                next_id += 1
            else:
                self._conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))

    def wait_for(self, count: int, timeout: float = 10.0) -> None:
        """Block until ``count`` notifications (or refusals) arrived."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.calls) + len(self.refused) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{len(self.calls)} notification(s) and "
                                       f"{len(self.refused)} refusal(s), wanted {count}")
                self._changed.wait(left)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._conn is not None:
            self._conn.close()
        if self._daemon is not None:
            self._daemon.terminate()
            try:
                self._daemon.wait(5)
            except subprocess.TimeoutExpired:
                self._daemon.kill()
                self._daemon.wait(5)

    def __enter__(self) -> FakeNotifications:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
