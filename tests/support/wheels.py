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


_STAND_IN = """\
import argparse
import json
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = {version!r}


class _Handler(BaseHTTPRequestHandler):
    name = "holotron"

    def do_GET(self):
        if self.path == "/health":
            body = b""
        elif self.path == "/v1/models":
            body = json.dumps({{"object": "list", "data": [
                {{"id": self.name, "object": "model", "max_model_len": 32768}}]}}).encode()
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    if sys.argv[1:2] != ["serve"]:
        print("vllm stand-in", VERSION, " ".join(sys.argv[1:]))
        return 0
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--served-model-name", default="holotron")
    args, _rest = p.parse_known_args(sys.argv[2:])
    _Handler.name = args.served_model_name
    server = ThreadingHTTPServer((args.host, args.port), _Handler)
    signal.signal(signal.SIGTERM, lambda *_: server.shutdown())
    print("INFO Starting vLLM API server 0 on http://%s:%d" % (args.host, args.port), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
"""


def stand_in_vllm_folder(folder: Path) -> Path:
    """A wheel folder: ``vllm`` 0.14.1 (needing ``holodesk-fake-torch==2.9.0``), a newer
    ``vllm`` 0.15.0 that a pinned install must not take, and the dependency.

    The stand-in's ``vllm serve`` answers ``/health`` and ``/v1/models`` (standard library
    only, so it runs in any fresh venv) until SIGINT or SIGTERM; other commands print the
    version and arguments.
    """
    for version in ("0.14.1", "0.15.0"):
        make_wheel(folder, "vllm", version,
                   files={"vllm/__init__.py": _STAND_IN.format(version=version)},
                   requires=["holodesk-fake-torch==2.9.0"],
                   console_scripts={"vllm": "vllm:main"})
    make_wheel(folder, "holodesk-fake-torch", "2.9.0",
               files={"holodesk_fake_torch/__init__.py": "VERSION = '2.9.0'\n"})
    return folder


if __name__ == "__main__":
    import sys

    stand_in_vllm_folder(Path(sys.argv[1]))
