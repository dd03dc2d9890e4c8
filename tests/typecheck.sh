#!/usr/bin/env bash
# Type-checks the tests with tests/mypy.ini, one mypy run per test tree. Tests import their helper
# modules (and conftest) as top-level names from the folders pytest puts on sys.path, so each run
# puts exactly that tree's helper folders on MYPYPATH, and no two conftest.py meet in one run.
# Every run goes ahead even when one fails, so a single CI log shows every error.
set -euo pipefail
cd "$(dirname "$0")/.."

MYPY=.venv/bin/mypy
failed=0

# check <MYPYPATH> <paths...>: no cache is read or written (the package's own mypy keeps its own).
check() {
    local path="$1"
    shift
    printf -- '-- mypy %s\n' "$*"
    MYPYPATH="$path" "$MYPY" --config-file tests/mypy.ini --no-incremental --cache-dir=/dev/null \
        "$@" || failed=1
}

check app:tests tests/*.py tests/support
check app:tests/unit/api:tests tests/unit/api
check app:tests/unit/core/session:tests/unit/core/experiments:tests tests/unit/core tests/unit/*.py
check app:tests/unit/emulator tests/unit/emulator
check app:tests tests/unit/settings
check app:tests/ui:tests/ui/window:tests/ui/transcript:tests/ui/capabilities:tests tests/ui \
    --exclude 'tests/ui/transcript/conftest\.py$'
# On its own: with tests/ui/transcript on MYPYPATH it would be a second top-level "conftest".
check app:tests/ui:tests tests/ui/transcript/conftest.py
check app:tests tests/integration
check app:tests tests/packaging
check app:tests/faults:tests/ui:tests tests/faults

exit "$failed"
