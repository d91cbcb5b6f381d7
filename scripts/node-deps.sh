#!/usr/bin/env bash
# Installs the npm packages the tests drive as real clients and servers (the
# Claude Agent SDK, the ACP client, MCP's reference servers). Each lives in its
# own folder under testdata/npm/<name>/ with a package.json and a lockfile of
# exact versions; `npm ci` runs there when node_modules is missing or older
# than the lockfile. Tests find them with testutil.NodeModules.
# Without npm (or offline) the tests that need them skip with the reason;
# under CI=true that is an error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for pkg in "$root"/testdata/npm/*/package.json; do
  [ -f "$pkg" ] || continue
  dir=$(dirname "$pkg")
  lock="$dir/package-lock.json"
  stamp="$dir/node_modules/.package-lock.json"
  if [ -f "$stamp" ] && { [ ! -f "$lock" ] || [ "$stamp" -nt "$lock" ]; }; then
    continue
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "node-deps: npm is not installed (apt-get install nodejs npm); tests that need $(basename "$dir") will skip" >&2
    [ "${CI:-}" = "true" ] && exit 1
    continue
  fi
  if [ -f "$lock" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  else
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
  fi || { echo "node-deps: npm install in $dir failed" >&2; [ "${CI:-}" = "true" ] && exit 1; true; }
done
