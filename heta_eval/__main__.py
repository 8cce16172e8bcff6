import sys

from heta_eval.cli import main

sys.exit(main())
