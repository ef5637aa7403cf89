"""holodesk's icon is found and drawn: in a checkout, and in the frozen layout (sys._MEIPASS)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.support.home import REPO_ROOT
from ui.app_icon import app_icon, icon_file


def test_the_checkout_icon_is_found_and_draws(qtbot: QtBot) -> None:
    assert icon_file() == REPO_ROOT / "resources" / "icons" / "holodesk.svg"
    icon = app_icon()
    assert not icon.isNull()
    image = icon.pixmap(48, 48).toImage()
    assert image.width() == 48
    # Drawn, not blank: the centre is the screen's light colour, a corner transparent.
    assert image.pixelColor(9, 28).lightness() > 200
    assert image.pixelColor(0, 0).alpha() == 0


def test_the_frozen_layout_is_looked_at_first(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    bundled = tmp_path / "resources" / "icons" / "holodesk.svg"
    bundled.parent.mkdir(parents=True)
    shutil.copyfile(REPO_ROOT / "resources" / "icons" / "holodesk.svg", bundled)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert icon_file() == bundled


@pytest.mark.parametrize("size", [16, 32, 48, 64, 128, 256])
def test_every_committed_png_has_its_size(size: int) -> None:
    from PIL import Image

    path = REPO_ROOT / "resources" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / \
        "holodesk.png"
    with Image.open(path) as image:
        assert image.size == (size, size)
        assert image.mode == "RGBA"
