#!/usr/bin/env bash
# Copies the web console's third-party front-end files (xterm.js) from npm into
# internal/web/static/vendor, where go:embed picks them up. They are not committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
web="$root/web"
dest="$root/internal/web/static/vendor"
[ -f "$web/package.json" ] || exit 0
mkdir -p "$dest"
if [ ! -d "$web/node_modules" ] || [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ -x "$web/copy-assets.sh" ]; then "$web/copy-assets.sh" "$dest"; fi
