"""What duplicate detection costs and what it finds, on a workspace with planted duplicate pairs
(`generate.py --duplicates FRACTION`, whose manifest.json lists them).

    .venv/bin/python bench/duplicates.py WORKSPACE [--runs N] [--json]

It runs `python -m kblint validate WORKSPACE --format json --fail-on never --no-cache` (a) as it
comes, duplicate detection on, and (b) with a configuration file of its own that turns it off
(`[duplicates]` `enabled = false`, through `--config`): one untimed warm-up of each, then N rounds
of a and b in turn, so that drift of the machine hits both alike. It prints the median wall time of
each, what detection adds (a/b - 1), the peak memory of each (one more, untimed, run under GNU
time, as bench/run.py measures it), and from the issues of (a): the recall of the planted pairs,
kind by kind (a pair is found when a possible_duplicate issue links its two paths, either way
round), the near misses reported (they must not be), and the possible_duplicate issues that match
no planted pair.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import PEAK_AT_ENTRIES, PEAK_TARGET_MB, gnu_time, peak_mb, run_once, verdict  # noqa: E402 - bench/ is not a package

RULE = "possible_duplicate"
MANIFEST = "manifest.json"
MISSES = "near_miss"  # the planted kind that must not be reported
TARGET_RECALL = 0.95
TARGET_ADDED = 0.20
OFF_CONFIG = "[duplicates]\nenabled = false\n"
EXAMPLES = 20  # unmatched issues listed in the report (all are counted)


def planted_pairs(workspace: Path) -> list[dict]:
    """The planted pairs of WORKSPACE's manifest ({kind, path, original}, paths relative to it)."""
    path = workspace / MANIFEST
    if not path.is_file():
        sys.exit(f"bench: {path} not found: generate the workspace with bench/generate.py --duplicates FRACTION")
    pairs = json.loads(path.read_text(encoding="utf-8")).get("duplicates")
    if not pairs:
        sys.exit(f"bench: {path} lists no planted duplicates: generate the workspace with --duplicates FRACTION")
    return pairs


def pair_key(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def relative(shown: str | None, workspace: Path, cwd: Path) -> str | None:
    """A path as kblint shows it (relative to the directory it ran in) as a path relative to
    WORKSPACE, as the manifest gives it."""
    if shown is None:
        return None
    return Path(os.path.relpath(cwd / shown, workspace)).as_posix()


def score(issues: Iterable[dict], planted: list[dict], workspace: Path, cwd: Path) -> dict[str, Any]:
    """Recall of the planted pairs by kind, near misses reported, and the issues of RULE that match
    no planted pair."""
    reported: dict[frozenset[str], dict] = {}
    for issue in issues:
        if issue.get("rule") == RULE:
            a, b = relative(issue.get("path"), workspace, cwd), relative(issue.get("related_path"), workspace, cwd)
            reported[pair_key(str(a), str(b))] = {
                "path": a,
                "related_path": b,
                "similarity": issue.get("similarity"),
                "message": issue.get("message"),
            }
    kinds: dict[str, dict[str, Any]] = {}
    for pair in planted:
        tally = kinds.setdefault(pair["kind"], {"planted": 0, "found": 0})
        tally["planted"] += 1
        tally["found"] += pair_key(pair["path"], pair["original"]) in reported
    for tally in kinds.values():
        tally["recall"] = tally["found"] / tally["planted"]
    wanted = [t for kind, t in kinds.items() if kind != MISSES]
    known = {pair_key(p["path"], p["original"]) for p in planted}
    unmatched = [issue for key, issue in sorted(reported.items(), key=_order) if key not in known]
    return {
        "recall": sum(t["found"] for t in wanted) / max(1, sum(t["planted"] for t in wanted)),
        "kinds": kinds,
        "near_miss_reported": kinds.get(MISSES, {}).get("found", 0),
        "reported_pairs": len(reported),
        "unmatched": len(unmatched),
        "unmatched_examples": unmatched[:EXAMPLES],
    }


def _order(item: tuple[frozenset[str], dict]) -> tuple[str, str]:
    issue = item[1]
    return str(issue["path"]), str(issue["related_path"])


def timed_rounds(on: list[str], off: list[str], runs: int) -> tuple[list[float], list[float], bytes]:
    """One untimed, checked warm-up of each, then RUNS rounds of ON and OFF in turn: their wall
    times, and the report of ON's warm-up."""
    _, report = run_once(on, check=True)
    run_once(off, check=True)
    on_times, off_times = [], []
    for _ in range(runs):
        on_times.append(run_once(on)[0])
        off_times.append(run_once(off)[0])
    return on_times, off_times, report


def timing(times: list[float]) -> dict[str, Any]:
    return {"median_s": statistics.median(times), "min_s": min(times), "times_s": times}


def measure(workspace: Path, runs: int) -> dict[str, Any]:
    planted = planted_pairs(workspace)
    validate = [sys.executable, "-m", "kblint", "validate", str(workspace)]
    validate += ["--format", "json", "--fail-on", "never", "--no-cache"]
    with tempfile.TemporaryDirectory(prefix="kblint-dup-") as tmp:
        config = Path(tmp, "kblint.toml")
        config.write_text(OFF_CONFIG, encoding="utf-8")
        off = validate + ["--config", str(config)]
        on_times, off_times, report = timed_rounds(validate, off, runs)
        time_exe = gnu_time()
        peaks = {"on": peak_mb(validate, time_exe), "off": peak_mb(off, time_exe)}
    doc = json.loads(report)
    on, off_t = timing(on_times), timing(off_times)
    return {
        "workspace": str(workspace),
        "entries": doc.get("summary", {}).get("files"),
        "runs": runs,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "seconds": {"on": on, "off": off_t},
        "added_cost": on["median_s"] / off_t["median_s"] - 1,
        "peak_mb": peaks,
        "peak_memory_method": "GNU time %M (max RSS), one untimed run of each",
        **score(doc.get("issues", []), planted, workspace, Path.cwd()),
        "target": {
            "recall": TARGET_RECALL,
            "near_miss_reported": 0,
            "added_cost": TARGET_ADDED,
            "peak_mb": PEAK_TARGET_MB,
        },
    }


def print_table(result: dict[str, Any]) -> None:
    on, off = result["seconds"]["on"], result["seconds"]["off"]
    print(f"workspace  {result['workspace']}  ({result['entries']} entry files)")
    print(f"runs       {result['runs']} of each, alternating, after 1 warm-up each; Python {result['python']}")
    print()
    print(f"{'kind':<12}{'planted':>9}{'found':>8}{'recall':>9}")
    for kind, tally in sorted(result["kinds"].items()):
        note = "  (must not be found)" if kind == MISSES else ""
        print(f"{kind:<12}{tally['planted']:>9}{tally['found']:>8}{tally['recall']:>9.3f}{note}")
    print()
    recall, near, added = result["recall"], result["near_miss_reported"], result["added_cost"]
    print(
        f"recall        {recall:.3f}   target >= {TARGET_RECALL} (exact, few_words, retitled): {_met(recall >= TARGET_RECALL)}"
    )
    print(f"near misses   {near} reported   target 0: {_met(near == 0)}")
    print(
        f"added cost    {added:+.1%}   (on {on['median_s']:.3f} s, off {off['median_s']:.3f} s, medians) "
        f"target <= {TARGET_ADDED:.0%}: {_met(added <= TARGET_ADDED)}"
    )
    print_peak(result)
    print_unmatched(result)


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def print_peak(result: dict[str, Any]) -> None:
    peak, off = result["peak_mb"]["on"], result["peak_mb"]["off"]
    if peak is None:
        print("peak memory   n/a (needs GNU time at /usr/bin/time)")
        return
    entries = result["entries"] or 0
    binding = entries >= PEAK_AT_ENTRIES
    print(
        f"peak memory   {peak:.1f} MB   (detection off: {off:.1f} MB) target < {PEAK_TARGET_MB} MB at "
        f"{PEAK_AT_ENTRIES:,} entries: {verdict(peak, peak < PEAK_TARGET_MB, binding, PEAK_AT_ENTRIES)}"
    )


def print_unmatched(result: dict[str, Any]) -> None:
    count = result["unmatched"]
    print(f"unmatched     {count} reported pairs match no planted pair (generator coincidences or false positives)")
    for issue in result["unmatched_examples"]:
        print(f"  {issue['path']} ~ {issue['related_path']}: {issue['message']}")
    if count > len(result["unmatched_examples"]):
        print(f"  ... and {count - len(result['unmatched_examples'])} more (--json lists {EXAMPLES})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The cost and the recall of kblint's duplicate detection.")
    ap.add_argument("workspace", help="a workspace written by bench/generate.py --duplicates FRACTION")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each (default 3)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    workspace = Path(args.workspace).resolve()
    if not workspace.is_dir():
        ap.error(f"not a directory: {args.workspace}")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as bench/run.py: the warm-up writes the .pyc files
    result = measure(workspace, args.runs)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
