"""``python -m semps`` is the ``semps`` command."""

import sys

from semps.cli import main

sys.exit(main())
