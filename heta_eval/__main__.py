"""``python -m heta_eval`` runs the command line."""

import sys

from heta_eval.cli import main

if __name__ == "__main__":
    sys.exit(main())
