"""A python-xlib display as small as the target finder's window description needs, no X server.

:class:`FakeDisplay` answers what ``X11TargetFinder._describe`` asks of a window: its
properties by name (atoms are their names here), its geometry, and, when the server has the
X-Resource extension, the pid of the client that made it; and the root's top-level windows
(whether a menu window is mapped). The X11 tests check the same rules
against a real Xvfb (tests/control/test_target_pid_x11.py); this one lets the quick tier hold
them too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any


@dataclass
class FakeWindow:
    """A window with ``props`` (name: value as python-xlib gives it: bytes for strings, a list of
    numbers for CARDINAL) at ``geometry`` (x, y, width, height)."""

    id: int
    props: dict[str, Any] = field(default_factory=dict)
    geometry: tuple[int, int, int, int] = (0, 0, 300, 200)
    override_redirect: bool = False
    mapped: bool = True

    def get_attributes(self) -> Any:
        from Xlib import X

        return SimpleNamespace(map_state=X.IsViewable if self.mapped else X.IsUnmapped,
                               override_redirect=int(self.override_redirect),
                               win_class=X.InputOutput)

    def get_full_property(self, atom: str, _type: int) -> Any:
        value = self.props.get(atom)
        return None if value is None else SimpleNamespace(value=value)

    def get_geometry(self) -> Any:
        x, y, width, height = self.geometry
        return SimpleNamespace(x=x, y=y, width=width, height=height, border_width=0)


@dataclass
class FakeDisplay:
    """``client_pids``: what X-Resource says made each window (window id: pid); None when the
    server lacks the extension. ``tops``: the root's children, bottom to top."""

    client_pids: dict[int, int] | None = None
    tops: list[FakeWindow] = field(default_factory=list)

    def screen(self) -> Any:
        tops = self.tops
        root = SimpleNamespace(query_tree=lambda: SimpleNamespace(children=tops))
        return SimpleNamespace(root=root)

    def get_atom(self, name: str) -> str:
        return name

    def has_extension(self, name: str) -> bool:
        return name == "X-Resource" and self.client_pids is not None

    def res_query_client_ids(self, specs: list[dict[str, int]]) -> Any:
        from Xlib.ext import res

        assert self.client_pids is not None, "asked X-Resource of a server without it"
        ids = []
        for spec in specs:
            pid = self.client_pids.get(spec["client"])
            if pid is not None:
                ids.append(SimpleNamespace(spec=SimpleNamespace(mask=res.LocalClientPIDMask),
                                           value=[pid]))
        return SimpleNamespace(ids=ids)
