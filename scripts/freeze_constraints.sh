#!/usr/bin/env bash
# Rewrite constraints.txt from the packages installed in .venv (after `make install-dev`).
set -euo pipefail
cd "$(dirname "$0")/.."
head -3 constraints.txt > /tmp/constraints.head
{ cat /tmp/constraints.head; .venv/bin/python -m pip freeze | grep -v -iE '^(maeb|-e |#)' | sed 's/+cpu//'; } > constraints.txt
