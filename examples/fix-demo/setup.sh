#!/usr/bin/env bash
# Creates a tiny git repository whose test fails, for trying `repopilot fix` offline:
#   bash examples/fix-demo/setup.sh /tmp/calc
set -euo pipefail
dest=${1:?usage: setup.sh DIR}
if [ -e "$dest" ]; then echo "$dest exists; choose a new directory" >&2; exit 2; fi
mkdir -p "$dest/src" "$dest/tests"
cd "$dest"
git init -q -b main
cat > src/__init__.py <<'PY'
PY
cat > src/calc.py <<'PY'
def add(a, b):
    """Return the sum of a and b."""
    return a - b


def mul(a, b):
    return a * b
PY
cat > tests/test_calc.py <<'PY'
from src.calc import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
PY
git add -A
git -c user.name=demo -c user.email=demo@example.com commit -q -m "calc: add and mul"
echo "created $dest (branch main, 1 commit); its test_add fails"
