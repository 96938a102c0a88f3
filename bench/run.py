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
import hashlib
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
GENERATE_SCRIPT = HERE / "generate.py"
TARGET_RATIO = 1.5  # SPEC §13: cold <= 1.5x floor ...
TARGET_MIN_ENTRIES = 4000  # ... on corpora of 4,000 entries and more
WARM_TARGET_RATIO = 0.3  # warm (cache on, nothing changed) <= 0.3x floor ...
WARM_MIN_ENTRIES = 50000  # ... on corpora of 50,000 entries and more, and never slower than cold
PEAK_TARGET_MB = 300  # peak memory < 300 MB ...
PEAK_AT_ENTRIES = 100000  # ... on a 100,000-entry KB
NO_CACHE = "n/a (no result cache)"


@dataclass
class Measure:
    """One measured command."""

    name: str  # key in the JSON output
    label: str  # row label in the table
    argv: List[str]
    vs_floor: bool = True  # print its ratio to the floor
    prepare: Optional[Callable[[], None]] = None  # run (untimed) before each run, e.g. clear a cache
    times: List[float] = field(default_factory=list)
    peak_mb: Optional[float] = None


def measurements(corpus: str, kblint: List[str], python: str, cache_dir: Optional[str]) -> List[Measure]:
    validate = kblint + ["validate", corpus, "--format", "json", "--fail-on", "never"]
    ms = [
        Measure("floor", "floor (read + split + CSafeLoader)", [python, str(FLOOR_SCRIPT), corpus]),
        Measure("cold", "kblint validate (cold, --no-cache)", validate + ["--no-cache"]),
    ]
    if cache_dir is not None:
        ms.append(Measure("warm", "kblint validate (warm, --cache-dir)", validate + ["--cache-dir", cache_dir]))
    ms += [
        Measure("startup", "kblint --version", kblint + ["--version"], vs_floor=False),
        Measure("python", "python -c pass", [python, "-c", "pass"], vs_floor=False),
    ]
    return ms


def accepts_cache_dir(kblint: List[str]) -> bool:
    """Whether `kblint validate` has a --cache-dir option (its --help mentions it)."""
    proc = subprocess.run(
        kblint + ["validate", "--help"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )
    return proc.returncode == 0 and b"--cache-dir" in proc.stdout


def generate_corpus(entries: int, into: str, python: str) -> float:
    """Write a synthetic workspace of `entries` entries into `into` (bench/generate.py, seed 1)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [python, str(GENERATE_SCRIPT), "--entries", str(entries), "--seed", "1", into],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    if proc.returncode != 0:
        sys.exit(f"bench: generating the corpus failed:\n{proc.stderr.decode(errors='replace')}")
    print(proc.stdout.decode().strip(), file=sys.stderr)
    return time.perf_counter() - start


def files_in(directory: str) -> int:
    """Files below directory, not counting dotfiles (kblint's .gitignore in its cache dir)."""
    return sum(1 for _, _, names in os.walk(directory) for name in names if not name.startswith("."))


def run_once(argv: List[str], check: bool = False) -> tuple[float, bytes]:
    """Run argv; return (wall seconds, stdout). Exit on failure, showing stderr if check."""
    start = time.perf_counter()
    proc = subprocess.run(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE if check else subprocess.DEVNULL
    )
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
    ok = (
        subprocess.run(
            [exe, "-f", "%M", "-o", os.devnull, "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        ).returncode
        == 0
    )
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
        subprocess.run(
            [time_exe, "-f", "%M", "-o", out.name] + argv,
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return int(out.read().split()[-1]) / 1024


def summarize(m: Measure) -> dict:
    return {
        "label": m.label,
        "median_s": statistics.median(m.times),
        "min_s": min(m.times),
        "peak_mb": m.peak_mb,
        "runs": len(m.times),
        "command": shlex.join(m.argv),
    }


def verdict(value: float, ok: bool, binding: bool, min_entries: int) -> str:
    if binding:
        return "met" if ok else "MISSED"
    return f"{'would be met' if ok else 'would be missed'}; not binding below {min_entries:,} entries"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="kblint vs the SPEC §13 floor: cold and warm, alternating runs.")
    ap.add_argument("corpus", nargs="?", help="directory to lint (every KB found under it)")
    ap.add_argument(
        "--generate",
        type=int,
        metavar="N",
        default=None,
        help="benchmark a synthetic workspace of N entries, generated into a temporary "
        "directory by bench/generate.py (seed 1), instead of CORPUS",
    )
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each command (default 5)")
    ap.add_argument("--kblint", default=None, help="command that runs kblint (default: '<this python> -m kblint')")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if (args.corpus is None) == (args.generate is None):
        ap.error("give a CORPUS directory or --generate N (not both)")
    if args.generate is not None and args.generate < 1:
        ap.error("--generate needs at least 1 entry")
    if args.corpus is not None and not Path(args.corpus).is_dir():
        ap.error(f"not a directory: {args.corpus}")

    # The warm-up runs write the .pyc files, as a first run on a user's machine does; an environment
    # that turns that off would have every timed run compile kblint's modules again.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    python = sys.executable
    kblint = shlex.split(args.kblint) if args.kblint else [python, "-m", "kblint"]
    with tempfile.TemporaryDirectory(prefix="kblint-bench-") as tmp:
        generated = None
        if args.generate is not None:
            corpus = os.path.join(tmp, "corpus")
            seconds = generate_corpus(args.generate, corpus, python)
            generated = {"entries": args.generate, "seed": 1, "seconds": round(seconds, 2)}
        else:
            corpus = str(Path(args.corpus).resolve())
        cache_dir = os.path.join(tmp, "cache") if accepts_cache_dir(kblint) else None
        if cache_dir is not None:
            os.makedirs(cache_dir)
        report = bench(corpus, kblint, python, cache_dir, args.runs)
        report["generated"] = generated
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    return 0


def warm_up(ms: List[Measure]) -> tuple[dict, dict, dict]:
    """One untimed run of each, checked for success: the floor's report (the file count), kblint
    cold's summary (the entry count) and the digest of its report. For kblint warm this run fills
    the cache (primes it)."""
    floor_report: dict = {}
    kblint_summary: dict = {}
    digests: dict = {}
    for m in ms:
        if m.prepare:
            m.prepare()
        _, out = run_once(m.argv, check=True)
        if m.name == "floor":
            floor_report = json.loads(out)
        elif m.name == "cold":
            kblint_summary = json.loads(out).get("summary", {})
            digests["cold"] = hashlib.sha256(out).hexdigest()
    return floor_report, kblint_summary, digests


def bench(corpus: str, kblint: List[str], python: str, cache_dir: Optional[str], runs: int) -> dict:
    ms = measurements(corpus, kblint, python, cache_dir)
    floor_report, kblint_summary, digests = warm_up(ms)
    cache_files = files_in(cache_dir) if cache_dir is not None else None

    for _ in range(runs):
        for m in ms:
            if m.prepare:
                m.prepare()
            elapsed, out = run_once(m.argv)
            m.times.append(elapsed)
            if m.name == "warm":
                digests["warm"] = hashlib.sha256(out).hexdigest()  # the report of a primed run

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

    entries = kblint_summary.get("files", floor_report["files"])
    return assemble(corpus, runs, results, floor_report, entries, digests, cache_files)


def assemble(
    corpus: str, runs: int, results: dict, floor_report: dict, entries: int, digests: dict, cache_files: Optional[int]
) -> dict:
    """The report of a bench run, as --json prints it and print_table reads it."""
    warm = results.get("warm")
    report = {
        "corpus": corpus,
        "md_files": floor_report["files"],
        "entries": entries,
        "frontmatters_parsed": floor_report["parsed"],
        "runs": runs,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "measurements": results,
        "ratio_cold_to_floor": results["cold"]["ratio_to_floor"],
        "ratio_warm_to_floor": warm["ratio_to_floor"] if warm else None,
        "warm_le_cold": (warm["median_s"] <= results["cold"]["median_s"]) if warm else None,
        "warm_report_equals_cold": (digests.get("warm") == digests["cold"]) if warm else None,
        "warm_cache_files": cache_files,
        "warm_status": None if warm else NO_CACHE,
        "startup_s": results["startup"]["median_s"],
        "peak_memory_mb": results["cold"]["peak_mb"],
        "peak_memory_method": "GNU time %M (max RSS), one untimed run",
        "target": {
            "ratio": TARGET_RATIO,
            "min_entries": TARGET_MIN_ENTRIES,
            "warm_ratio": WARM_TARGET_RATIO,
            "warm_min_entries": WARM_MIN_ENTRIES,
            "peak_mb": PEAK_TARGET_MB,
            "peak_at_entries": PEAK_AT_ENTRIES,
        },
    }
    return report


def print_table(report: dict) -> None:
    entries = report["entries"]
    gen = report.get("generated")
    print(
        f"corpus   {report['corpus']}"
        + (f"  (generated: {gen['entries']:,} entries, seed {gen['seed']}, {gen['seconds']:.1f} s)" if gen else "")
    )
    print(
        f"files    {report['md_files']} .md files ({report['frontmatters_parsed']} frontmatters parsed by the "
        f"floor); kblint: {entries} entry files"
    )
    print(
        f"runs     {report['runs']} of each, alternating, after 1 warm-up each; "
        f"Python {report['python']}, {report['cpus']} CPUs"
    )
    print()
    print_measurements(report)
    print()
    print_verdicts(report)


def print_measurements(report: dict) -> None:
    """One row per measured command: median, min, ratio to the floor, peak memory."""
    results = report["measurements"]
    rows = [(r["label"], r, name) for name, r in results.items()]
    if "warm" not in results:  # say why there is no warm row
        at = [name for _, _, name in rows].index("cold") + 1
        rows.insert(at, ("kblint validate (warm, --cache-dir)", None, "warm"))
    width = max(len(label) for label, _, _ in rows)
    print(f"{'measurement':<{width}}  {'median s':>9}  {'min s':>9}  {'x floor':>8}  {'peak MB':>8}")
    for label, r, name in rows:
        if r is None:
            print(f"{label:<{width}}  {report['warm_status']}")
            continue
        ratio = f"{r['ratio_to_floor']:.2f}" if "ratio_to_floor" in r else ("1.00" if name == "floor" else "-")
        peak = f"{r['peak_mb']:.1f}" if r["peak_mb"] is not None else "-"
        print(f"{label:<{width}}  {r['median_s']:>9.3f}  {r['min_s']:>9.3f}  {ratio:>8}  {peak:>8}")


def print_verdicts(report: dict) -> None:
    """Each target of SPEC §13 against what was measured."""
    results = report["measurements"]
    entries = report["entries"]
    ratio = report["ratio_cold_to_floor"]
    print(
        f"cold / floor  {ratio:.2f}x   target <= {TARGET_RATIO}x on >= {TARGET_MIN_ENTRIES:,} entries: "
        f"{verdict(ratio, ratio <= TARGET_RATIO, entries >= TARGET_MIN_ENTRIES, TARGET_MIN_ENTRIES)}"
    )
    if report["ratio_warm_to_floor"] is None:
        print(
            f"warm / floor  {report['warm_status']}   (kblint validate does not accept --cache-dir; "
            f"target <= {WARM_TARGET_RATIO}x on >= {WARM_MIN_ENTRIES:,} entries and never slower than cold)"
        )
    else:
        w = report["ratio_warm_to_floor"]
        print(
            f"warm / floor  {w:.2f}x   target <= {WARM_TARGET_RATIO}x on >= {WARM_MIN_ENTRIES:,} entries: "
            f"{verdict(w, w <= WARM_TARGET_RATIO, entries >= WARM_MIN_ENTRIES, WARM_MIN_ENTRIES)}"
        )
        cold_s, warm_s = results["cold"]["median_s"], results["warm"]["median_s"]
        print(
            f"warm <= cold  {'yes' if report['warm_le_cold'] else 'NO'}   "
            f"(warm {warm_s:.3f} s vs cold {cold_s:.3f} s, medians; target: never slower than cold)"
        )
        same = report["warm_report_equals_cold"]
        note = "" if report["warm_cache_files"] else "; the cache dir stayed empty after priming: nothing was cached"
        print(
            f"warm report   {'identical to' if same else 'DIFFERS from'} the cold report "
            f"({report['warm_cache_files']} files in the cache dir{note})"
        )
    print(f"start-up      {report['startup_s']:.3f} s   (kblint --version, median)")
    peak = report["peak_memory_mb"]
    if peak is None:
        print("peak memory   n/a (needs GNU time at /usr/bin/time)")
    else:
        warm_peak = results.get("warm", {}).get("peak_mb")
        extra = f", warm {warm_peak:.1f} MB" if warm_peak is not None else ""
        print(
            f"peak memory   {peak:.1f} MB   (kblint validate cold, max RSS from /usr/bin/time{extra}); "
            f"target < {PEAK_TARGET_MB} MB at {PEAK_AT_ENTRIES:,} entries: "
            f"{verdict(peak, peak < PEAK_TARGET_MB, entries >= PEAK_AT_ENTRIES, PEAK_AT_ENTRIES)}"
        )


if __name__ == "__main__":
    sys.exit(main())
