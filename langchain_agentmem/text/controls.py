"""Characters that steer a terminal or hide text from a reader, and text shown without them.

Three kinds of character never reach a reader as they are, neither in the prompt
(:func:`~langchain_agentmem.integrations.prompt.quote` writes them as JSON escapes) nor on
the terminal of ``agentmem chat`` (:func:`shown` writes them as visible escapes):

- **control characters** (:data:`CONTROLS`): C0 (ESC starts a terminal's escape
  sequences: clear the screen, set the clipboard with OSC 52, links with OSC 8), DEL and C1
  (U+0080..U+009F: U+009B is a CSI, U+009D an OSC to a terminal that takes 8-bit controls);
- **bidirectional controls** (:data:`BIDI`), which reorder what a reader sees;
- **invisible characters** (:data:`INVISIBLE`) that can carry text no reader sees: the TAG
  block (U+E0000..U+E007F, "ASCII smuggling": a model can read them as the ASCII letters
  they mirror), the variation selectors supplement (U+E0100..U+E01EF: a run of them can
  carry any bytes after an emoji), and the format characters that show nothing (soft
  hyphen, zero-width space, word joiner, the invisible operators, the byte order mark,
  interlinear annotation, ...).

Left as they are: the zero-width joiner and non-joiner (U+200C, U+200D), the variation
selectors U+FE00..U+FE0F and the visible format signs of some scripts (Arabic number
signs, say), which emoji and ordinary text in several scripts (Persian, the Indic scripts)
need.
"""

from __future__ import annotations

from collections.abc import Iterable

CONTROLS = ((0x00, 0x1F), (0x7F, 0x9F))
"""C0, DEL and C1 control characters (ranges of code points, both ends included)."""

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Bidirectional controls: they reorder what a reader sees."""

INVISIBLE = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200B),  # zero-width space
    (0x2060, 0x2065),  # word joiner, invisible operators
    (0x206A, 0x206F),  # deprecated format characters
    (0xFEFF, 0xFEFF),  # zero-width no-break space (byte order mark)
    (0xFFF9, 0xFFFB),  # interlinear annotation: text shown apart, or not at all
    (0x1D173, 0x1D17A),  # musical format characters
    (0xE0000, 0xE007F),  # TAG characters
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
"""Characters that show nothing yet can carry text (ranges, both ends included)."""


def code_points(ranges: Iterable[tuple[int, int]]) -> list[int]:
    """Every code point of ``ranges`` (both ends included)."""
    return [c for low, high in ranges for c in range(low, high + 1)]


HIDDEN = frozenset(code_points(CONTROLS)) | {ord(c) for c in BIDI} | set(code_points(INVISIBLE))
"""Every code point a reader never gets as it is (:data:`CONTROLS`, :data:`BIDI`,
:data:`INVISIBLE`)."""


def escape(code: int) -> str:
    """A code point as Python writes it in a string literal: ``\\x1b``, ``\\u202e``,
    ``\\U000e0041``."""
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


_SHOWN: dict[int, str | None] = {c: escape(c) for c in HIDDEN if c not in (0x09, 0x0A, 0x0D)}
_SHOWN[0x0D] = None  # a carriage return only moves back over the line: left out


def shown(text: str) -> str:
    """``text`` as a terminal may show it: the characters of :data:`HIDDEN` written as
    visible escapes (``\\x1b``, ``\\x9b``, ``\\u202e``, ``\\U000e0041``), but for the line
    feed and the tab, which pass, and the carriage return, which is left out.

    One character at a time, so text that streams in parts is made safe part by part: an
    escape sequence split between two parts cannot get through.
    """
    return text.translate(_SHOWN)
