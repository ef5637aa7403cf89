"""Red team, issue 21 part 3: the keyring that holds the key of approved.json (and the API key)
is chosen by a text file in the person's home, and that file can make holodesk import Python
written by another program.

The `keyring` package reads ``$XDG_CONFIG_HOME/python_keyring/keyringrc.cfg`` whenever no
``PYTHON_KEYRING_BACKEND`` is set (every desktop): ``keyring-path`` goes onto ``sys.path`` and
``default-keyring`` names the module.Class to import and use. Both files are text a GUI editor
writes; neither is in holodesk's folders nor in the issue's protected set. The next holodesk
command that opens the keyring (every `holodesk run` looks up the API key; every read of an
approved.json checks its tag) runs the attacker's module inside holodesk, with the person's
rights and no question. The same backend then also decides which key signs approved.json.
"""

from __future__ import annotations

import subprocess

from keyring.backend import KeyringBackend

from app.secrets import is_secure
from tests.support.e2e import holodesk_argv, run_holodesk
from tests.support.home import REPO_ROOT, Home

MODULE = '''\
import os, pathlib
pathlib.Path(os.path.expanduser("~/pwned")).write_text("ran inside holodesk\\n")
from keyring.backend import KeyringBackend

class Keyring(KeyringBackend):
    priority = 1
    holodesk_test_backend = True  # app.secrets.is_secure takes this for a secure keyring
    def get_password(self, service, username): return None
    def set_password(self, service, username, password): pass
    def delete_password(self, service, username): pass
'''


def test_a_keyring_config_written_by_an_editor_runs_no_code_in_holodesk(home: Home) -> None:
    assert run_holodesk(home, "config", "set", "confirm", "always").returncode == 0
    folder = home.config / "python_keyring"
    folder.mkdir(parents=True)
    (folder / "keyringrc.cfg").write_text(
        "[backend]\ndefault-keyring = notes.Keyring\nkeyring-path = ~/.config/python_keyring\n",
        encoding="utf-8")
    (folder / "notes.py").write_text(MODULE, encoding="utf-8")
    # The person's desktop: no PYTHON_KEYRING_BACKEND (home.env() has none), so keyring reads
    # its config file as it does on every desktop.
    result = subprocess.run(holodesk_argv("config", "show", keyring=None), env=home.env(),
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert not (home.root / "pwned").exists(), "the editor's Python ran inside holodesk"


def test_a_backend_is_not_secure_because_it_says_it_is_the_tests_one() -> None:
    """app.secrets accepts any backend class carrying ``holodesk_test_backend = True`` as a
    secure keyring (an allow-list by name otherwise): a mark meant for the test suite, honoured
    in the product, that any backend named in keyringrc.cfg can carry."""

    class Notes(KeyringBackend):
        priority = 1  # type: ignore[assignment]
        holodesk_test_backend = True

        def get_password(self, service: str, username: str) -> str | None:
            return None

        def set_password(self, service: str, username: str, password: str) -> None:
            pass

        def delete_password(self, service: str, username: str) -> None:
            pass

    assert not is_secure(Notes())
