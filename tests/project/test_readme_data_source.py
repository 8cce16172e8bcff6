"""The README says where `make eval` reads SciFact from: the folder the Makefile points
``HETA_EVAL_DATA`` at when it sits beside the checkout, and a verified download otherwise."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_names_the_makefiles_shared_data_folder():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    shared = re.search(r"^SHARED_DATA := \$\(abspath (\S+)\)$", makefile, re.M)
    assert shared is not None, "the Makefile no longer sets SHARED_DATA"
    assert "export HETA_EVAL_DATA := $(SHARED_DATA)/beir" in makefile
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"SciFact is read from `{shared.group(1)}/beir/scifact`" in readme
    assert "the Makefile then sets `HETA_EVAL_DATA`; nothing is downloaded" in readme
    assert "downloads it into `datasets/cache/` and checks it against its md5" in readme
    assert "gets SciFact if needed" not in readme
