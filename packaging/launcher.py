"""PyInstaller's entry script: run ``flarechat.main.main`` and exit with its code."""

import sys

from flarechat.main import main

if __name__ == "__main__":
    sys.exit(main())
