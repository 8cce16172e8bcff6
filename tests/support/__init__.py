"""What the tests share: fixtures, loopback servers, corpora and pinned outputs (``data/``).
Imported as ``support.NAME`` from every test folder (pytest's ``pythonpath`` holds ``tests``)."""
