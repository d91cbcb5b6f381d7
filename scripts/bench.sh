#!/usr/bin/env bash
# Runs every benchmark with an iteration count that suits its cost, so the
# figures quoted in issue notes can be reproduced with one command: make bench.
set -euo pipefail
cd "$(dirname "$0")/.."
run() { local n=$1; shift; go test -run '^$' -bench . -benchmem -benchtime "$n" "$@"; }
run 2000x ./internal/tool ./internal/render ./internal/textutil ./internal/evolve ./internal/acp ./internal/writecheck
# The shell: round trips many times, a 20 MB output (to its spill file,
# MiB allocated per run) a few.
go test -run '^$' -bench 'EchoRoundTrip' -benchmem -benchtime 2000x ./internal/shell
go test -run '^$' -bench 'LargeOutput' -benchmem -benchtime 5x ./internal/shell
run 200x ./internal/hooks ./internal/proc ./internal/repl
run 200x ./internal/sandbox ./internal/agentsh ./internal/agent ./internal/llm/anthropic \
  ./internal/mcp ./internal/skills ./internal/e2e
run 30x ./internal/cli
# A long session: 2000 tool calls with 8 KB results under the default context
# management (offload, compaction); per-step agent time first vs last quarter,
# peak RSS, largest request against the window.
go test -run '^$' -bench 'LongSessionLargeResults' -benchmem -benchtime 2000x ./internal/agent
# The web console: keystroke echo (p50/p99 per round trip) needs many
# samples, throughput moves 1 MiB per iteration. EchoTTYD runs the same echo
# against ttyd when it is installed, for comparison (it skips otherwise).
go test -run '^$' -bench 'KeystrokeEcho' -benchmem -benchtime 2000x ./internal/web
go test -run '^$' -bench 'Throughput' -benchmem -benchtime 100x ./internal/web
# Start-up and a 20 MB command output through the built binary (make bench
# builds it first): wall time and peak RSS by GNU time, and what package
# initialisation costs before main (GODEBUG=inittrace). Measured, not
# asserted (issue 30).
bin=bin/synapse
if [ -x "$bin" ] && [ -x /usr/bin/time ]; then
  for _ in 1 2 3; do
    /usr/bin/time -f "startup: synapse --version: %e s, %M KB max RSS" "$bin" --version 2>&1 >/dev/null
  done
  GODEBUG=inittrace=1 "$bin" --version 2>&1 >/dev/null |
    awk '/^init / { ms += $5; by += $8 } END { printf "startup: package init: %.1f ms, %.2f MB allocated\n", ms, by / 1e6 }'
  /usr/bin/time -f "20 MB output: synapse exec 'seq 1 3000000': %e s, %M KB max RSS" \
    "$bin" exec 'seq 1 3000000' 2>&1 >/dev/null
else
  echo "startup/20 MB output: skipped (needs $bin and GNU time at /usr/bin/time)"
fi
