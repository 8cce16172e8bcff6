"""The report's one display rule for text it did not write (heta_eval/report/text.py): ids
are cut as chunk ids always were and show every invisible, space-like or reordering
character, so two different ids never look the same; text bodies keep their layout but show
control and bidi characters."""

from __future__ import annotations

import itertools
import sys
import unicodedata

from heta_eval.report.text import ID_LIMIT, cut, plain_ids, shown, shown_id, whole_id

HIDDEN = ("Cc", "Cf", "Zs", "Zl", "Zp", "Cs")
BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]


def test_every_invisible_space_like_or_reordering_character_of_an_id_is_shown():
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if unicodedata.category(char) in HIDDEN and char != " ":
            assert shown_id(f"a{char}b") == f"a⟨U+{code:04X}⟩b", hex(code)


def test_an_id_of_ordinary_characters_is_shown_as_it_is():
    for text in (
        "doc-1",
        "a b",
        "PMID:12345",
        "Größe",
        "東京",
        "مرحبا",
        "שלום",
        "x\u0301",
        "emoji 😀",
        "tab",
        "⟩",
        "\u2026",
    ):
        assert shown_id(text) == text == whole_id(text)


def test_two_different_ids_never_look_the_same():
    parts = [
        "a",
        " ",
        "\n",
        "\t",
        "\u00a0",
        "\u202e",
        "\u200b",
        "⟨",
        "U+000A⟩",
        "⟨U+000A⟩",
        "\ud800",
        "\x00",
        "\u2028",
    ]
    ids = {"".join(p) for n in (1, 2, 3) for p in itertools.product(parts, repeat=n)}
    assert len({shown_id(i) for i in ids}) == len(ids)
    assert len({whole_id(i) for i in ids}) == len(ids)
    # The one-pass check the payload makes first agrees with the rule, id by id.
    for i in [*ids, "x" * ID_LIMIT, "x" * (ID_LIMIT + 1), "\ue000", "\U000e0001"]:
        assert plain_ids([i]) == (shown_id(i) == i), repr(i)


def test_a_long_id_is_cut_by_the_rule_of_chunk_ids_and_whole_in_its_title():
    long = "x" * 200_000
    assert shown_id(long) == cut(long, ID_LIMIT) == "x" * 300 + "… (199700 more characters)"
    assert whole_id(long) == long
    assert shown_id("\u202e" * 400).endswith("⟨U+202E⟩… (100 more characters)")


def test_a_text_body_keeps_its_layout_and_shows_controls_and_bidi_characters():
    assert shown("line one\nline two\tcolumn") == "line one\nline two\tcolumn"
    assert shown("nul\x00 bell\x07 cr\r del\x7f c1\x85") == (
        "nul⟨U+0000⟩ bell⟨U+0007⟩ cr⟨U+000D⟩ del⟨U+007F⟩ c1⟨U+0085⟩"
    )
    for code in BIDI:
        assert shown(f"x{chr(code)}y") == f"x⟨U+{code:04X}⟩y"
    assert shown("lone \ud800") == "lone ⟨U+D800⟩"
    # Joiners, soft hyphens and separators belong to scripts and emoji: kept.
    for text in ("👩\u200d💻", "می\u200cخواهم", "co\u00adop", "line\u2028separator"):
        assert shown(text) == text
    assert shown("a" * 5_000, 4_000) == "a" * 4_000 + "… (1000 more characters)"
    assert shown(None) == ""
