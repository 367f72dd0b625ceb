#!/usr/bin/env bash
# Installs Debian's chromium for the `browser` tests (tests/cli/test_runs_browser.py). Idempotent: does nothing
# when chromium is already there. Needs root (CI and the development machines run as root).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    echo "chromium already installed: $(command -v chromium)"
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "installed $(chromium --version 2>/dev/null | head -n 1)"
