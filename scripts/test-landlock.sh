#!/usr/bin/env bash
# The sandbox's red-team and escape suites, and the end-to-end red-team
# suite of the binary, under the Landlock backend, as a
# non-root user inside a seccomp filter that refuses user namespaces (what a
# default Docker/Podman container does), where bubblewrap cannot start: the
# manager must choose Landlock there, and the suites must hold under it.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
dir=$(mktemp -d /var/tmp/synapse-landlock-XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
"$GO" build -o "$dir/nouserns" ./scripts/nouserns
"$GO" test -race -c -o "$dir/sandbox.test" ./internal/sandbox
# The end-to-end red-team suite drives the real binary (the user cannot
# build, so it is built here, static as releases are, and passed in).
CGO_ENABLED=0 "$GO" build -o "$dir/synapse" ./cmd/synapse
"$GO" test -race -c -o "$dir/cli.test" ./internal/cli
# The other packages whose red-team tests drive a sandbox (their test
# binaries double as the launcher).
for p in app tool acp mcp; do "$GO" test -race -c -o "$dir/$p.test" "./internal/$p"; done
chmod -R a+rX "$dir"
cd "$dir" # readable by the unprivileged user
# Proof that bwrap cannot start here (else the run below would not test the fallback).
if "$dir/nouserns" -- bwrap --unshare-all --ro-bind / / true 2>/dev/null; then
  echo "test-landlock: bwrap still works inside the filter; the Landlock fallback is not being tested" >&2
  exit 1
fi
"$dir/nouserns" -- env HOME="$dir" CI=true SYNAPSE_SANDBOX_BACKEND=landlock \
  "$dir/sandbox.test" -test.count=1 -test.timeout=20m -test.run 'RedTeam|Escape|Landlock|FailClosed' "$@"
for p in app tool acp mcp; do
  "$dir/nouserns" -- env HOME="$dir" CI=true SYNAPSE_SANDBOX_BACKEND=landlock PATH="$PATH" \
    "$dir/$p.test" -test.count=1 -test.timeout=20m -test.run 'RedTeam'
done
"$dir/nouserns" -- env HOME="$dir" CI=true SYNAPSE_SANDBOX_BACKEND=landlock SYNAPSE_TEST_BINARY="$dir/synapse" PATH="$PATH" \
  "$dir/cli.test" -test.count=1 -test.timeout=20m -test.run 'RedTeam|JobExitStatus'
