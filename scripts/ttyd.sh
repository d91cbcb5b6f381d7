#!/usr/bin/env bash
# Builds ttyd 1.7.7, the yardstick of the web console's keystroke echo
# (BenchmarkKeystrokeEchoTTYD, bench-compare), from Debian's source package
# (bookworm has no ttyd; its build needs cmake, libjson-c-dev,
# libwebsockets-dev, libuv1-dev and zlib1g-dev) and installs it as DEST
# (default /usr/local/bin/ttyd). Benchmarks only: no test needs it.
set -euo pipefail
dest=${1:-/usr/local/bin/ttyd}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
apt-get install -y -q cmake libjson-c-dev libwebsockets-dev libuv1-dev zlib1g-dev >/dev/null
curl -fsS -o "$work/ttyd.tar.xz" http://deb.debian.org/debian/pool/main/t/ttyd/ttyd_1.7.7.orig.tar.xz
echo "e1f4e58d67829f84737ad433871c59bc  $work/ttyd.tar.xz" | md5sum -c --quiet -
tar -C "$work" -xf "$work/ttyd.tar.xz"
cmake -S "$work/ttyd-1.7.7" -B "$work/build" >/dev/null
make -C "$work/build" -j"$(nproc)" >/dev/null
install -m 755 "$work/build/ttyd" "$dest"
"$dest" --version
