#!/usr/bin/env bash
# The oracle environment of the end-to-end parity suite (`make parity`): .venv-parity.
#
# It reuses maeb's own .venv (torch 2.13.0 CPU, transformers, datasets, mteb 2.26.24, maeb itself)
# through a .pth file that calls site.addsitedir on .venv's site-packages (so .venv's own .pth files,
# maeb's editable install among them, work too), and adds only what mteb's audio path needs and maeb
# must not depend on:
#   - torchaudio 2.11.1, Python code only: `pip install --no-deps`, then its compiled extensions
#     (torchaudio/lib/*.so, which link a CUDA torch) are deleted. torchaudio loads its extension
#     lazily, so `import torchaudio` and `torchaudio.transforms.Resample` (mteb's AudioCollator)
#     work without them; anything that needs the extension (torchaudio.load, sox effects) fails,
#     and mteb's audio path does not use it.
#   - torchcodec 0.13.0 (a CPU build that works with torch 2.13.0), through which datasets 4+ decodes
#     Audio columns; it loads Debian's FFmpeg libraries, installed here when missing (as root).
#   - sentencepiece, which mteb's requirement check of the SeamlessM4T v2 meta (extra "seamless-m4t")
#     asks for before it loads the model (protobuf, the extra's other package, is in .venv already).
#   - the event-metric oracle (tests/parity/test_sed_eval.py): sed_eval 0.2.1, the scorer HEAR's
#     event tasks use, and dcase_util 0.2.20, which it imports, plus only what importing them needs:
#     six, future, validators, and setuptools 80.9 for pkg_resources (removed in setuptools 81).
#     dcase_util declares matplotlib, librosa, pydot-ng, python-magic, ...; sed_eval's metrics use
#     none of them, so they are left out.
# pip never resolves anything here (--no-deps), so no other torch arrives, and .venv stays free of
# torchaudio. Idempotent: a second run only checks (about a second).
set -euo pipefail
cd "$(dirname "$0")/.."

MAIN_VENV=${MAIN_VENV:-.venv}
PARITY_VENV=${PARITY_VENV:-.venv-parity}
TORCHAUDIO_VERSION=2.11.1
TORCHCODEC_VERSION=0.13.0
SENTENCEPIECE_VERSION=0.2.3

if [ ! -x "$MAIN_VENV/bin/python" ]; then
  echo "parity_env: $MAIN_VENV is missing; run 'make install-dev' first" >&2
  exit 2
fi
main_site=$("$MAIN_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
main_site=$(cd "$main_site" && pwd)

# FFmpeg's shared libraries for torchcodec (Debian's ffmpeg package pulls them in)
if ! ldconfig -p 2>/dev/null | grep -q 'libavcodec\.so'; then
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg) >/dev/null 2>&1
  else
    echo "parity_env: FFmpeg's libraries are missing; install Debian's ffmpeg (apt-get install ffmpeg) as root" >&2
    exit 2
  fi
fi

if [ ! -x "$PARITY_VENV/bin/python" ]; then
  # the same interpreter as .venv, so .venv's compiled packages load
  "$MAIN_VENV/bin/python" -m venv --without-pip "$PARITY_VENV"
fi
parity_site=$("$PARITY_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
pth="$parity_site/_maeb_main_venv.pth"
line="import site; site.addsitedir('$main_site')"
if [ ! -f "$pth" ] || [ "$(cat "$pth")" != "$line" ]; then
  echo "$line" >"$pth"
fi

pip_in_parity() {
  # .venv's pip, installing into .venv-parity's site-packages only, never resolving dependencies
  "$MAIN_VENV/bin/python" -m pip install -q --no-deps --no-compile --target "$parity_site" --upgrade "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
}

installed_version() {
  "$PARITY_VENV/bin/python" - "$1" "$parity_site" <<'EOF'
import sys
from importlib import metadata
name, where = sys.argv[1], sys.argv[2]
for dist in metadata.distributions(path=[where]):
    if dist.metadata["Name"].lower() == name:
        print(dist.version)
        break
EOF
}

if [ "$(installed_version torchaudio)" != "$TORCHAUDIO_VERSION" ]; then
  pip_in_parity "torchaudio==$TORCHAUDIO_VERSION"
fi
# the compiled extensions link CUDA libraries that are not here; the resampler is plain Python
rm -f "$parity_site"/torchaudio/lib/*.so
if [ "$(installed_version torchcodec)" != "$TORCHCODEC_VERSION" ]; then
  pip_in_parity "torchcodec==$TORCHCODEC_VERSION"
fi

if [ "$(installed_version sentencepiece)" != "$SENTENCEPIECE_VERSION" ]; then
  pip_in_parity "sentencepiece==$SENTENCEPIECE_VERSION"
fi

for pinned in sed_eval==0.2.1 dcase_util==0.2.20 six==1.17.0 future==1.0.0 validators==0.36.0 setuptools==80.9.0; do
  if [ "$(installed_version "${pinned%%==*}")" != "${pinned##*==}" ]; then
    pip_in_parity "$pinned"
  fi
done
# dcase_util's wheel also installs its own test suite as top-level packages named tests and tmp,
# which would shadow maeb's tests package in this environment
for stray in tests tmp; do
  if grep -q "^$stray/" "$parity_site"/dcase_util-*.dist-info/RECORD 2>/dev/null; then
    rm -rf "${parity_site:?}/$stray"
  fi
done

if "$MAIN_VENV/bin/python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torchaudio") is None)' 2>/dev/null; then
  echo "parity_env: $MAIN_VENV has torchaudio; maeb must not depend on it (pip uninstall torchaudio there)" >&2
  exit 2
fi

"$PARITY_VENV/bin/python" - <<'EOF'
import warnings

import mteb, torch, torchaudio, torchaudio.transforms, torchcodec, sentencepiece, maeb  # noqa: F401

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # dcase_util imports pkg_resources, which warns about itself
    import sed_eval, dcase_util  # noqa: F401
from torchcodec.decoders import AudioDecoder  # noqa: F401  (loads FFmpeg through torchcodec's core)

assert torch.__version__.startswith("2.13.0"), torch.__version__
assert mteb.__version__ == "2.26.24", mteb.__version__
assert torchaudio.transforms.Resample(8000, 16000)(torch.zeros(80)).shape == (160,)
assert sed_eval.__version__ == "0.2.1", sed_eval.__version__
print(f"parity_env: ready (mteb {mteb.__version__}, torch {torch.__version__}, torchaudio {torchaudio.__version__}, torchcodec {torchcodec.__version__}, sed_eval {sed_eval.__version__})")
EOF
