#!/usr/bin/env bash
# Validate a skill folder.
#
# Usage: validate.sh <skill-dir>
#   Checks SKILL.md frontmatter (name equal to the folder, a description),
#   that scripts have a #! line and a header comment, and that files under
#   references/ or scripts/ named in the body exist. Prints one line per
#   problem; exits 1 when there is any, 0 with "ok" otherwise.
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: validate.sh <skill-dir>" >&2
  exit 2
fi
dir=${1%/}
md=$dir/SKILL.md
problems=0
problem() { echo "problem: $*"; problems=$((problems + 1)); }
if [ ! -f "$md" ]; then
  echo "problem: $md does not exist"
  exit 1
fi
if [ "$(head -n 1 "$md")" != "---" ]; then
  problem "SKILL.md must start with a '---' frontmatter line"
fi
front=$(awk 'NR==1 && $0=="---" {in_fm=1; next} in_fm && $0=="---" {exit} in_fm {print}' "$md")
name=$(printf '%s\n' "$front" | sed -n 's/^name:[[:space:]]*//p' | head -n 1 | tr -d "\"'")
desc=$(printf '%s\n' "$front" | sed -n 's/^description:[[:space:]]*//p' | head -n 1)
folder=$(basename "$dir")
[ -n "$name" ] || problem "frontmatter has no name:"
[ -z "$name" ] || [ "$name" = "$folder" ] || problem "name '$name' differs from the folder name '$folder'"
[ -n "${desc//[\"\' ]/}" ] || problem "frontmatter has no description: (say what it does and when to use it)"
if [ -d "$dir/scripts" ]; then
  for s in "$dir"/scripts/*; do
    [ -f "$s" ] || continue
    head -n 1 "$s" | grep -q '^#!' || problem "$(basename "$s") has no #! line"
    head -n 5 "$s" | sed -n '2,5p' | grep -Eq '^[[:space:]]*(#|//|"""|'"'''"')' || problem "$(basename "$s") has no header comment saying what it does and how to call it"
  done
fi
for ref in $(grep -oE '(references|scripts)/[A-Za-z0-9._/-]+' "$md" | sort -u); do
  [ -e "$dir/$ref" ] || problem "SKILL.md mentions $ref, which does not exist"
done
if [ "$problems" -gt 0 ]; then
  exit 1
fi
echo ok
