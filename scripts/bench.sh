#!/usr/bin/env bash
# Runs every benchmark with an iteration count that suits its cost, so the
# figures quoted in issue notes can be reproduced with one command: make bench.
set -euo pipefail
cd "$(dirname "$0")/.."
run() { local n=$1; shift; go test -run '^$' -bench . -benchmem -benchtime "$n" "$@"; }
run 2000x ./internal/shell ./internal/tool ./internal/render ./internal/textutil
run 200x ./internal/sandbox ./internal/agentsh ./internal/agent ./internal/llm/anthropic \
  ./internal/mcp ./internal/skills ./internal/e2e
run 30x ./internal/web ./internal/cli
