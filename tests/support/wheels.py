"""Tiny wheels made on the spot, for a local wheel folder pip installs from offline.

``holodesk serve --install`` is tested against such a folder (``PIP_NO_INDEX=1``,
``PIP_FIND_LINKS=folder``) holding a stand-in ``vllm`` and a dependency of its own: no
network, no GPU, seconds instead of the real multi-gigabyte install.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=") \
        .decode()


def make_wheel(
    folder: Path,
    name: str,
    version: str,
    *,
    files: Mapping[str, str],
    requires: Sequence[str] = (),
    console_scripts: Mapping[str, str] | None = None,
) -> Path:
    """Write ``name-version-py3-none-any.whl`` into ``folder``; its path."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    entries: dict[str, bytes] = {path: text.encode() for path, text in files.items()}
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Requires-Dist: {r}" for r in requires]
    entries[f"{info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    entries[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: holodesk-tests\n"
                                b"Root-Is-Purelib: true\nTag: py3-none-any\n")
    if console_scripts:
        lines = "".join(f"{k} = {v}\n" for k, v in console_scripts.items())
        entries[f"{info}/entry_points.txt"] = f"[console_scripts]\n{lines}".encode()
    record = "".join(f"{path},{_digest(data)},{len(data)}\n" for path, data in entries.items())
    entries[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(out, "w") as archive:
        for path, data in entries.items():
            archive.writestr(path, data)
    return out


def stand_in_vllm_folder(folder: Path) -> Path:
    """A wheel folder: ``vllm`` 0.14.1 (needing ``holodesk-fake-torch==2.9.0``), a newer
    ``vllm`` 0.15.0 that a pinned install must not take, and the dependency."""
    script = ("import sys\n\ndef main():\n"
              "    print('vllm stand-in', VERSION, ' '.join(sys.argv[1:]))\n")
    for version in ("0.14.1", "0.15.0"):
        make_wheel(folder, "vllm", version,
                   files={"vllm/__init__.py": f"VERSION = {version!r}\n" + script},
                   requires=["holodesk-fake-torch==2.9.0"],
                   console_scripts={"vllm": "vllm:main"})
    make_wheel(folder, "holodesk-fake-torch", "2.9.0",
               files={"holodesk_fake_torch/__init__.py": "VERSION = '2.9.0'\n"})
    return folder
