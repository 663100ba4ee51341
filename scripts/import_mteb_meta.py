"""Snapshot mteb's registry records of the catalog's models into models/mteb_model_meta.json.

  .venv-parity/bin/python scripts/import_mteb_meta.py          # write the file
  .venv-parity/bin/python scripts/import_mteb_meta.py --check  # exit 1 if the file differs

model_meta.json of a model that mteb knows is mteb's own record (ModelMeta.to_dict of the pinned
mteb release), so the results repository and `mteb submit-results` see the registry's values: its
modalities, similarity name, loader name. maeb's catalog keeps what maeb runs (audio and text
only); the record keeps what mteb says. Models mteb does not know have no record here: their
model_meta.json is converted from the catalog entry (maeb.encoders.ModelMeta.to_mteb)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "models" / "mteb_model_meta.json"


def record(meta) -> dict:
    """mteb's to_dict, made stable: sets as sorted lists, dates and enums as strings (mteb writes
    model_meta.json with json.dump(..., default=str))."""
    data = json.loads(json.dumps(meta.to_dict(), default=str))
    if isinstance(data.get("training_datasets"), list):
        data["training_datasets"] = sorted(data["training_datasets"])
    return data


def generate() -> str:
    import mteb

    sys.path.insert(0, str(ROOT))
    from maeb.spec.catalog import models

    known = {m.name: m for m in mteb.get_model_metas()}
    records = {name: record(known[name]) for name in sorted(models(), key=str.lower) if name in known}
    payload = {"mteb_version": mteb.__version__, "models": records}
    return json.dumps(payload, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"out of date (run scripts/import_mteb_meta.py in .venv-parity): {OUT.relative_to(ROOT)}")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(json.loads(text)['models'])} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
