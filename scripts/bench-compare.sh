#!/usr/bin/env bash
# Side by side: builds BASE (a commit, default e26c325~20) in a temporary
# git worktree and the working tree, then measures issue 30's figures with
# both binaries, alternating old and new in every round (same machine, same
# load) and prints each figure as old, new and new/old.
#
#   scripts/bench-compare.sh [BASE]   ROUNDS=3 FOLDERS=100000 GOBENCH=1 GOROUNDS=3 STEPS=1000
#
# The figures of the binaries are printed first. GOBENCH=0 skips those that
# come from Go benchmarks (per-step growth over STEPS steps, five parallel
# sub-agents, the shell round trip); they are run in each tree, old then
# new, GOROUNDS times (means: one round of the per-step growth or of the
# round trip swings by a tenth between runs of the same code).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
base=${1:-e26c325~20}
rounds=${ROUNDS:-3}
folders=${FOLDERS:-100000}
gobench=${GOBENCH:-1}
gorounds=${GOROUNDS:-3}
steps=${STEPS:-1000}
flags=(-trimpath -ldflags "-s -w")
[ -x /usr/bin/time ] || { echo "bench-compare: needs GNU time at /usr/bin/time" >&2; exit 1; }

work=$(mktemp -d /var/tmp/synapse-compare-XXXXXX)
srv_pid=
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null || true
  git worktree remove --force "$work/base" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
git worktree add -q --detach "$work/base" "$base"
echo "base: $(git -C "$work/base" log --oneline -1)"
echo "new:  working tree of $(git log --oneline -1)"
# The new binary is built as `make build` builds a release (static); the
# base as it was released then (with cgo, the toolchain's default).
(cd "$work/base" && "$GO" build "${flags[@]}" -o "$work/old.link" ./cmd/synapse)
CGO_ENABLED=0 "$GO" build "${flags[@]}" -o "$work/new.link" ./cmd/synapse
# Both are copied, as an installer would: the peak RSS counts the binary's
# pages that faults map, and the kernel maps whole page-cache folios, whose
# sizes depend on how the file was written (a file the linker wrote shows
# up to 2 MB more, and varies from run to run; a copy's is steady).
cp "$work/old.link" "$work/old" && cp "$work/new.link" "$work/new" && rm "$work/old.link" "$work/new.link"
"$GO" build -o "$work/benchtool" ./scripts/benchtool

# The trees: one file, and FOLDERS folders with nested repositories and a
# node_modules, outside the host temp dir (the sandbox's private /tmp).
mkdir -p "$work/one" && echo hi > "$work/one/README.md"
"$work/benchtool" tree "$work/big" "$folders"
git -C "$work/big" init -q

# The scripted model server for the text turn.
coproc SRV { "$work/benchtool" serve; }
srv_pid=$SRV_PID
read -r url <&"${SRV[0]}"
home=$work/home
mkdir -p "$home"
env_run=(env -i PATH="$PATH" HOME="$home" SYNAPSE_HOME="$home/.synapse" ANTHROPIC_API_KEY=test ANTHROPIC_BASE_URL="$url")

declare -A sum count
add() { sum[$1]=$(awk -v a="${sum[$1]:-0}" -v b="$2" 'BEGIN { print a + b }'); }
# settle waits for the background passes of the repository guard that a
# session in the big tree leaves (they would slow the next figure down).
settle() { while pgrep -f -- "__landlock-exec --sweep" >/dev/null; do sleep 0.1; done; }
# timed NAME DIR CMD...: wall seconds and peak RSS (MB) of one run.
timed() {
  local name=$1 dir=$2; shift 2
  local out
  settle
  out=$(cd "$dir" && /usr/bin/time -f "%e %M" "${env_run[@]}" "$@" 2>&1 >/dev/null | tail -1) || true
  add "$name s" "${out% *}"
  add "$name MB" "$(awk -v k="${out#* }" 'BEGIN { print k / 1024 }')"
}
# watches BIN: the most inotify watches one session holds in the big tree
# while a command runs after the first.
watches() {
  local bin=$1 pid max=0 n
  settle
  (cd "$work/big" && exec "${env_run[@]}" "$bin" exec true 'sleep 2') >/dev/null 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    n=$("$work/benchtool" watches "$pid" 2>/dev/null || echo 0)
    [ "$n" -gt "$max" ] && max=$n
    sleep 0.1
  done
  wait "$pid" || true
  echo "$max"
}

# Warm-up: the first run installs the bundled skills into the home.
for v in old new; do
  (cd "$work/one" && "${env_run[@]}" "$work/$v" run --output-format text "hi") >/dev/null 2>&1 || true
done
for r in $(seq 1 "$rounds"); do
  for v in old new; do
    bin=$work/$v
    timed "$v first command, 1-file repo" "$work/one" "$bin" exec true
    # The first session in the big tree (no scan cache), then the next;
    # what else the cache holds (the bubblewrap probe's memo) is the
    # machine's, kept as any earlier run on it would have left it.
    rm -f "$home/.synapse/cache/scan-"*
    timed "$v first command, big repo" "$work/big" "$bin" exec true
    timed "$v first command, big repo, 2nd session" "$work/big" "$bin" exec true
    # A run whose model writes one command at a model's pace (benchtool
    # serve): what the first command costs where a model precedes it.
    timed "$v command turn, 1-file repo" "$work/one" "$bin" run --output-format text "run: true"
    timed "$v command turn, big repo" "$work/big" "$bin" run --output-format text "run: true"
    add "$v inotify watches, big repo" "$(watches "$bin")"
    timed "$v --version" "$work/one" "$bin" --version
    timed "$v text turn" "$work/one" "$bin" run --output-format text "hi"
    timed "$v 20 MB output" "$work/one" "$bin" exec 'seq 1 3000000'
  done
  echo "round $r of $rounds done" >&2
done
count["binary MB"]=1
add "old binary MB" "$(stat -c %s "$work/old" | awk '{ print $1 / 1e6 }')"
add "new binary MB" "$(stat -c %s "$work/new" | awk '{ print $1 / 1e6 }')"

table() { # the figures gathered so far
  printf '\n%-44s %12s %12s %8s\n' "figure (mean, interleaved)" old new new/old
  for k in "${!sum[@]}"; do
    case $k in old\ *) ;; *) continue ;; esac
    f=${k#old }
    o=${sum["old $f"]}
    n=${sum["new $f"]:-}
    [ -z "$n" ] && continue
    d=${count["$f"]:-$rounds}
    awk -v f="$f" -v o="$o" -v n="$n" -v d="$d" 'BEGIN {
      o /= d; n /= d
      printf "%-44s %12.3f %12.3f %8s\n", f, o, n, (o > 0 ? sprintf("%.2f", n / o) : "-") }'
  done | sort
}
table
# The goal of the first line: the big repository within 1.2 x the one-file one.
for v in old new; do
  for f in "first command, big repo" "first command, big repo, 2nd session"; do
    awk -v v="$v" -v f="$f" -v b="${sum["$v $f s"]}" -v o="${sum["$v first command, 1-file repo s"]}" \
      'BEGIN { printf "%s: %s / 1-file repo: %.2f x\n", v, f, b / o }'
  done
  awk -v v="$v" -v b="${sum["$v command turn, big repo s"]}" -v o="${sum["$v command turn, 1-file repo s"]}" \
    'BEGIN { printf "%s: command turn, big repo / 1-file repo: %.2f x\n", v, b / o }'
done

# Go benchmarks, in each tree (old, new, old, new …).
gob() { # gob DIR PKG BENCH TIME METRIC…: the metrics' values (ns/op or custom units), one line
  local dir=$1 pkg=$2 bench=$3 n=$4
  shift 4
  (cd "$dir" && "$GO" test -run '^$' -bench "$bench" -benchtime "$n" "$pkg" 2>/dev/null) |
    awk -v ms="$*" '/^Benchmark/ { n = split(ms, m, " "); for (j = 1; j <= n; j++) for (i = 3; i < NF; i++) if ($(i+1) == m[j]) printf "%s ", $i; print ""; exit }' ||
    true # a benchmark missing in the old tree, or one that failed: no figure
}
if [ "$gobench" = 1 ]; then
  for f in "per-step growth (last/first quarter)" "5 parallel sub-agents ms" "shell round trip ms" "web echo p50 µs"; do count["$f"]=$gorounds; done
  for r in $(seq 1 "$gorounds"); do
    for v in old new; do
      dir=$PWD
      [ "$v" = old ] && dir=$work/base
      read -r q1 q4 <<<"$(gob "$dir" ./internal/agent LongSessionLargeResults "${steps}x" agent-µs/step-firstQ-median agent-µs/step-lastQ-median)"
      [ -n "${q1:-}" ] && [ -n "${q4:-}" ] && add "$v per-step growth (last/first quarter)" "$(awk -v a="$q4" -v b="$q1" 'BEGIN { print a / b }')"
      p=$(gob "$dir" ./internal/e2e ParallelSubagentTurn 20x ns/op)
      [ -n "$p" ] && add "$v 5 parallel sub-agents ms" "$(awk -v a="$p" 'BEGIN { print a / 1e6 }')"
      e=$(gob "$dir" ./internal/shell EchoRoundTripBwrap 2000x ns/op)
      [ -n "$e" ] && add "$v shell round trip ms" "$(awk -v a="$e" 'BEGIN { print a / 1e6 }')"
      w=$(gob "$dir" ./internal/web 'KeystrokeEcho$' 3000x p50-µs)
      [ -n "$w" ] && add "$v web echo p50 µs" "$w"
    done
    # ttyd 1.7.7, the echo figure's yardstick (scripts/ttyd.sh builds it),
    # through the same client in the same run.
    if command -v ttyd >/dev/null; then
      t=$(gob "$PWD" ./internal/web 'KeystrokeEchoTTYD$' 3000x p50-µs)
      [ -n "$t" ] && ttyd_sum=$(awk -v a="${ttyd_sum:-0}" -v b="$t" 'BEGIN { print a + b }')
    fi
    echo "Go benchmarks: round $r of $gorounds done" >&2
  done
  table
  if [ -n "${ttyd_sum:-}" ]; then
    awk -v t="$ttyd_sum" -v n="${sum["new web echo p50 µs"]:-0}" -v r="$gorounds" \
      'BEGIN { printf "\nweb echo p50: new %.1f µs, ttyd 1.7.7 %.1f µs: %.2f x\n", n / r, t / r, n / t }'
  fi
fi

