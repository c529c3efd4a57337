"""`python -m etude` runs the `etude` command."""

import sys

from etude.cli import main

sys.exit(main())
