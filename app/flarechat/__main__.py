"""``python -m flarechat``: the same entry as the ``flarechat`` command."""

import sys

from flarechat.main import main

sys.exit(main())
