"""Whole KBs generated at random (kb.yaml with types, rules, rubric items and policies; entries
with odd frontmatter and links; file-system oddities) are linted, and on every one:

- the run ends in a report (exit 0 or 1) or one clear line (exit 2), never a traceback;
- `files` is the number of `*.md` files an independent walk finds, and each is either an entry
  or has a parse_error (nothing dropped silently);
- every issue's path is inside the KB, and its message holds no control character;
- `-j1` and `-j2` give the same JSON, and so do a run that fills the cache and one that reads it.

The `ci` profile runs a few dozen KBs; HYPOTHESIS_PROFILE=thorough runs 10,000 (bench/README.md
records the last such run).
"""

from __future__ import annotations

import codecs
import json
import os
import re
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml
from conftest import examples, run_kblint
from hypothesis import Phase, event, given, settings
from hypothesis import strategies as st

# ---------------------------------------------------------------------------------------------
# kb.yaml

names = st.sampled_from(["note", "finding", "source", "person", "x-y", "Note", "ünï", ""])
fields = st.sampled_from(["title", "tags", "date", "status", "links", "sources", "priority", "kb", "id"])
checkers = st.sampled_from(
    ["has_tags", "body_min_words", "has_field", "body_has_section", "body_has_pattern", "has_outlinks", "no_such"]
)
params = st.dictionaries(
    st.sampled_from(["min", "field", "heading", "pattern", "level", "fields", "bogus"]),
    st.one_of(
        st.integers(-2, 5),
        st.sampled_from(
            ["Sources", "title", "^source:", "(a|a)*$", "[unclosed", "", "\\b(todo)\\b", "(?:a{4294967294})"]
        ),
        st.lists(fields, max_size=3),
        st.none(),
    ),
    max_size=3,
)
policies = st.builds(
    lambda measure, op, n: f"{measure} count {op} {n}",
    st.sampled_from(
        ["tags", "links", "inlinks", "outlinks", "metadata.sources", "body.words", "body.section 'X'", "?"]
    ),
    st.sampled_from([">=", "<=", "==", ">", "=<", "!"]),
    st.integers(-1, 3),
) | st.sampled_from(
    ["status draft->published requires tags count >= 1", "status * -> * requires", "Entries are insightful", ""]
)
rubric_item = st.one_of(
    policies,
    st.builds(lambda t, c, p: {"text": t, "checker": c, "params": p}, st.text(max_size=20), checkers, params),
    st.builds(lambda t, f: {"text": t, "covered_by": "schema", "field": f}, st.text(max_size=10), fields),
    st.builds(lambda t: {"text": t, "severity": "fatal"}, st.text(max_size=10)),
    st.integers(),
    st.none(),
)
field_spec = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["text", "date", "tags", "select", "number", "url", "object-ref", "nope"]),
        "options": st.lists(st.text(max_size=5), max_size=3),
        "required": st.booleans(),
    },
)
type_spec = st.fixed_dictionaries(
    {},
    optional={
        "subdirectory": st.sampled_from(["findings", "sub/dir", "../out", "", "/abs"]),
        "required": st.lists(fields, max_size=3),
        "fields": st.dictionaries(fields, field_spec, max_size=3),
        "evaluation_rubric": st.lists(rubric_item, max_size=3),
    },
)
rules = st.lists(
    st.fixed_dictionaries(
        {"field": fields},
        optional={
            "pattern": st.sampled_from(["^[A-Z]", "(a|a)*$", "[bad", "^\\d{4}-\\d{2}-\\d{2}$"]),
            "enum": st.lists(st.text(max_size=4), max_size=3),
            "range": st.lists(st.integers(-5, 5), max_size=3),
            "format": st.sampled_from(["date", "url", "ISO8601", "bogus"]),
        },
    ),
    max_size=3,
)
kb_yaml_data = st.fixed_dictionaries(
    {"name": st.sampled_from(["notes", "Notes KB", "x"])},
    optional={
        "types": st.dictionaries(names, type_spec, max_size=3),
        "evaluation_rubric": st.lists(rubric_item, max_size=4),
        "validation": st.fixed_dictionaries({"rules": rules}, optional={"enforce": st.booleans()}),
        "pass_threshold": st.one_of(st.floats(-1, 2), st.text(max_size=3)),
    },
)
ALIAS_BOMB = "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
# Mostly kb.yaml files kblint can read (their problems are config_error issues); now and then
# one it cannot (exit 2).
kb_yaml_text = st.sampled_from(["json", "yaml", "yaml", "yaml", "yaml", "bomb", "deep", "text"]).flatmap(
    lambda kind: {
        "json": kb_yaml_data.map(json.dumps),  # JSON is YAML
        "yaml": kb_yaml_data.map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
        "bomb": st.just(
            "name: notes\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
            + ALIAS_BOMB
            + "evaluation_rubric: *a8\n"
        ),
        "deep": st.just("name: notes\nevaluation_rubric: " + "[" * 5000 + "]" * 5000 + "\n"),
        "text": st.text(max_size=60),
    }[kind]
)

# ---------------------------------------------------------------------------------------------
# Entries

scalars = st.one_of(st.text(max_size=12), st.integers(), st.booleans(), st.none(), st.dates().map(str))
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
link_texts = st.sampled_from(
    [
        "[[other]]",
        "[[missing]]",
        "[[kb:elsewhere]]",
        "![[pic.png]]",
        "![[../outside.png]]",
        "![[/etc/hostname]]",
        "[x](other.md)",
        "[x](../outside.md)",
        "[x](%2e%2e/outside.md)",
        "[x](sub/../../o.md)",
        "[[a|b]]",
        "[[#h]]",
        "`[[code]]`",
        "```\n[[fenced]]\n```",
        "<!-- kblint-disable broken_link -->",
        "## Sources",
        "# Title",
        "[x](<a b.md>)",
        "[[",
        "](",
        "`` ` ``",
        "\r\n",
        "\x00",
        "\ufeff",
    ]
)
bodies = st.lists(st.one_of(link_texts, st.text(max_size=20)), max_size=8).map(" ".join)
frontmatters = st.dictionaries(
    st.one_of(fields, st.text(max_size=6)),
    st.one_of(values, st.lists(st.sampled_from(["other", "missing", "kb:x", "../up"]), max_size=3)),
    max_size=6,
)


def _entry(fm: dict, body: str, style: str) -> bytes:
    if style == "json":
        return f"---\n{json.dumps(fm, default=str)}\n---\n{body}\n".encode("utf-8", "surrogatepass")
    if style == "unterminated":
        return f"---\ntitle: x\n{body}".encode("utf-8", "surrogatepass")
    if style == "glued":
        return b"---\ntitle: x---\n" + body.encode("utf-8", "surrogatepass")
    if style == "deep":
        return b"---\ntitle: x\nt: " + b"[" * 3000 + b"]" * 3000 + b"\n---\nbody\n"
    if style == "bomb":
        return ("---\ntitle: x\na0: &a0 [l, l, l, l, l, l, l, l, l]\n" + ALIAS_BOMB + "tags: *a8\n---\nb\n").encode()
    return b"\xff\xfe" + body.encode("utf-8", "surrogatepass")


entries = st.builds(
    _entry, frontmatters, bodies, st.sampled_from(["json"] * 6 + ["unterminated", "glued", "deep", "bomb", "bytes"])
)
file_names = st.sampled_from(
    [
        "a.md",
        "b.md",
        "other.md",
        "findings/f.md",
        "sub/dir/s.md",
        "_templates/t.md",
        ".hidden/h.md",
        "README.md",
        "x.MD",
        "notes.txt",
        "deep/" * 12 + "d.md",
    ]
) | st.binary(min_size=1, max_size=6).filter(lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")).map(
    lambda b: b + b".md"
)
oddities = st.lists(
    st.sampled_from(
        [
            "dangling",
            "loop",
            "outside",
            "inside",
            "fifo",
            "dir.md",
            "zero",
            "empty",
            "cross-kb-links",
            "cross-fifo",
            "dotdot",
        ]
    ),
    max_size=3,
    unique=True,
)

# ---------------------------------------------------------------------------------------------
# Building a KB, and the independent walk


def _write(root: bytes, rel: bytes, data: bytes) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.lexists(path):
        with open(path, "wb") as fh:
            fh.write(data)


def _add_oddity(root: bytes, outside: bytes, kind: str) -> None:
    j = os.path.join
    if kind == "dangling":
        os.symlink(b"nowhere.md", j(root, b"dangling.md"))
    elif kind == "loop":
        os.symlink(b"loop2.md", j(root, b"loop1.md"))
        os.symlink(b"loop1.md", j(root, b"loop2.md"))
    elif kind == "outside":
        os.symlink(outside, j(root, b"leak.md"))
    elif kind == "inside":
        os.symlink(b"kb.yaml", j(root, b"alias.md"))
    elif kind == "fifo":
        os.mkfifo(j(root, b"fifo.md"))
    elif kind == "dir.md":
        os.mkdir(j(root, b"dir.md"))
    elif kind == "zero":
        os.symlink(b"/dev/zero", j(root, b"zero.md"))
    elif kind == "empty":
        open(j(root, b"empty.md"), "wb").close()
    elif kind == "cross-kb-links":
        _write(root, b"cross-kb-links.yaml", b"links:\n  - {source: a, target: other:b}\n  - 7\n")
    elif kind == "dotdot":  # an absolute target through a symlinked directory, then `..`: outside
        os.symlink(os.path.join(os.path.dirname(outside), b"deep"), j(root, b"link"))
        os.symlink(j(root, b"link", b"..", b"secret.md"), j(root, b"dotdot.md"))
    elif kind == "cross-fifo" and not os.path.lexists(j(root, b"cross-kb-links.yaml")):
        os.mkfifo(j(root, b"cross-kb-links.yaml"))


def independent_walk(root: bytes) -> int:
    """The `*.md` files below ROOT as SPEC §2 counts them: any kind of file but a directory (a
    symlink to one included), not README.md, not in hidden directories or `_templates`, and
    not below symlinked directories."""
    count = 0
    for directory, dirs, files in os.walk(root):
        links = [d for d in dirs if os.path.islink(os.path.join(directory, d))]
        dirs[:] = [d for d in dirs if not d.startswith(b".") and d != b"_templates" and d not in links]
        count += sum(
            1 for n in files + links if n.endswith(b".md") and n.lower() != b"readme.md" and not n.startswith(b".")
        )
    return count


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def hung(*_: object) -> None:
        raise TimeoutError(f"the run did not end in {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _unquote(shown: str) -> bytes:
    """The bytes of a file name as reports show it (quoted as git quotes names)."""
    return codecs.escape_decode(shown[1:-1].encode())[0] if shown.startswith('"') else os.fsencode(shown)


def _lint(root: Path, *args: str) -> tuple[int, str, str]:
    with _deadline(60):
        result = run_kblint("validate", ".", "--format", "json", *args, cwd=root)
    return result.code, result.stdout, result.stderr


SECRET = b"---\ntitle: secret\n---\n[[outside-secret-link]]\n"  # beside the KB: never read
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def check_invariants(root: Path) -> None:
    code, out, err = _lint(root, "-j1", "--no-cache")
    event(f"exit {code}")
    assert "outside-secret-link" not in out + err
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:  # one line; a JSON report then says the same
        assert len(err.strip().splitlines()) == 1 and err.startswith("kblint: "), err
        assert out == "" or json.loads(out)["summary"]["exit_code"] == 2
        return
    assert code in (0, 1), err
    report = json.loads(out)
    (kb,) = report["kbs"]
    assert kb["files"] == independent_walk(os.fsencode(root))
    failed = {i["path"] for i in report["issues"] if i["rule"] == "parse_error"}
    assert kb["entries"] + len(failed - {"kb.yaml", "cross-kb-links.yaml"}) == kb["files"]
    for issue in report["issues"]:
        rel = _unquote(issue["path"])
        assert not rel.startswith(b"../") and not os.path.isabs(rel), issue
        assert os.path.lexists(os.path.join(os.fsencode(root), rel)), issue
        assert issue["line"] >= 1
        assert not CONTROL.search(issue["message"]), issue  # nothing a terminal would obey
    cache = f"--cache-dir={root.parent / 'cache'}"
    assert _lint(root, "-j2", cache) == (code, out, err)  # in two processes, writing the cache
    assert _lint(root, "-j2", cache) == (code, out, err)  # from the cache


@settings(
    max_examples=examples(20),  # each runs kblint four times: HYPOTHESIS_PROFILE=thorough tries many more
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
)
@given(
    kb_yaml=kb_yaml_text,
    files=st.dictionaries(file_names, entries, max_size=6),
    odd=oddities,
    bulk=st.integers(0, 40),
)
def test_generated_kbs_keep_the_invariants(kb_yaml: str, files: dict[bytes | str, bytes], odd: list[str], bulk: int):
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(os.fsencode(tmp), b"kb")
        os.mkdir(root)
        outside = os.path.join(os.fsencode(tmp), b"secret.md")
        _write(os.fsencode(tmp), b"secret.md", SECRET)
        os.mkdir(os.path.join(os.fsencode(tmp), b"deep"))
        _write(root, b"kb.yaml", kb_yaml.encode("utf-8", "surrogatepass"))
        for name, data in files.items():
            _write(root, os.fsencode(name), data)
        for i in range(bulk):  # enough files for -j2 to share them between processes
            _write(root, b"bulk/e%d.md" % i, b"---\ntitle: Bulk %d\ntags: [a]\n---\nSee [[e%d]].\n" % (i, i + 1))
        for kind in odd:
            _add_oddity(root, outside, kind)
        check_invariants(Path(os.fsdecode(root)))
