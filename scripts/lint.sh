#!/usr/bin/env bash
# Static checks of `make test`: staticcheck and deadcode, at pinned versions,
# installed from the Go module proxy into bin/tools when missing.
#
# deadcode lists functions no path from main reaches (test helpers living in
# production files included). A finding fails the check unless its line in
# scripts/deadcode.allow names it, with the reason it stays.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2   # honnef.co/go/tools
DEADCODE_VERSION=v0.52.0     # golang.org/x/tools
GO=${GO:-go}
TOOLS="$PWD/bin/tools"

install() { # name module version
	local bin="$TOOLS/$1-$3"
	if [ ! -x "$bin" ]; then
		echo "lint: installing $2@$3" >&2
		mkdir -p "$TOOLS/tmp"
		if ! GOBIN="$TOOLS/tmp" "$GO" install "$2@$3"; then
			echo "lint: cannot install $2@$3 from the module proxy; check network/GOPROXY, or install it and put it at $bin" >&2
			exit 1
		fi
		mv "$TOOLS/tmp/$1" "$bin"
		rmdir "$TOOLS/tmp" 2>/dev/null || true
	fi
	echo "$bin"
}

staticcheck=$(install staticcheck honnef.co/go/tools/cmd/staticcheck "$STATICCHECK_VERSION")
deadcode=$(install deadcode golang.org/x/tools/cmd/deadcode "$DEADCODE_VERSION")

status=0
echo "lint: staticcheck ./..." >&2
"$staticcheck" ./... || status=1

# macOS (sandbox-exec) must keep building: Linux-only code lives in _linux.go files.
echo "lint: GOOS=darwin go vet ./..." >&2
GOOS=darwin "$GO" vet ./... || status=1

echo "lint: deadcode ./cmd/..." >&2
found=$("$deadcode" ./cmd/...)
allow=scripts/deadcode.allow
unexpected=""
while IFS= read -r line; do
	[ -z "$line" ] && continue
	# "path/file.go:12:6: unreachable func: Name" → allowed when "Name path/file.go" is listed.
	file=${line%%:*}
	name=${line##*: }
	if ! grep -Eq "^${name//./\\.}[[:space:]]+${file//./\\.}([[:space:]]|$)" "$allow" 2>/dev/null; then
		unexpected+="$line"$'\n'
	fi
done <<<"$found"
if [ -n "$unexpected" ]; then
	printf '%s' "$unexpected" >&2
	echo "lint: the functions above are unreachable from main: delete them, move test helpers into _test.go files, or list them in $allow with the reason they stay" >&2
	status=1
fi
exit $status
