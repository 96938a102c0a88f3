"""Record kblint's reports on some corpora, so that two versions of kblint can be compared byte
for byte (a change that should not change behaviour must leave every report as it was).

    .venv/bin/python bench/same_reports.py record OUT CORPUS... [--kblint CMD]
    .venv/bin/python bench/same_reports.py compare A B

`record` runs kblint on each CORPUS in every report format and with a few option variants
(`-j1`, `--statistics`, a warm run through the result cache), from the corpus's parent
directory, and writes each report, its standard error and its exit code into OUT. `compare`
lists the recorded runs that differ between two such directories and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

FORMATS = ("json", "sarif", "text", "github", "junit")


def variants(corpus: str, cache_dir: str) -> dict[str, list[str]]:
    """Run name → arguments after `kblint`."""
    name = os.path.basename(os.path.normpath(corpus))
    runs = {f"{name}.{fmt}": ["validate", name, "--format", fmt, "--no-cache"] for fmt in FORMATS}
    runs[f"{name}.j1.json"] = ["validate", name, "--format", "json", "--no-cache", "-j1"]
    runs[f"{name}.j2.json"] = ["validate", name, "--format", "json", "--no-cache", "-j2"]
    runs[f"{name}.stats.text"] = ["validate", name, "--statistics", "--no-cache"]
    runs[f"{name}.cold.json"] = ["validate", name, "--format", "json", "--cache-dir", cache_dir]
    runs[f"{name}.warm.json"] = ["validate", name, "--format", "json", "--cache-dir", cache_dir]
    runs[f"{name}.checkers.json"] = ["checkers", "--kb", name, "--format", "json"] if _is_kb(corpus) else []
    return {key: args for key, args in runs.items() if args}


def _is_kb(corpus: str) -> bool:
    return os.path.isfile(os.path.join(corpus, "kb.yaml"))


def record(out: Path, corpora: list[str], kblint: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "NO_COLOR", "KBLINT_LLM")}
    for corpus in map(os.path.abspath, corpora):
        with tempfile.TemporaryDirectory() as cache_dir:
            for key, args in variants(corpus, cache_dir).items():
                proc = subprocess.run(kblint + args, cwd=os.path.dirname(corpus), capture_output=True, env=env)
                (out / key).write_bytes(proc.stdout)
                (out / f"{key}.stderr").write_bytes(proc.stderr)
                (out / f"{key}.code").write_text(f"{proc.returncode}\n")
                print(f"{key}: exit {proc.returncode}, {len(proc.stdout)} bytes", file=sys.stderr)


def compare(a: Path, b: Path) -> int:
    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    different = [
        n for n in names if not (a / n).exists() or not (b / n).exists() or not filecmp.cmp(a / n, b / n, shallow=False)
    ]
    for name in different:
        print(f"differs: {name}")
    print(f"{len(names) - len(different)} of {len(names)} recorded files are the same")
    return 1 if different else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("corpora", nargs="+")
    rec.add_argument("--kblint", default=f"{shlex.quote(sys.executable)} -m kblint")
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("a", type=Path)
    cmp_.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    if args.command == "record":
        record(args.out, args.corpora, shlex.split(args.kblint))
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
