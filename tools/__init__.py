"""Developer tooling that is not part of the installed package (run from a checkout)."""
