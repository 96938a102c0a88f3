"""parallel.spread: every chunk done exactly once, by a worker or by this process; failures stop the run."""

from __future__ import annotations

import os

import pytest

from kblint.parallel import WorkerFailed, spread


def test_every_chunk_is_done_once_here_or_in_a_worker():
    import time

    here_pid = os.getpid()

    def square(i):
        time.sleep(0.005)
        return i * i, os.getpid()

    got = list(spread(40, 2, square, square))
    assert sorted(n for n, _, _ in got) == list(range(40))
    assert any(remote for _, _, remote in got) and not all(remote for _, _, remote in got)
    assert all(result[0] == n * n for n, result, _ in got)
    assert all((result[1] == here_pid) == (not remote) for _, result, remote in got)


def test_a_failing_worker_stops_the_run():
    def there(i):
        raise ValueError(f"chunk {i} is bad")

    with pytest.raises(WorkerFailed, match="chunk"):
        list(spread(50, 1, lambda i: __import__("time").sleep(0.01), there))


def test_a_worker_that_dies_stops_the_run_and_leaves_no_process_behind():
    import time

    def there(i):
        os._exit(3)  # as if killed: no result, no word

    with pytest.raises(WorkerFailed, match="ended without finishing"):
        list(spread(50, 1, lambda i: time.sleep(0.01), there))
    with pytest.raises(ChildProcessError):  # every child was waited for
        os.waitpid(-1, os.WNOHANG)


def test_a_run_cut_short_stops_its_workers():
    import time

    def slow(i):
        time.sleep(0.05)
        return i

    chunks = spread(200, 2, slow, slow)
    next(chunks)
    began = time.monotonic()
    chunks.close()  # the consumer stops early (an error elsewhere, a closed pipe)
    assert time.monotonic() - began < 2  # the workers' 4 s of chunks were not waited for
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_what_a_worker_prints_is_not_lost(tmp_path):
    import subprocess
    import sys

    script = ("import os, time\n"
              "from kblint.parallel import spread\n"
              "def there(i):\n"
              "    print('from a worker', os.getpid())\n"
              "    return i\n"
              "print('before')\n"
              "list(spread(20, 1, lambda i: time.sleep(0.01), there))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    with open(tmp_path / "out", "w") as out:  # a file: stdout is block-buffered
        subprocess.run([sys.executable, "-c", script], stdout=out, env=env, check=True, timeout=60)
    lines = (tmp_path / "out").read_text().splitlines()
    assert lines.count("before") == 1  # written once, not again by the worker
    assert any(line.startswith("from a worker") for line in lines)


def test_spread_under_a_parent_that_ignores_its_children():
    import signal
    import time

    def square(i):
        time.sleep(0.002)
        return i * i

    def dies(i):
        os._exit(3)

    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        got = list(spread(30, 2, square, square))
        with pytest.raises(WorkerFailed, match="ended without finishing"):
            list(spread(30, 1, square, dies))
    finally:
        signal.signal(signal.SIGCHLD, before)
    assert sorted(n for n, _, _ in got) == list(range(30)) and all(r == n * n for n, r, _ in got)


def _numbers(items, first):
    for start in range(0, len(items), 7):
        yield ("" if first and start == 0 else ",") + ",".join(str(i) for i in items[start:start + 7])


def test_halves_are_written_in_order(monkeypatch, tmp_path):
    import kblint.parallel as parallel

    here = os.getpid()
    elsewhere = tmp_path / "rendered elsewhere"

    def render(items, first):
        if os.getpid() != here:
            elsewhere.write_text(f"{items[0]}..{items[-1]}")
        yield from _numbers(items, first)

    items = list(range(1001))
    serial: list[str] = []
    parallel.write_in_halves(items, render, serial.append)  # below the threshold: one process
    assert not elsewhere.exists()
    monkeypatch.setattr(parallel, "_HALVES_MIN", 10)
    halves: list[str] = []
    parallel.write_in_halves(items, render, halves.append)
    assert "".join(halves) == "".join(serial) == ",".join(map(str, items))
    assert elsewhere.read_text() == "500..1000"


def test_a_failing_half_is_done_again_here(monkeypatch):
    import kblint.parallel as parallel

    monkeypatch.setattr(parallel, "_HALVES_MIN", 10)
    here = os.getpid()

    def render(items, first):
        if os.getpid() != here:
            raise MemoryError("the child ran out")
        yield from _numbers(items, first)

    out: list[str] = []
    parallel.write_in_halves(list(range(100)), render, out.append)
    assert "".join(out) == ",".join(map(str, range(100)))


def test_a_large_json_report_is_the_same_rendered_in_halves(monkeypatch):
    import json

    import kblint.parallel as parallel
    from kblint.issue import Issue, KBReport, Report
    from kblint.report import json as json_report

    issues = [Issue(rule="broken_link", severity="warning", tier="structure", message=f"Link {n} ☃",
                    kb_name="k", entry_id=f"e{n}", path=f"/kb/e{n // 3}.md", line=n % 3 + 1, column=1,
                    discriminator=f"k:{n}") for n in range(2500)]
    report = Report(kbs=[KBReport(name="k", root="/kb")], issues=issues)
    whole = json_report.render(report)
    monkeypatch.setattr(parallel, "_HALVES_MIN", 100)
    assert json_report.render(report) == whole
    assert [i["entry_id"] for i in json.loads(whole)["issues"]] == [f"e{n}" for n in range(2500)]


def test_a_failing_writer_stops_the_other_half_too(monkeypatch, tmp_path):
    import time

    import kblint.parallel as parallel

    monkeypatch.setattr(parallel, "_HALVES_MIN", 10)
    here = os.getpid()
    child = tmp_path / "child"

    def render(items, first):
        if os.getpid() != here:
            child.write_text(str(os.getpid()))
            time.sleep(60)  # still rendering when the parent gives up
        yield from _numbers(items, first)

    def write(text):
        for _ in range(3000):
            if child.exists() and child.read_text():
                break
            time.sleep(0.01)
        raise BrokenPipeError("the reader went away")

    with pytest.raises(BrokenPipeError):
        parallel.write_in_halves(list(range(100)), render, write)
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running or a zombie
        os.kill(int(child.read_text()), 0)


def test_without_a_second_process_one_does_it_all(monkeypatch):
    import kblint.parallel as parallel

    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(parallel, "_HALVES_MIN", 10)
    monkeypatch.setattr(os, "fork", no_fork)
    out: list[str] = []
    parallel.write_in_halves(list(range(100)), _numbers, out.append)
    assert "".join(out) == ",".join(map(str, range(100)))


def test_children_reaped_unseen_are_no_failure(monkeypatch):
    """A parent that ignores SIGCHLD passes that on across exec: the child's status is lost."""
    import signal

    import kblint.parallel as parallel

    monkeypatch.setattr(parallel, "_HALVES_MIN", 10)
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        out: list[str] = []
        parallel.write_in_halves(list(range(1000)), _numbers, out.append)
    finally:
        signal.signal(signal.SIGCHLD, before)
    assert "".join(out) == ",".join(map(str, range(1000)))


def test_validate_takes_its_children_back_from_a_parent_that_ignores_them():
    import signal

    from kblint.parallel import own_children

    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        own_children()
        assert signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGCHLD, before)
