#!/usr/bin/env bash
# Installs what Synapse and its tests need on Debian when it is missing.
# As root it installs; otherwise it prints the exact command to run.
set -euo pipefail
need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs npm)
if [ "${SYNAPSE_BROWSER_TESTS:-}" = "1" ] || [ "${CI:-}" = "true" ]; then
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing ${need_apt[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "deps: missing ${need_apt[*]}; install with: sudo apt-get install -y ${need_apt[*]}" >&2
  fi
fi
