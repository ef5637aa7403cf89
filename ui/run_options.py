"""The two choices every way of starting a run offers: what to confirm, and which screen."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QComboBox

from control.policy import ConfirmMode

#: Offered in the monitor box; any monitor setting can be typed in as well.
DEFAULT_MONITORS = ("1", "2", "0", "primary", "mouse")


def confirm_combo() -> QComboBox:
    """The confirmation mode: the item data is the mode's setting value."""
    combo = QComboBox()
    for mode, label in ((ConfirmMode.ALWAYS, "always"), (ConfirmMode.RISKY, "risky only"),
                        (ConfirmMode.NEVER, "never")):
        combo.addItem(label, str(mode))
    combo.setToolTip("Which actions wait for your approval before they run")
    return combo


def monitor_combo(monitors: Sequence[str] = DEFAULT_MONITORS) -> QComboBox:
    """The monitor, editable: a number, 0, primary, mouse, or a region WxH+X+Y."""
    combo = QComboBox()
    combo.setEditable(True)
    combo.addItems(list(monitors))
    combo.setToolTip(
        "The screen holodesk sees and acts on: a monitor number (1 = first, 0 = all), "
        "'mouse' (the one under the pointer), 'primary', or a region WxH+X+Y"
    )
    return combo
