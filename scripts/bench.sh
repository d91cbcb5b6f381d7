#!/usr/bin/env bash
# Runs every benchmark with an iteration count that suits its cost, so the
# figures quoted in issue notes can be reproduced with one command: make bench.
set -euo pipefail
cd "$(dirname "$0")/.."
run() { local n=$1; shift; go test -run '^$' -bench . -benchmem -benchtime "$n" "$@"; }
run 2000x ./internal/shell ./internal/tool ./internal/render ./internal/textutil ./internal/evolve ./internal/acp ./internal/writecheck
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
