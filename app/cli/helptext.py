"""How `holodesk ... --help` is laid out: the parser class every command's parser is made of,
its text layout, and the "Examples:" block each command ends with.

argparse wraps a description into one paragraph (the default) or prints it exactly as written
(``RawDescriptionHelpFormatter``). Neither fits a help that has paragraphs, a list of commands
or settings and lines of examples, so :class:`HelpFormatter` reads the text as blocks:

* a paragraph (lines that start at the margin) is wrapped to the terminal, as argparse does;
* an indented line ``  TERM  TEXT`` (two spaces or more after the term) is an entry of a list:
  TEXT wraps under itself, so the terms stay in a column;
* any other indented line (a command to copy) is kept as it is.

Every parser of the tree is a :class:`Parser` (argparse makes a subcommand's parser of its
parent's class), so the layout holds for every command without each one asking for it.
"""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["EXAMPLES", "HelpFormatter", "Parser", "entries", "examples", "later_help"]

#: The heading of the examples block that ends every command's help (tests look for it).
EXAMPLES = "Examples:"

# An entry of a list: the indent and the term, two spaces or more, then its text.
_ENTRY = re.compile(r"^(\s+\S.*?\s{2,})(\S.*)$")


class HelpFormatter(argparse.HelpFormatter):
    """argparse's layout, with descriptions and epilogs read as paragraphs, lists and
    verbatim lines (see the module doc)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        for block in text.strip("\n").split("\n\n"):
            paragraph: list[str] = []
            listed: list[str] = []
            for line in block.splitlines():
                if line[:1].isspace():
                    out.extend(self._wrap(paragraph, width, indent))
                    paragraph = []
                    listed.append(line)
                else:
                    out.extend(self._listed(listed, width, indent))
                    listed = []
                    paragraph.append(line)
            out.extend(self._wrap(paragraph, width, indent))
            out.extend(self._listed(listed, width, indent))
            out.append("")
        return "\n".join(out).rstrip("\n")

    @staticmethod
    def _wrap(paragraph: list[str], width: int, indent: str) -> list[str]:
        if not paragraph:
            return []
        return textwrap.wrap(" ".join(paragraph), width, initial_indent=indent,
                             subsequent_indent=indent, break_on_hyphens=False)

    @staticmethod
    def _listed(lines: list[str], width: int, indent: str) -> list[str]:
        """Indented lines: kept as they are when they fit; else each entry's text wraps in
        its column or, when the terms leave too little room, goes under its term (all of
        the list alike, so it reads as one)."""
        if all(len(indent + line) <= width for line in lines):
            return [indent + line for line in lines]
        split = [_ENTRY.match(line) for line in lines]
        column = max((len(m.group(1)) for m in split if m is not None), default=0)
        out: list[str] = []
        for line, match in zip(lines, split, strict=True):
            if match is None:
                out.append(indent + line)
                continue
            term, text = match.groups()
            # A comment's next lines go under its words, clear of the "#".
            inner = "  " if text.startswith("# ") else ""
            if len(indent) + column <= width // 2:
                out += textwrap.wrap(text, width, initial_indent=indent + term,
                                     subsequent_indent=indent + " " * len(term) + inner,
                                     break_on_hyphens=False)
            else:
                under = indent + " " * (len(term) - len(term.lstrip()) + 4)
                out += [indent + term.rstrip(), *textwrap.wrap(
                    text, width, initial_indent=under, subsequent_indent=under + inner,
                    break_on_hyphens=False)]
        return out


class Parser(argparse.ArgumentParser):
    """An argument parser laid out by :class:`HelpFormatter`, whose help may end with text
    made only when the help is shown (:func:`later_help`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        self._later: Callable[[], str] | None = None

    def format_help(self) -> str:
        if self._later is None:
            return super().format_help()
        own = self.epilog
        self.epilog = "\n\n".join(part for part in (self._later(), own) if part)
        try:
            return super().format_help()
        finally:
            self.epilog = own


def later_help(parser: argparse.ArgumentParser, text: Callable[[], str]) -> None:
    """Put ``text()`` before the examples of ``parser``'s help, made when the help is shown:
    the parser is built for every command, the text only for the one that asks for help."""
    if isinstance(parser, Parser):
        parser._later = text
    else:  # a parser of another class: made now
        parser.epilog = "\n\n".join(part for part in (text(), parser.epilog) if part)


def entries(rows: Sequence[tuple[str, str]], indent: int = 2) -> str:
    """``rows`` of (term, text) as the indented list :class:`HelpFormatter` wraps, the texts
    in one column."""
    width = max((len(term) for term, _ in rows), default=0)
    return "\n".join(f"{' ' * indent}{term:<{width}}  {text}".rstrip() for term, text in rows)


def examples(*rows: tuple[str, str]) -> str:
    """The "Examples:" block of a command's help: each a command line and what it does (the
    second may be "" for a line that says it all)."""
    commands = [(command, f"# {what}" if what else "") for command, what in rows]
    return f"{EXAMPLES}\n{entries(commands)}"
