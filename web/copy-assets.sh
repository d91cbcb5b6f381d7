#!/usr/bin/env bash
# Usage: web/copy-assets.sh DEST
# Copies xterm.js, its stylesheet and the fit add-on from web/node_modules into DEST
# (internal/web/static/vendor), where the Go build embeds them. Run `npm ci` in web/ first.
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 DEST" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
dest=$1
nm="$here/node_modules/@xterm"
for f in "$nm/xterm/lib/xterm.js" "$nm/xterm/css/xterm.css" "$nm/addon-fit/lib/addon-fit.js"; do
  if [ ! -f "$f" ]; then
    echo "copy-assets: $f is missing; run 'npm ci' in $here first" >&2
    exit 1
  fi
done
mkdir -p "$dest"
# Copy to temporary names then rename, so a concurrent go build never embeds half a file.
for pair in "xterm/lib/xterm.js:xterm.js" "xterm/css/xterm.css:xterm.css" "addon-fit/lib/addon-fit.js:addon-fit.js"; do
  src="$nm/${pair%%:*}"
  name="${pair##*:}"
  if ! cmp -s "$src" "$dest/$name"; then
    cp "$src" "$dest/.$name.tmp"
    mv -f "$dest/.$name.tmp" "$dest/$name"
  fi
done
