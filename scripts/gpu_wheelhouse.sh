#!/bin/sh
# The wheels scripts/bench_gpu.py needs on the GPU machine, which reaches no package registry:
# maeb's audio decoding (soundfile with cffi and pycparser, soxr), and in transformers/ a
# transformers new enough for maeb's wrappers (from_pretrained(dtype=...) came in 4.56) with the
# hub and tokenizer packages it pins, installed there only if the machine's own is older. All for
# CPython 3.12 on manylinux x86_64, without dependencies (the machine has numpy, torch and the rest).
# About 18 MB; the folder is git-ignored and travels with the run tool's carry.
#
#   sh scripts/gpu_wheelhouse.sh [DEST]        # default .wheelhouse
set -eu
dest=${1:-.wheelhouse}
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || py=python3
fetch() {
    "$py" -m pip download -q --no-deps --only-binary=:all: --implementation cp --python-version 3.12 \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$@"
}
mkdir -p "$dest/transformers"
fetch "$dest" soundfile==0.14.0 soxr==1.1.0 cffi==2.1.1 pycparser==3.12
fetch "$dest/transformers" transformers==4.57.3 huggingface-hub==0.36.0 tokenizers==0.22.1 safetensors==0.7.0
du -sh "$dest"
ls "$dest" "$dest/transformers"
