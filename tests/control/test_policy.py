"""The safety policy, rule by rule, with the negatives that keep it from crying wolf."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from control.keys import SHIFTED_SYMBOLS
from control.policy import (
    Aim,
    ConfirmMode,
    SafetyPolicy,
    Verdict,
    is_card_number,
    looks_like_password,
    normalize_keys,
    risky_element_word,
    shell_command_label,
    submit_what,
)
from model.schema import ACTION_ADAPTER, Action
from tests.support.fake_targets import FIREFOX, NOTHING, XTERM, window

RISKY = SafetyPolicy()  # the default mode
IN_AN_APP = Aim(FIREFOX)


def act(**fields: Any) -> Action:
    return ACTION_ADAPTER.validate_python(fields)


def click(element: str, **extra: Any) -> Action:
    return act(action="click", element=element, x=10, y=20, **extra)


def hotkey(*keys: str) -> Action:
    return act(action="hotkey", keys=list(keys))


def typing(text: str, **extra: Any) -> Action:
    return act(action="type", text=text, **extra)


def assess(
    action: Action,
    previous: Action | None = None,
    *,
    outside: bool = False,
    policy: SafetyPolicy = RISKY,
    aim: Aim = IN_AN_APP,
) -> Verdict:
    """The content rules, in an ordinary application unless ``aim`` says otherwise."""
    history = [previous] if previous is not None else []
    return policy.assess(action, history=history, outside_monitor=outside, aim=aim)


def test_default_mode_is_risky() -> None:
    assert SafetyPolicy().mode is ConfirmMode.RISKY
    assert ConfirmMode("never") is ConfirmMode.NEVER


# -- key normalization -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["Control", "S"], {"ctrl", "s"}),
        (["ctrlleft", "shiftright", "altleft"], {"ctrl", "shift", "alt"}),
        (["Control_L", "Alt_R"], {"ctrl", "alt"}),
        (["win", "l"], {"super", "l"}),
        (["cmd", "q"], {"super", "q"}),
        (["command", "option", "esc"], {"super", "alt", "escape"}),
        (["meta", "Return"], {"super", "enter"}),
        (["winleft", "del"], {"super", "delete"}),
        (["ctrl+shift+w"], {"ctrl", "shift", "w"}),
        (["Ctrl + Alt + Del"], {"ctrl", "alt", "delete"}),
        (["ctrl", "+"], {"ctrl", "shift", "+"}),  # "+" is typed with Shift: it is held too
        (["ctrl++"], {"ctrl", "shift", "+"}),
        (["Print Screen"], {"printscreen"}),
        (["F4", "ALT"], {"alt", "f4"}),
    ],
)
def test_key_names_are_normalized(keys: list[str], expected: set[str]) -> None:
    assert normalize_keys(keys) == expected


def test_key_order_does_not_matter() -> None:
    for keys in (("f4", "alt"), ("alt", "f4"), ("F4", "Alt")):
        assert assess(hotkey(*keys)).confirm
    assert assess(hotkey("delete", "alt", "ctrl")).forbidden


# -- forbidden chords --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "keys",
    [
        ("ctrl", "alt", "delete"),
        ("Control", "Alt", "Del"),
        ("alt", "ctrl", "del"),
        ("ctrl", "alt", "shift", "delete"),
        ("ctrl+alt+end",),
        ("ctrl", "alt", "backspace"),
        ("ctrl", "alt", "f1"),
        ("ctrl", "alt", "F7"),
        ("ctrl", "alt", "f12"),
        ("win", "l"),
        ("super", "l"),
        ("cmd", "ctrl", "q"),
        ("ctrl", "alt", "l"),
        ("cmd", "shift", "q"),
        ("alt", "sysrq", "b"),
        ("alt", "printscreen", "b"),
        ("alt", "prtsc", "o"),
        ("power",),
        ("ctrl", "cmd", "power"),
        ("sleep",),
    ],
)
def test_forbidden_chords_in_every_mode(keys: tuple[str, ...]) -> None:
    for mode in ConfirmMode:
        verdict = assess(hotkey(*keys), policy=SafetyPolicy(mode))
        assert verdict.forbidden, (keys, mode)
        assert not verdict.confirm
        assert verdict.reasons and "never presses" in verdict.reasons[0]


@pytest.mark.parametrize(
    "keys",
    [
        ("ctrl", "alt", "t"),  # open a terminal: allowed (typed commands are checked)
        ("alt", "printscreen"),  # a screenshot of the window, not SysRq
        ("printscreen",),
        ("l",),
        ("ctrl", "l"),  # focus the address bar
        ("alt", "f1"),
        ("ctrl", "f1"),
        ("ctrl", "alt"),
    ],
)
def test_near_misses_are_not_forbidden(keys: tuple[str, ...]) -> None:
    assert not assess(hotkey(*keys)).forbidden


@pytest.mark.parametrize("symbol", sorted(SHIFTED_SYMBOLS))
@pytest.mark.parametrize(
    "chord",
    [("ctrl", "alt", "shift", "escape"),  # the stop hotkey: the listener hears Shift+symbol
     ("cmd", "shift", "q")],  # log out
)
def test_a_shifted_symbol_brings_its_shift(chord: tuple[str, ...], symbol: str) -> None:
    # pyautogui presses Shift around "!" and the like: a chord that needs Shift, written
    # without it but with a shifted symbol, is the same chord on the machine.
    without_shift = tuple(k for k in chord if k != "shift")
    for mode in ConfirmMode:
        verdict = assess(hotkey(*without_shift, symbol), policy=SafetyPolicy(mode))
        assert verdict.forbidden, (without_shift, symbol, mode)
    assert "shift" in normalize_keys(["ctrl", symbol])
    assert "shift" not in normalize_keys(["ctrl", "1"])


def test_forbidden_reason_names_the_keys_as_written() -> None:
    verdict = assess(hotkey("Control", "Alt", "Del"))
    assert verdict.reasons == (
        "Control+Alt+Del opens the system security screen; holodesk never presses it",
    )


# -- risky hotkeys -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keys", "words"),
    [
        (("alt", "f4"), "closes the window"),
        (("ctrl", "w"), "closes the tab or window"),
        (("ctrl", "shift", "w"), "closes the tab or window"),
        (("cmd", "w"), "closes the tab or window"),
        (("ctrl", "f4"), "closes the tab or document"),
        (("ctrl", "q"), "quits"),
        (("ctrl", "shift", "q"), "quits"),
        (("cmd", "q"), "quits"),
        (("command", "Q"), "quits"),
        (("delete",), "deletes the selection"),
        (("del",), "deletes the selection"),
        (("shift", "delete"), "permanently"),
        (("cmd", "backspace"), "Trash"),
        (("ctrl", "d"), "terminal"),
        (("ctrl", "shift", "delete"), "browsing data"),
        (("ctrl", "shift", "esc"), "task manager"),
        (("cmd", "option", "esc"), "Force Quit"),
        (("ctrl", "enter"), "sends"),
        (("cmd", "return"), "sends"),
    ],
)
def test_risky_hotkeys(keys: tuple[str, ...], words: str) -> None:
    verdict = assess(hotkey(*keys))
    assert verdict.confirm and not verdict.forbidden
    assert len(verdict.reasons) == 1  # the most specific rule only
    assert words in verdict.reasons[0]
    assert verdict.reasons[0].startswith(f"presses {'+'.join(keys)}, which ")


@pytest.mark.parametrize(
    "keys",
    [
        ("ctrl", "s"),
        ("ctrl", "c"),
        ("ctrl", "v"),
        ("ctrl", "z"),
        ("alt", "tab"),
        ("ctrl", "t"),
        ("tab",),
        ("backspace",),
        ("escape",),
        ("f4",),
        ("shift", "enter"),
        ("enter",),  # Enter alone, not after typing
        ("w",),
        ("q",),
        ("d",),
    ],
)
def test_ordinary_hotkeys_are_not_risky(keys: tuple[str, ...]) -> None:
    verdict = assess(hotkey(*keys), previous=click("Address bar"))
    assert verdict == Verdict(confirm=False, forbidden=False, reasons=())


# -- Enter after typing --------------------------------------------------------------------------


def test_type_with_enter_is_risky() -> None:
    verdict = assess(typing("hello", press_enter=True))
    assert verdict.confirm
    assert verdict.reasons == ("presses Enter after typing, which may submit a form",)


def test_type_with_a_line_break_is_risky() -> None:
    verdict = assess(typing("first line\nsecond line"))
    assert verdict.confirm
    assert "line break" in verdict.reasons[0]


def test_enter_right_after_typing_is_risky() -> None:
    for key in ("enter", "Return"):
        verdict = assess(hotkey(key), previous=typing("hello"))
        assert verdict.confirm
        assert verdict.reasons == ("presses Enter right after typing, which may submit a form",)


@pytest.mark.parametrize(
    "keys",
    [("ctrl", "j"),  # line feed: readline's accept-line
     ("ctrl+j",),
     ("ctrl", "m"),  # carriage return: readline's accept-line
     ("shift", "enter")],  # terminals and most forms submit on it too
)
def test_enter_equivalents_right_after_typing_are_risky(keys: tuple[str, ...]) -> None:
    verdict = assess(hotkey(*keys), typing("find ~ -delete"))
    assert verdict.confirm and "right after typing" in verdict.reasons[0]


#: Every way to paste, in the spellings a model writes: each puts text in the field that the
#: policy never saw, so an Enter after it may send it.
PASTES = [
    hotkey("ctrl", "v"),
    hotkey("ctrl", "shift", "v"),  # terminals, and "paste as plain text" in many apps
    hotkey("shift", "insert"),  # X11's paste, in any toolkit
    hotkey("Shift", "Insert"),
    hotkey("shift", "ins"),
    hotkey("super", "v"),  # a clipboard manager's paste
    hotkey("win", "v"),
    hotkey("paste"),  # the keyboard's Paste key
    click("message box", button="middle"),  # X11 pastes the selection on a middle click
]
CHAT = Aim(window("Slack", title="general - Slack"))


@pytest.mark.parametrize("paste", PASTES, ids=lambda a: "+".join(getattr(a, "keys", ["middle"])))
def test_enter_after_any_paste_asks_in_an_application(paste: Action) -> None:
    what = submit_what(paste)
    assert what is not None and ("pastes with" in what or "middle-clicks" in what)
    assert not RISKY.assess(paste, aim=CHAT).confirm  # the paste alone sends nothing here
    wait = act(action="wait", seconds=1)
    for history in ([paste], [paste, wait]):
        verdict = RISKY.assess(hotkey("enter"), history=history, aim=CHAT)
        assert verdict.confirm, history
        assert verdict.reasons == ("presses Enter right after typing, which may submit a form",)
    # After a submit, the pasted text is gone: a second Enter sends nothing new.
    assert not RISKY.assess(hotkey("enter"), history=[paste, hotkey("enter")], aim=CHAT).confirm


@pytest.mark.parametrize("text", ["r\x00m -rf ~", "r\x7fm -rf ~", "r\x85m -rf ~", "rm\x1b -rf ~"])
def test_a_control_character_the_executor_drops_does_not_hide_a_command(text: str) -> None:
    # The executor types "rm -rf ~" for each: the policy judges that, not the raw text.
    assert assess(typing(text)).confirm


def test_enter_after_something_else_is_not() -> None:
    assert not assess(hotkey("enter"), previous=click("OK button")).confirm
    assert not assess(hotkey("enter"), previous=None).confirm
    assert not assess(hotkey("tab"), previous=typing("hello")).confirm


def test_plain_typing_is_not_risky() -> None:
    for text in ("hello world", "invoice 4411", "Quarterly report.pdf", "Jean-Pierre O'Brien"):
        assert assess(typing(text)) == Verdict(confirm=False, forbidden=False, reasons=())


# -- credentials -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "element",
    [
        "Password field",
        "password",
        "Passcode",
        "PIN",
        "Enter PIN",
        "CVV",
        "one-time code",
        "passwordInput",
        "login_password",
        "Verification code",
    ],
)
def test_typing_after_pointing_at_a_password_field(element: str) -> None:
    verdict = assess(typing("hunter2"), previous=click(element))
    assert verdict.confirm and verdict.secret
    assert any("password field" in r for r in verdict.reasons)
    assert "hunter2" not in " ".join(verdict.reasons)


@pytest.mark.parametrize("element", ["Username", "Spinner", "Pinned tabs", "Search", "Passport no"])
def test_typing_after_other_fields(element: str) -> None:
    verdict = assess(typing("hello"), previous=click(element))
    assert not verdict.confirm and not verdict.secret


@pytest.mark.parametrize(
    "text", ["Tr0ub4dor&3", "P@ssw0rd!", "Summer2024", "zX9#kLm2", "P4ss.word"]
)
def test_password_looking_text(text: str) -> None:
    assert looks_like_password(text)
    verdict = assess(typing(text))
    assert verdict.confirm and verdict.secret
    assert verdict.reasons == ("types text that looks like a password",)


@pytest.mark.parametrize(
    "text",
    [
        "hunter2",  # two classes
        "password",  # one class (the field rule catches it in context)
        "Short1!",  # seven characters
        "Hello World 2024!",  # words, not one token
        "Jean-Pierre",  # word punctuation does not count as a symbol
        "https://Example.com/Page1",
        "www.Example.org/Item42",
        "example2.com/a-b_c",
        "John.Doe2@Example.com",
        "C:\\Users\\Bob\\Doc1.txt",
        "/home/Bob/file_2.txt",
        "~/Notes/Todo_1.md",
        "2026-03-14",
    ],
)
def test_not_password_looking_text(text: str) -> None:
    assert not looks_like_password(text)


@pytest.mark.parametrize(
    "text",
    [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4111111111111111",
        "5500 0000 0000 0004",
        "3782 822463 10005",  # Amex, 15 digits
        "pay with 4012888888881881 please",
        "6011000990139424",
    ],
)
def test_card_numbers(text: str) -> None:
    assert is_card_number(text)
    verdict = assess(typing(text))
    assert verdict.confirm and verdict.secret
    assert "card number" in " ".join(verdict.reasons)
    assert "1111" not in " ".join(verdict.reasons)


@pytest.mark.parametrize(
    "text",
    [
        "4111 1111 1111 1112",  # Luhn fails
        "1234567890",  # too short
        "+1 415 555 2671",  # a phone number
        "12345678901234567890123",  # too long, and not inside a longer number either
        "Order 2026-03-14",
        "4111  1111  1111  1111",  # double spaces are not card grouping
    ],
)
def test_not_card_numbers(text: str) -> None:
    assert not is_card_number(text)


@pytest.mark.parametrize(
    ("previous", "text"),
    [
        (click("Passwort"), "correct horse battery staple"),
        (click("API key"), "sk-abcdefghijklmnop123456"),
        (typing("me@example.com\t"), "correct horse battery staple"),  # Tab into Password
        (None, "4111.1111.1111.1111"),  # a card number with dots
    ],
)
def test_secret_is_held(previous: Action | None, text: str) -> None:
    # Once strict xfails in test_policy_holes.py: each a secret the rules did not see.
    verdict = assess(typing(text), previous=previous)
    assert verdict.confirm and verdict.secret


@pytest.mark.parametrize(
    "element",
    [
        "Passwort",
        "Kennwort eingeben",
        "Mot de passe",
        "Contraseña",
        "Senha",
        "Wachtwoord",
        "Hasło",
        "Lösenord",
        "Пароль",
        "请输入密码",
        "パスワード",
        "비밀번호",
        "Şifre",
    ],
)
def test_password_labels_in_other_languages(element: str) -> None:
    verdict = assess(typing("correct horse battery staple"), previous=click(element))
    assert verdict.confirm and verdict.secret
    assert any("password field" in r for r in verdict.reasons)


@pytest.mark.parametrize(
    "element",
    ["API key", "api_key", "apiKeyInput", "Access token", "Personal access token",
     "Client secret", "Secret key", "Token"],
)
def test_key_and_token_labels(element: str) -> None:
    verdict = assess(typing("some value"), previous=click(element))
    assert verdict.confirm and verdict.secret
    assert any("API key or token field" in r for r in verdict.reasons)


@pytest.mark.parametrize(
    "element",
    ["Parola chiave", "Palabra clave", "Keyboard layout", "Monkey name", "Tokenizer options"],
)
def test_labels_that_only_look_like_secrets(element: str) -> None:
    verdict = assess(typing("some value"), previous=click(element))
    assert not verdict.confirm and not verdict.secret


@pytest.mark.parametrize(
    "text",
    [
        "sk-abcdefghijklmnop123456",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUv",
        "ghp_0123456789abcdefABCDEF0123456789abcd",
        "gho_0123456789abcdefABCDEF0123456789abcd",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
        "xoxp-123456789012-abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "export OPENAI_API_KEY=sk-abcdefghijklmnop123456",
    ],
)
def test_api_keys_and_tokens_are_secret(text: str) -> None:
    verdict = assess(typing(text))
    assert verdict.confirm and verdict.secret
    assert any("looks like a" in r for r in verdict.reasons)
    assert text not in " ".join(verdict.reasons)


@pytest.mark.parametrize(
    ("before", "text"),
    [
        ("me@example.com\t", "correct horse battery staple"),
        ("john.doe\t", "hunter"),
        ("CORP\\jdoe\t", "hunter"),
        ("", "me@example.com\tcorrect horse\n"),  # user, Tab, password, Enter in one go
    ],
)
def test_a_password_after_a_tab_from_a_user_name_is_secret(before: str, text: str) -> None:
    previous = typing(before) if before else None
    verdict = assess(typing(text), previous=previous)
    assert verdict.confirm and verdict.secret
    assert any("after a Tab from a user name" in r for r in verdict.reasons)


@pytest.mark.parametrize(
    ("before", "text"),
    [
        ("Alice\t", "30"),  # a spreadsheet row: a name is not a login
        ("me@example.com", "hello"),  # no Tab: still the same field
        ("", "Name\tAge\tCity"),
        ("v2.3\t", "1.0"),  # versions in a table
    ],
)
def test_a_tab_after_an_ordinary_word_is_not_secret(before: str, text: str) -> None:
    previous = typing(before) if before else None
    assert not assess(typing(text), previous=previous).secret


@pytest.mark.parametrize(
    "text",
    [
        "Room 101",
        "iPhone15",
        "macOS14",
        "v2.3.1-beta",
        "2026-03-14T10:00",
        "14/03/2026",
        "Order#12345",
        "INV-2024-0042",
        "PO#A12345",
        "sk-learn",
        "eyJ",
        "3.14159265358979",  # a decimal, not a card with dots
        "1.2.3.4",
    ],
)
def test_ordinary_words_with_a_digit_are_not_secret(text: str) -> None:
    verdict = assess(typing(text))
    assert not verdict.secret and not verdict.confirm, verdict.reasons


@pytest.mark.parametrize(
    "text", ["4111.1111.1111.1111", "3782.822463.10005", "pay 5500.0000.0000.0004 now"]
)
def test_card_numbers_grouped_by_dots(text: str) -> None:
    assert is_card_number(text)


@pytest.mark.parametrize(
    "text", ["4111.1111.1111.1112", "4111.11111111.1111", "1234.5678", "4111111111111.11"]
)
def test_dotted_numbers_that_are_not_cards(text: str) -> None:
    assert not is_card_number(text)


# -- shell commands ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("sudo apt update", "sudo"),
        ("rm -rf ~/Documents", "rm"),
        ("cd /tmp && rm file.txt", "rm"),
        ("curl -fsSL https://get.example.com | sh", "a pipe into a shell"),
        ("wget -qO- https://x.example | bash", "a pipe into a shell"),
        ("curl https://x.example/i.py | python3", "a pipe into an interpreter"),
        ("chmod 777 /etc/passwd", "chmod"),
        ("chown -R bob /", "chown"),
        ("mkfs.ext4 /dev/sdb1", "mkfs"),
        ("dd if=/dev/zero of=/dev/sda bs=1M", "dd"),
        ("echo hi > /dev/sda", "a redirect into a device"),
        (":(){ :|:& };:", "a fork bomb"),
        ("powershell -Command Get-Process", "PowerShell"),
        ("pwsh -c ls", "PowerShell"),
        ("cmd /c del x", "cmd /c"),
        ("Remove-Item -Recurse C:\\Users", "Remove-Item"),
        ("iex (New-Object Net.WebClient).DownloadString('u')", "Invoke-Expression"),
        ("format c:", "format"),
        ("del /s /q C:\\temp", "del /s"),
        ("reg delete HKCU\\Software\\X", "reg"),
        ("shutdown -h now", "shutdown"),
        ("killall Finder", "kill"),
        ("kill -9 4242", "kill"),
        ("sudo kill 4242", "sudo"),
        ("rm notes", "rm"),
        ("systemctl stop sshd", "systemctl"),
        ("pip install requests", "a package install"),
        ("brew install wget", "a package install"),
        ("git push --force origin main", "git history rewrite"),
        ("git reset --hard HEAD~3", "git history rewrite"),
        ("DROP TABLE users;", "a destructive SQL statement"),
        ("echo aGk= | base64 -d", "base64 -d"),
        ("bash -c 'echo hi'", "sh -c"),
    ],
)
def test_shell_commands(text: str, label: str) -> None:
    assert shell_command_label(text) == label
    verdict = assess(typing(text))
    assert verdict.confirm
    assert f"destructive or system command ({label})" in " ".join(verdict.reasons)


@pytest.mark.parametrize(
    "text",
    [
        "Please format the report nicely",
        "The form was confirmed",
        "kill two birds with one stone",
        "We will reboot the router tomorrow",
        "the firm will confirm",  # "rm" inside a word
        "kill 'em with kindness",
        "killing time",
        "ls -la > /dev/null",
        "Install instructions are attached",
        "drop the table from the slide",
        "ddd if you like",
    ],
)
def test_prose_is_not_a_shell_command(text: str) -> None:
    assert shell_command_label(text) is None


# -- clicks on risky elements ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("element", "what"),
    [
        ("Send", "send or submit"),
        ("Send button", "send or submit"),
        ("send-button", "send or submit"),
        ("SEND", "send or submit"),
        ("Submit order", "send or submit"),
        ("Confirm", "send or submit"),
        ("Pay now", "spend money"),
        ("Buy", "spend money"),
        ("Purchase", "spend money"),
        ("Place order", "spend money"),
        ("Transfer funds", "spend money"),
        ("Proceed to checkout", "spend money"),
        ("Delete", "delete something"),
        ("Delete button", "delete something"),
        ("deleteButton", "delete something"),
        ("btn_delete", "delete something"),
        ("btnRemove", "delete something"),
        ("Remove item", "delete something"),
        ("Uninstall", "delete something"),
        ("Format disk", "delete something"),
        ("Install", "install software or grant a permission"),
        ("Allow", "install software or grant a permission"),
    ],
)
def test_risky_element_names(element: str, what: str) -> None:
    found = risky_element_word(element)
    assert found is not None and what in found[1]
    verdict = assess(click(element))
    assert verdict.confirm
    assert verdict.reasons == (f'clicks "{element}" (it may {found[1].removeprefix("may ")})',)


@pytest.mark.parametrize(
    "element",
    [
        "Sender name",  # word boundary: "Sender" is not "Send"
        "Resend code",
        "PayPal logo",
        "Payments tab",
        "Orders",
        "Deleted items folder",
        "Removal policy link",
        "Installer log",
        "Allowance field",
        "Save button",
        "Search field",
        "Unsubmitted drafts",
    ],
)
def test_word_boundaries_keep_ordinary_elements_quiet(element: str) -> None:
    assert risky_element_word(element) is None
    assert not assess(click(element)).confirm


def test_every_click_kind_is_checked_with_its_own_verb() -> None:
    cases: list[tuple[Action, str]] = [
        (click("Delete"), "clicks"),
        (click("Delete", clicks=2), "double-clicks"),
        (click("Delete", button="right"), "right-clicks"),
        (act(action="double_click", element="Delete", x=1, y=2), "double-clicks"),
        (act(action="drag", element="Report to Trash", x=1, y=2, to_x=3, to_y=4), "drags"),
    ]
    for action, verb in cases:
        verdict = assess(action)
        assert verdict.confirm and verdict.reasons[0].startswith(f'{verb} "'), verdict


def test_moving_or_scrolling_over_risky_names_is_fine() -> None:
    assert not assess(act(action="move", element="Delete", x=1, y=2)).confirm
    scroll = act(action="scroll", element="Delete list", x=1, y=2, direction="down")
    assert not assess(scroll).confirm


# -- outside the monitor -----------------------------------------------------------------------


def test_a_point_outside_the_monitor_is_risky() -> None:
    verdict = assess(click("Save button"), outside=True)
    assert verdict.confirm
    assert verdict.reasons == ("aims outside the chosen monitor (the point was moved to its edge)",)
    assert not assess(click("Save button"), outside=False).confirm


def test_reasons_accumulate() -> None:
    verdict = assess(click("Delete"), outside=True)
    assert len(verdict.reasons) == 2
    verdict = assess(typing("sudo rm -rf /", press_enter=True))
    assert len(verdict.reasons) == 2


# -- modes -------------------------------------------------------------------------------------

ALWAYS = SafetyPolicy(ConfirmMode.ALWAYS)
NEVER = SafetyPolicy(ConfirmMode.NEVER)

INERT = [
    act(action="wait", seconds=2),
    act(action="ask_user", question="Delete it? Password?"),
    act(action="answer", text="Sent 4111 1111 1111 1111 via sudo"),
]
HARMLESS = [
    click("Save button"),
    typing("hello"),
    hotkey("ctrl", "s"),
    act(action="move", element="Menu", x=1, y=2),
    act(action="scroll", element="Page", x=1, y=2, direction="down"),
]


@pytest.mark.parametrize("action", INERT)
@pytest.mark.parametrize("mode", list(ConfirmMode))
def test_inert_actions_never_need_confirmation(action: Action, mode: ConfirmMode) -> None:
    verdict = assess(action, previous=typing("x"), outside=True, policy=SafetyPolicy(mode))
    assert verdict == Verdict(confirm=False, forbidden=False, reasons=())


@pytest.mark.parametrize("action", HARMLESS)
def test_always_mode_confirms_everything_that_acts(action: Action) -> None:
    verdict = assess(action, policy=ALWAYS)
    assert verdict.confirm and not verdict.forbidden
    assert verdict.reasons == ("every action is confirmed (confirmation mode: always)",)
    assert not assess(action).confirm  # and risky mode lets it through


def test_always_mode_keeps_the_real_reasons() -> None:
    verdict = assess(click("Delete"), policy=ALWAYS)
    assert verdict.confirm and verdict.reasons == ('clicks "Delete" (it may delete something)',)


def test_never_mode_confirms_nothing_but_still_reports_and_forbids() -> None:
    verdict = assess(click("Delete"), policy=NEVER)
    assert not verdict.confirm and not verdict.forbidden
    assert verdict.reasons == ('clicks "Delete" (it may delete something)',)
    secret = assess(typing("Tr0ub4dor&3"), policy=NEVER)
    assert not secret.confirm and secret.secret
    forbidden = assess(hotkey("ctrl", "alt", "delete"), policy=NEVER)
    assert forbidden.forbidden and not forbidden.confirm


def test_risky_mode_confirms_only_flagged_actions() -> None:
    assert assess(click("Delete")).confirm
    for action in HARMLESS:
        assert not assess(action).confirm


# -- agreement with what control.keys will actually press --------------------------------------

# The policy must judge the keys that get pressed: any spelling control.keys accepts for a key
# a rule mentions must reach the policy under the same canonical name.
_RULE_KEYS = frozenset(
    {"ctrl", "alt", "shift", "super", "enter", "delete", "backspace", "escape", "printscreen"}
    | {"power", "sleep", "eject", "end", "l", "q", "w", "d"}
    | {f"f{n}" for n in range(1, 13)}
)
_SPELLINGS = [
    *("Control", "CTRL", "ctl", "strg", "lctrl", "RightControl", "control_l", "ctrlright"),
    *("Alt", "option", "opt", "altgr", "AltGr", "lalt", "alt_r", "optionleft", "optionright"),
    *("Shift", "lshift", "shift_r", "shiftleft"),
    *("cmd", "Command", "win", "Windows", "super", "meta", "os", "logo", "mod4", "lwin"),
    *("rcmd", "cmdleft", "winright", "super_l", "Meta_R", "leftcommand"),
    *("Return", "ret", "cr", "newline", "Enter", "del", "Delete", "forwarddelete", "Del"),
    *("bksp", "backspc", "bs", "BackSpace", "esc", "Escape", "print", "prtsc", "prtscr"),
    *("prntscrn", "snapshot", "Print Screen", "PrintScreen", "F4", "f12", "End", "L", "Q"),
    *("sleep", "plus", "+"),
]


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_policy_names_agree_with_control_keys(platform: str) -> None:
    from control import keys

    names = sorted(set(_SPELLINGS) | set(keys.PYAUTOGUI_KEYS))
    checked = 0
    for name in names:
        try:
            pressed = keys.normalize_key(name, platform)
        except keys.UnknownKeyError:
            continue  # never pressed, so never judged
        ours, theirs = normalize_keys([name]), normalize_keys([pressed])
        if (ours | theirs) & _RULE_KEYS:
            assert ours == theirs, (name, pressed, platform)
            checked += 1
    assert checked > 60


# -- the application that receives the action -----------------------------------------------------


def test_a_terminal_submit_asks_whatever_the_text_and_shows_the_typed_line() -> None:
    done = [typing("ls "), typing("-la"), hotkey("up")]
    verdict = RISKY.assess(hotkey("ctrl", "j"), history=done, aim=Aim(XTERM))
    assert verdict.confirm
    assert any(r.startswith("presses ctrl+j in XTerm \u2014 bash, a terminal")
               for r in verdict.reasons)
    assert 'holodesk typed since the last submit: "ls -la"' in verdict.reasons
    assert any("Up (shell history)" in r for r in verdict.reasons)


def test_a_terminal_submit_with_nothing_typed_says_so() -> None:
    verdict = RISKY.assess(hotkey("enter"), history=[typing("x", press_enter=True)],
                           aim=Aim(XTERM))
    assert verdict.confirm
    assert any("typed nothing since the last submit" in r for r in verdict.reasons)


def test_typing_in_a_terminal_asks_even_without_a_submit() -> None:
    verdict = RISKY.assess(typing("ls"), aim=Aim(XTERM))
    assert verdict.confirm
    assert verdict.reasons[0].startswith('types "ls" in XTerm \u2014 bash, a terminal (it holds a '
                                         "pseudo-terminal; in front: bash)")
    # ... and the same text elsewhere is still a named command (a web shell, a chat bot).
    assert RISKY.assess(typing("rm -rf build"), aim=IN_AN_APP).confirm


def test_enter_with_nothing_typed_asks_only_where_the_application_is_unknown() -> None:
    assert not RISKY.assess(hotkey("enter"), aim=IN_AN_APP).confirm
    assert RISKY.assess(hotkey("enter"), aim=Aim(NOTHING)).confirm
    assert RISKY.assess(hotkey("enter")).confirm  # no finder on this platform


def test_clicks_ask_where_no_window_was_found_but_not_without_a_finder() -> None:
    assert RISKY.assess(click("Search"), aim=Aim(NOTHING)).confirm
    assert not RISKY.assess(click("Search")).confirm


def test_holodesk_never_acts_on_its_own_windows_in_any_mode() -> None:
    own = Aim(replace(XTERM, own=True))
    for mode in ConfirmMode:
        for action in (click("Approve"), typing("y"), hotkey("enter")):
            verdict = SafetyPolicy(mode).assess(action, aim=own)
            assert verdict.forbidden and "its own windows" in verdict.reasons[0]
    assert not RISKY.assess(act(action="move", element="x", x=1, y=2), aim=own).forbidden


def test_never_touch_and_only_in_refuse_by_application_name() -> None:
    keepass = Aim(window("KeePassXC"))
    guarded = SafetyPolicy(ConfirmMode.NEVER, never_touch=["org.keepassxc.KeePassXC.desktop",
                                                           "keepassxc"])
    assert guarded.assess(click("Copy"), aim=keepass).forbidden
    assert not guarded.assess(click("Copy"), aim=IN_AN_APP).forbidden
    only = SafetyPolicy(ConfirmMode.NEVER, only_in=["Firefox"])
    assert not only.assess(click("Copy"), aim=IN_AN_APP).forbidden
    refused = only.assess(click("Copy"), aim=keepass)
    assert refused.forbidden and "may act only in Firefox" in refused.reasons[0]


def test_a_password_typed_after_a_wait_still_goes_into_the_password_field() -> None:
    wait = act(action="wait", seconds=1)
    verdict = RISKY.assess(typing("correct horse battery staple"),
                           history=[click("Password"), wait], aim=IN_AN_APP)
    assert verdict.confirm and verdict.secret
    # A Tab moved on from the field: the field no longer says what is typed.
    moved = RISKY.assess(typing("Lovelace"), history=[click("Password"), typing("x"),
                                                      hotkey("tab")], aim=IN_AN_APP)
    assert not moved.secret


def test_a_terminal_question_shows_what_was_typed_since_the_person_was_last_asked() -> None:
    # The line since the last submit, and apart from it what no question showed yet.
    done = [typing("ls "), typing("-la; "), typing("rm -rf ~/x")]
    verdict = RISKY.assess(hotkey("enter"), history=done, aim=Aim(XTERM), asked_at=2)
    assert 'holodesk typed since the last submit: "ls -la; rm -rf ~/x"' in verdict.reasons
    assert 'typed since you were last asked: "rm -rf ~/x"' in verdict.reasons
    # Nothing new to show when every piece was asked about.
    shown = RISKY.assess(hotkey("enter"), history=done, aim=Aim(XTERM), asked_at=3)
    assert not any(r.startswith("typed since you were last asked") for r in shown.reasons)
