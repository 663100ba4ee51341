#!/usr/bin/env bash
# Pin, in constraints.txt, the packages installed in .venv that it does not pin yet (after installing
# a new family's package): each pin already there is kept as it is, so a pull request adds only its
# own lines (a plain `pip freeze` would also move every pin a newer pip resolved differently, and the
# MAEB-lite reference was computed with those). Says what it added, and which installed versions
# differ from a kept pin. `--rewrite` re-freezes every pin from .venv instead (a deliberate refresh:
# regenerate the reference afterwards, docs/reproducibility.md). PY names another python (the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
rewrite=0
[ "${1:-}" = "--rewrite" ] && rewrite=1
header="$(grep -m3 '^#' constraints.txt)"
# maeb itself, editable and local installs have no version to pin; +cpu: the local tag of torch's CPU wheel
frozen="$("$PY" -m pip freeze | grep -v -iE '^(maeb([=<> @]|$)|-e |#)' | grep -v ' @ ' | sed 's/+cpu//')"
if [ "$rewrite" = 1 ]; then
  { printf '%s\n' "$header"; printf '%s\n' "$frozen"; } > constraints.txt
  echo "freeze_constraints: every pin rewritten from $PY"
  exit 0
fi
# names compared as pip does: case, '-', '_' and '.' alike
normal() { tr 'A-Z_.' 'a-z--'; }
body="$(grep -v '^#' constraints.txt | grep -v '^$' || true)"
added=""
while IFS= read -r line; do
  [ -n "$line" ] || continue
  name="$(printf '%s' "${line%%==*}" | normal)"
  kept="$(printf '%s\n' "$body" | awk -v n="$name" '{ k = $0; sub(/[=<>!~ ;].*/, "", k); k = tolower(k); gsub(/[_.]/, "-", k); if (k == n) print }')"
  if [ -z "$kept" ]; then
    added="$added$line"$'\n'
    echo "freeze_constraints: added $line"
  elif [ "${kept#*==}" != "${line#*==}" ]; then
    echo "freeze_constraints: kept $kept (installed: $line)"
  fi
done <<< "$frozen"
if [ -z "$added" ]; then
  echo "freeze_constraints: nothing new to pin"
  exit 0
fi
{ printf '%s\n' "$header"; printf '%s\n%s' "$body" "$added" | grep -v '^$' | LC_ALL=C sort -f; } > constraints.txt
