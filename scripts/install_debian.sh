#!/usr/bin/env bash
# Debian packages MAEB-lite is built from (speech and music synthesizers), Chromium for the
# leaderboard page test, pdflatex and booktabs for the `leaderboard --format tex` test. Installs only
# what is missing; needs root or sudo.
set -euo pipefail
need=()
for pair in espeak-ng:espeak-ng flite:flite festival:festival fluidsynth:fluidsynth timidity:timidity sox:sox chromium:chromium pdflatex:texlive-latex-base; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
for pkg in festvox-kallpc16k festvox-kdlpc16k fluid-soundfont-gm freepats texlive-latex-recommended; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing Debian packages: ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
