#!/usr/bin/env bash
# Count pages of a PDF file.
# Usage: count.sh <file.pdf>
set -eu
for a in "$@"; do
  printf 'arg=%s\n' "$a"
done
pwd
