"""Which word-break class each code point has in Lucene's ``StandardTokenizer`` (Anserini 0.22.1).

Lucene 9.5 generates its tokenizer from a JFlex grammar whose character sets come from JFlex's
own Unicode tables (word-break, script and line-break properties; Unicode 12 by what they hold:
Wancho, new in 12.0, is a letter there, Yezidi, new in 13.0, is not) and Unicode 11's emoji data
(whose Extended_Pictographic reserves whole blocks, so later emoji are emoji too). No Python
Unicode database matches that mix, so the table here is not derived from Unicode files: it was
measured on the jar itself, by tokenizing every code point in a set of probe contexts and
grouping code points that behave alike (``python -m tools.lucene_oracle.oracle classes``
regenerates ``_word_break_data.py``).

Code points of one class are interchangeable for Lucene's tokenizer: replacing one by another
never changes where tokens start or end.

>>> import numpy as np
>>> names = [CLASS_NAMES[c] for c in class_table()[[ord("a"), ord("1"), ord("_"), 0x1F600]]]
>>> names
['letter', 'numeric', 'extend_num_let', 'emoji']
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["CLASS_NAMES", "REPRESENTATIVES", "class_table"]

#: Class names, in class-id order. "letter" is UAX#29's ALetter (Hangul included);
#: "ideograph" holds Han and Hiragana (each character is a token of its own);
#: "complex" is Line_Break=Complex_Context (Thai, Lao, Myanmar, Khmer runs).
CLASS_NAMES = (
    "other",
    "double_quote",
    "keycap_symbol",
    "single_quote",
    "mid_num",
    "mid_num_let",
    "numeric",
    "mid_letter",
    "letter",
    "extend_num_let",
    "emoji",
    "extend",
    "hebrew_letter",
    "complex",
    "complex_extend",
    "zwj",
    "keycap",
    "letter_emoji",
    "ideograph",
    "katakana",
    "text_selector",
    "emoji_selector",
    "regional_indicator",
    "emoji_modifier",
    "tag_spec",
    "tag_term",
)

#: One code point of each class, which the generator uses to name what it measures.
REPRESENTATIVES = {
    "other": 0x24,  # $
    "double_quote": 0x22,
    "keycap_symbol": 0x23,  # #
    "single_quote": 0x27,
    "mid_num": 0x2C,  # ,
    "mid_num_let": 0x2E,  # .
    "numeric": 0x30,
    "mid_letter": 0x3A,  # :
    "letter": 0x41,
    "extend_num_let": 0x5F,  # _
    "emoji": 0xA9,  # ©
    "extend": 0x300,  # combining grave
    "hebrew_letter": 0x5D0,
    "complex": 0xE01,  # Thai ko kai
    "complex_extend": 0xE31,  # Thai mai han-akat
    "zwj": 0x200D,
    "keycap": 0x20E3,
    "letter_emoji": 0x24C2,  # circled M
    "ideograph": 0x4E00,
    "katakana": 0x30A2,
    "text_selector": 0xFE0E,
    "emoji_selector": 0xFE0F,
    "regional_indicator": 0x1F1E6,
    "emoji_modifier": 0x1F3FB,
    "tag_spec": 0xE0020,
    "tag_term": 0xE007F,
}

UNICODE_SIZE = 0x110000


@lru_cache(maxsize=1)
def class_table() -> np.ndarray:
    """``uint8`` array: the class id of every code point (0 .. U+10FFFF)."""
    from heta_eval.lucene._word_break_data import RUNS

    starts, ids = [], []
    for item in RUNS.split():
        start, name = item.split(":")
        starts.append(int(start, 16))
        ids.append(int(name))
    bounds = np.asarray([*starts, UNICODE_SIZE], dtype=np.int64)
    table = np.repeat(np.asarray(ids, dtype=np.uint8), np.diff(bounds))
    table.flags.writeable = False
    return table
