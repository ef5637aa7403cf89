"""Desktop notifications through the freedesktop Notifications service on the session bus.

Where the desktop has no tray (stock GNOME) Qt's tray balloons are not available, yet every
such desktop runs a notification server (``org.freedesktop.Notifications``). holodesk talks to
it with jeepney, which keyring's Secret Service backend already brings on Linux (no new
dependency). Not PySide6's QtDBus: from Python it sent the call as ``sisssava{sv}i`` (a signed
id, an array of variants for the actions) where the specification says ``susssasa{sv}i``, which
a strict server refuses. Calls block on the bus: the desktop app makes them off its GUI
thread.

Without a session bus, without jeepney or without a server, :class:`NotifyError` says why and
the caller shows its message in its own window instead.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping
from dataclasses import dataclass

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
TIMEOUT_S = 3.0
SHOWN_MS = 8000  # how long a notification stays (the server may ignore it)


class NotifyError(RuntimeError):
    """No notification could be shown; the message says why."""


@dataclass(frozen=True)
class Server:
    """The notification server that answered (name and vendor, e.g. gnome-shell, GNOME);
    ``markup``: it reads markup in a message's body (the ``body-markup`` capability)."""

    name: str
    vendor: str
    markup: bool = False


def _address(environ: Mapping[str, str] | None) -> str:
    address = (os.environ if environ is None else environ).get("DBUS_SESSION_BUS_ADDRESS", "")
    if not address:
        raise NotifyError("there is no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
    return address


def _call(address: str, method: str, signature: str | None = None,
          body: tuple[object, ...] = ()) -> tuple[object, ...]:
    try:
        from jeepney import DBusAddress, MessageType, new_method_call  # type: ignore[import-untyped]
        from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]
    except ImportError as e:
        raise NotifyError(f"the D-Bus library (jeepney) is missing: {e}") from e
    target = DBusAddress(PATH, bus_name=SERVICE, interface=SERVICE)
    try:
        with open_dbus_connection(bus=address) as conn:
            reply = conn.send_and_get_reply(new_method_call(target, method, signature, body),
                                            timeout=TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as e:
        raise NotifyError(f"the session bus did not answer: {e}") from e
    if reply.header.message_type == MessageType.error:
        raise NotifyError(f"the notification service refused: {reply.body}")
    return tuple(reply.body)


def server(environ: Mapping[str, str] | None = None) -> Server:
    """The notification server on the session bus (started by the bus if it starts on demand)."""
    address = _address(environ)
    body = _call(address, "GetServerInformation")
    capabilities = _call(address, "GetCapabilities")
    markup = bool(capabilities) and isinstance(capabilities[0], list) and \
        "body-markup" in capabilities[0]
    return Server(str(body[0]), str(body[1]), markup)


def notify(title: str, message: str, *, urgent: bool = False, markup: bool = False,
           icon: str = "holodesk", environ: Mapping[str, str] | None = None) -> int:
    """Show a notification; its id. ``urgent``: the critical urgency (stays until dismissed on
    most desktops). ``markup``: the server reads markup (:class:`Server`), so the message,
    which may quote the model or a server, is escaped to show literally."""
    hints = {"urgency": ("y", 2 if urgent else 1), "desktop-entry": ("s", "holodesk")}
    text = html.escape(message, quote=False) if markup else message
    body = _call(_address(environ), "Notify", "susssasa{sv}i",
                 ("holodesk", 0, icon, title, text, [], hints, SHOWN_MS))
    ident = body[0] if body else 0
    return ident if isinstance(ident, int) else 0
