"""Render resources/icons/holodesk.svg into the PNG sizes desktops look for, and the Windows .ico
and macOS .icns: `python packaging/render_icons.py` (the results are committed, so a build needs
neither this script nor a display; run it again after changing the SVG).

PySide6's QSvgRenderer draws the SVG (no cairo needed); Pillow writes .ico and .icns.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "icons" / "holodesk.svg"
HICOLOR = ROOT / "resources" / "icons" / "hicolor"
SIZES = (16, 32, 48, 64, 128, 256)


def render(size: int) -> bytes:
    """The icon at ``size`` pixels square, as PNG bytes."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"{SVG} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PIL import Image
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication(sys.argv[:1])
    pngs = {size: render(size) for size in (*SIZES, 512, 1024)}
    for size in SIZES:
        out = HICOLOR / f"{size}x{size}" / "apps" / "holodesk.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(pngs[size])
        print(out.relative_to(ROOT))
    big = Image.open(io.BytesIO(pngs[256]))
    ico = ROOT / "packaging" / "windows" / "holodesk.ico"
    ico.parent.mkdir(parents=True, exist_ok=True)
    big.save(ico, sizes=[(s, s) for s in SIZES])
    icns = ROOT / "packaging" / "macos" / "holodesk.icns"
    icns.parent.mkdir(parents=True, exist_ok=True)
    Image.open(io.BytesIO(pngs[1024])).save(icns)
    print(ico.relative_to(ROOT), icns.relative_to(ROOT), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
