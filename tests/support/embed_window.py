"""A window that shows another program's window inside it, as tabbed (suckless) does.

``tabbed -d`` prints its window id; ``xterm -into ID`` (``urxvt -embed ID``, ``st -w ID``),
started by anyone, then draws inside it. Like tabbed, this window passes the keyboard focus on
to the window inside whenever it gets it (``XSetInputFocus`` on the embedded window), and makes
the embedded window fill it. The terminal is then drawn, clicked and typed into inside this
window, whose own process holds no terminal and has no child.

Run as ``python -m tests.support.embed_window --title T --geometry WxH+X+Y ID_FILE`` on a
test's display: it writes its window id (decimal) to ID_FILE once mapped.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from Xlib import X, Xatom
from Xlib import display as xdisplay


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--title", default="tabs")
    parser.add_argument("--class-name", default="Tabs")
    parser.add_argument("--geometry", default="800x480+40+40")
    parser.add_argument("id_file", type=Path)
    args = parser.parse_args(argv)
    size, _, place = args.geometry.partition("+")
    width, height = (int(v) for v in size.split("x"))
    x, y = (int(v) for v in place.split("+")) if place else (0, 0)

    d = xdisplay.Display()
    screen = d.screen()
    win = screen.root.create_window(
        x, y, width, height, 0, screen.root_depth, X.InputOutput, X.CopyFromParent,
        background_pixel=screen.white_pixel,
        event_mask=X.FocusChangeMask | X.StructureNotifyMask | X.SubstructureNotifyMask)
    win.set_wm_name(args.title)
    win.change_property(d.get_atom("_NET_WM_NAME"), d.get_atom("UTF8_STRING"), 8,
                        args.title.encode())
    win.set_wm_class(args.class_name.lower(), args.class_name)
    win.set_wm_hints(flags=1, input=1)  # InputHint: the manager gives it the focus
    win.set_wm_normal_hints(flags=1 | 2, x=x, y=y)  # USPosition
    win.change_property(d.get_atom("WM_PROTOCOLS"), Xatom.ATOM, 32,
                        [d.get_atom("WM_DELETE_WINDOW")])
    win.map()
    d.sync()
    args.id_file.write_text(f"{win.id}\n")
    size_now = (width, height)
    while True:
        ev = d.next_event()
        children = win.query_tree().children
        if ev.type == X.ConfigureNotify and ev.window == win:
            size_now = (ev.width, ev.height)
            for child in children:
                child.configure(x=0, y=0, width=size_now[0], height=size_now[1])
        elif ev.type in (X.CreateNotify, X.ReparentNotify, X.MapNotify) and children:
            children[-1].configure(x=0, y=0, width=size_now[0], height=size_now[1])
        if ev.type in (X.FocusIn, X.MapNotify) and children:
            # As tabbed does: whenever this window itself has the focus (the manager gave it,
            # or the client inside was just shown), the client inside gets it.
            focus = d.get_input_focus().focus
            shown = children[-1].get_attributes().map_state == X.IsViewable
            if shown and not isinstance(focus, int) and focus.id == win.id:
                children[-1].set_input_focus(X.RevertToParent, X.CurrentTime)
        d.flush()


if __name__ == "__main__":
    main()
