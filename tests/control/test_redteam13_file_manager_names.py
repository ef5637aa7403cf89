"""Red team 13 (left open): a file manager is known by name only, so a drag out of one that is
not on the list moves files unasked.

``_drag_risks`` (control/policy.py) asks a drag out of a file manager ("it may move or delete
files"), but a window is a file manager only when its class, instance or process is in
``control.target.FILE_MANAGERS`` (nautilus, dolphin, thunar, nemo, pcmanfm, caja, konqueror,
spacefm, doublecmd, krusader, io.elementary.files). Others are ordinary applications:
Deepin's ``dde-file-manager``, UKUI's ``peony``, COSMIC's ``com.system76.CosmicFiles``,
``Xfe``, ``qtfm``.

Attack (default ``risky`` mode): in one of them, a drag of the ``Documents`` folder onto the
Trash entry of its own side bar (the drop lands in the same window, titled after the folder
shown, so the drop rule that looks for a Trash title never fires), or onto another folder
(moved away): nothing asks, where the same drag in Nautilus asks.

Property: a drag that may move or delete files asks in any file manager, whatever it is
called. Left open: telling a file manager by what it does (it is not a terminal, it holds no
sign a process shows) needs another mechanism than a name list; this pins the gap.
"""

from __future__ import annotations

import pytest

from control.input import normalized
from control.policy import Aim, SafetyPolicy
from model.schema import Drag
from tests.support.fake_targets import NAUTILUS, window

RISKY = SafetyPolicy()
UNLISTED = {
    "dde-file-manager": window("dde-file-manager", title="Home"),
    "peony": window("peony-qt", title="Home"),
    "cosmic-files": window("com.system76.CosmicFiles", title="Home"),
    "xfe": window("Xfe", title="/home/u - Xfe"),
}
TO_TRASH = Drag(x=300, y=200, to_x=60, to_y=520, element="Documents")


@pytest.mark.xfail(strict=True, reason="red team 13: file managers are known by name only "
                   "(control.target.FILE_MANAGERS); a drag out of an unlisted one moves files "
                   "unasked")
@pytest.mark.parametrize("name", list(UNLISTED))
def test_a_drag_out_of_an_unlisted_file_manager_asks(name: str) -> None:
    manager = UNLISTED[name]
    verdict = RISKY.assess(normalized(TO_TRASH), history=[], aim=Aim(manager, manager))
    assert verdict.confirm, (name, verdict)


def test_control_the_same_drag_in_nautilus_asks() -> None:
    verdict = RISKY.assess(normalized(TO_TRASH), history=[], aim=Aim(NAUTILUS, NAUTILUS))
    assert verdict.confirm
