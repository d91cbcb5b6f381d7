#!/usr/bin/env bash
# Scaffold a new skill folder.
#
# Usage: scaffold.sh <skills-dir> <name> "<description>"
#   Creates <skills-dir>/<name>/SKILL.md with frontmatter and section headings,
#   plus empty scripts/ and references/ folders. Refuses to overwrite an existing
#   skill. <name>: lower-case letters, digits and hyphens.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: scaffold.sh <skills-dir> <name> \"<description>\"" >&2
  exit 2
fi
dir=$1 name=$2 desc=$3
if ! [[ $name =~ ^[a-z0-9][a-z0-9-]{0,63}$ ]]; then
  echo "scaffold: invalid name '$name': use lower-case letters, digits and hyphens" >&2
  exit 2
fi
if [ -z "${desc// /}" ]; then
  echo "scaffold: the description is empty: say what the skill does and when to use it" >&2
  exit 2
fi
target=$dir/$name
if [ -e "$target/SKILL.md" ]; then
  echo "scaffold: $target/SKILL.md exists; improve it instead of replacing it" >&2
  exit 1
fi
mkdir -p "$target/scripts" "$target/references"
desc=${desc//\"/\\\"}
cat > "$target/SKILL.md" <<MD
---
name: $name
description: "$desc"
version: "1.0"
---
# ${name//-/ }

## When to use

<the situations and requests this skill is for>

## Steps

1. <first command, runnable as written>
2. <next command>

## Checks and common failures

- <what to verify, and the usual fix>
MD
echo "created $target/SKILL.md"
