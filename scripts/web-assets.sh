#!/usr/bin/env bash
# Copies the web console's third-party front-end files (xterm.js and its fit
# add-on, exact versions pinned in web/package-lock.json) from npm into
# internal/web/static/vendor, where go:embed picks them up. They are not committed.
# Without npm (or offline) the Go build still works and the console page says
# that the terminal is missing; under CI=true that is an error.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
web="$root/web"
dest="$root/internal/web/static/vendor"
[ -f "$web/package.json" ] || exit 0

soft_fail() {
  echo "web-assets: $1" >&2
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  echo "web-assets: continuing without xterm.js: the console page will say it is missing" >&2
  exit 0
}

need_install=0
for f in "$web/node_modules/@xterm/xterm/lib/xterm.js" "$web/node_modules/@xterm/addon-fit/lib/addon-fit.js" "$web/node_modules/playwright-core/package.json"; do
  [ -f "$f" ] || need_install=1
done
if [ -f "$web/node_modules/.package-lock.json" ] && [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  need_install=1
fi
if [ "$need_install" = 1 ]; then
  command -v npm >/dev/null 2>&1 || soft_fail "npm is not installed (apt-get install nodejs npm)"
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error) || soft_fail "npm ci in web/ failed"
fi
"$web/copy-assets.sh" "$dest"
