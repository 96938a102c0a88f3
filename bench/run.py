"""Benchmark runner for the performance contract of SPEC §13.

    .venv/bin/python bench/run.py CORPUS [--runs N] [--kblint CMD] [--json]

Every measured command runs as its own subprocess. After one untimed warm-up of each (to warm the
OS file cache and the .pyc files), the commands run in alternation, round after round
(floor, kblint cold, ..., floor, kblint cold, ...), so that drift of the machine hits all of them
alike. Each run is timed by wall clock. Peak memory comes from one extra, untimed run of each
command under GNU time (`/usr/bin/time -f %M`, max resident set size); see peak_mb().

To measure one more command, add one line to the list in `measurements()`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional

HERE = Path(__file__).resolve().parent
FLOOR_SCRIPT = HERE / "floor.py"
TARGET_RATIO = 1.5          # SPEC §13: cold <= 1.5x floor ...
TARGET_MIN_ENTRIES = 4000   # ... on corpora of 4,000 entries and more


@dataclass
class Measure:
    """One measured command."""

    name: str                     # key in the JSON output
    label: str                    # row label in the table
    argv: List[str]
    vs_floor: bool = True         # print its ratio to the floor
    prepare: Optional[Callable[[], None]] = None   # run (untimed) before each run, e.g. clear a cache
    times: List[float] = field(default_factory=list)
    peak_mb: Optional[float] = None


def measurements(corpus: str, kblint: List[str], python: str) -> List[Measure]:
    validate = kblint + ["validate", corpus, "--format", "json", "--fail-on", "never"]
    return [
        Measure("floor", "floor (read + split + CSafeLoader)", [python, str(FLOOR_SCRIPT), corpus]),
        Measure("cold", "kblint validate (cold)", validate),
        Measure("startup", "kblint --version", kblint + ["--version"], vs_floor=False),
        Measure("python", "python -c pass", [python, "-c", "pass"], vs_floor=False),
    ]


def run_once(argv: List[str], check: bool = False) -> tuple[float, bytes]:
    """Run argv; return (wall seconds, stdout). Exit on failure, showing stderr if check."""
    start = time.perf_counter()
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE if check else subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace") if check else "(rerun it to see its stderr)"
        sys.exit(f"bench: exit {proc.returncode} from: {shlex.join(argv)}\n{err}")
    return elapsed, proc.stdout


def gnu_time() -> Optional[str]:
    """/usr/bin/time if it is GNU time (accepts -f), else None."""
    exe = "/usr/bin/time"
    if not os.path.exists(exe):
        return None
    ok = subprocess.run([exe, "-f", "%M", "-o", os.devnull, "true"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    return exe if ok else None


def peak_mb(argv: List[str], time_exe: Optional[str]) -> Optional[float]:
    """Peak RSS of one run of argv, in MB, from GNU time's %M (max resident set, KB).

    Not measured from this script's own wait4/RUSAGE_CHILDREN: on Linux a child's ru_maxrss
    starts from the RSS of the process that forked it (here a Python interpreter), so small
    commands would all read as this script's size. GNU time forks from a ~2 MB process.
    """
    if time_exe is None:
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        subprocess.run([time_exe, "-f", "%M", "-o", out.name] + argv, check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return int(out.read().split()[-1]) / 1024


def summarize(m: Measure) -> dict:
    return {
        "median_s": statistics.median(m.times),
        "min_s": min(m.times),
        "peak_mb": m.peak_mb,
        "runs": len(m.times),
        "command": shlex.join(m.argv),
    }


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="kblint vs the SPEC §13 floor, cold, alternating runs.")
    ap.add_argument("corpus", help="directory to lint (every KB found under it)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each command (default 5)")
    ap.add_argument("--kblint", default=None,
                    help="command that runs kblint (default: '<this python> -m kblint')")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    corpus = str(Path(args.corpus).resolve())
    if not Path(corpus).is_dir():
        ap.error(f"not a directory: {args.corpus}")

    python = sys.executable
    kblint = shlex.split(args.kblint) if args.kblint else [python, "-m", "kblint"]
    ms = measurements(corpus, kblint, python)

    # Warm-up: one untimed run of each, checked for success; the floor reports the file count.
    floor_report = None
    for m in ms:
        if m.prepare:
            m.prepare()
        _, out = run_once(m.argv, check=True)
        if m.name == "floor":
            floor_report = json.loads(out)

    for _ in range(args.runs):
        for m in ms:
            if m.prepare:
                m.prepare()
            m.times.append(run_once(m.argv)[0])

    # Peak memory: one more, untimed, run of each under GNU time.
    time_exe = gnu_time()
    for m in ms:
        if m.prepare:
            m.prepare()
        m.peak_mb = peak_mb(m.argv, time_exe)

    results = {m.name: summarize(m) for m in ms}
    floor_median = results["floor"]["median_s"]
    for m in ms:
        if m.vs_floor and m.name != "floor":
            results[m.name]["ratio_to_floor"] = results[m.name]["median_s"] / floor_median

    md_files = floor_report["files"]
    report = {
        "corpus": corpus,
        "md_files": md_files,
        "frontmatters_parsed": floor_report["parsed"],
        "runs": args.runs,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "measurements": results,
        "ratio_cold_to_floor": results["cold"]["ratio_to_floor"],
        "startup_s": results["startup"]["median_s"],
        "peak_memory_mb": results["cold"]["peak_mb"],
        "peak_memory_method": "GNU time %M (max RSS), one untimed run",
        "target": {"ratio": TARGET_RATIO, "min_entries": TARGET_MIN_ENTRIES},
    }

    if args.json:
        print(json.dumps(report, indent=2))
        return 0

    print(f"corpus   {corpus}")
    print(f"files    {md_files} .md files ({floor_report['parsed']} frontmatters parsed by the floor)")
    print(f"runs     {args.runs} of each, alternating, after 1 warm-up each; "
          f"Python {report['python']}, {report['cpus']} CPUs")
    print()
    width = max(len(m.label) for m in ms)
    print(f"{'measurement':<{width}}  {'median s':>9}  {'min s':>9}  {'x floor':>8}  {'peak MB':>8}")
    for m in ms:
        r = results[m.name]
        ratio = f"{r['ratio_to_floor']:.2f}" if "ratio_to_floor" in r else ("1.00" if m.name == "floor" else "-")
        peak = f"{r['peak_mb']:.1f}" if r["peak_mb"] is not None else "-"
        print(f"{m.label:<{width}}  {r['median_s']:>9.3f}  {r['min_s']:>9.3f}  {ratio:>8}  {peak:>8}")
    print()
    ratio = report["ratio_cold_to_floor"]
    note = "" if md_files >= TARGET_MIN_ENTRIES else \
        f"; not binding below {TARGET_MIN_ENTRIES:,} files, where start-up and imports weigh more"
    print(f"cold / floor  {ratio:.2f}x   (target <= {TARGET_RATIO}x on >= {TARGET_MIN_ENTRIES:,} entries{note})")
    print(f"start-up      {report['startup_s']:.3f} s   (kblint --version, median)")
    peak = report["peak_memory_mb"]
    print(f"peak memory   {peak:.1f} MB   (kblint validate, max RSS from /usr/bin/time)" if peak is not None
          else "peak memory   n/a (needs GNU time at /usr/bin/time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
