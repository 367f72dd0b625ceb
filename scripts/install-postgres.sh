#!/usr/bin/env bash
# Installs Debian's PostgreSQL server binaries for the service's tests (tests/service), which start their own
# server on a Unix socket in a temporary directory (tests/fixtures/servers.py). Idempotent; needs root (CI and
# the development machines run as root). The tests skip when the binaries are missing.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/pg_ctl" >/dev/null; then
    echo "postgresql already installed: $(ls -d /usr/lib/postgresql/*/bin | tail -n 1)"
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
echo "installed $(ls -d /usr/lib/postgresql/*/bin | tail -n 1)"
