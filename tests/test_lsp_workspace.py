"""The workspace `kblint server` holds, in this process: an entry's issues from unsaved text, the
link graph changed one entry at a time (checked against a fresh index of the same files and against
`kblint validate`), kb.yaml re-planned from unsaved text, ranges, completion and hover."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from conftest import ROOT, examples, run_kblint, write_kb
from hypothesis import given, settings
from hypothesis import strategies as st

from kblint.config import resolve
from kblint.lsp import actions
from kblint.lsp.editing import complete, explain_issue
from kblint.lsp.ranges import issue_span, lines_of
from kblint.lsp.workspace import HeldWorkspace, workspace_roots

KB_YAML = """\
name: notes
types:
  person:
    subdirectory: people
    required: [role]
    fields:
      role: {type: select, values: [source, official]}
evaluation_rubric:
  - text: "Entry has at least two tags"
    checker: has_tags
    params: {min: 2}
"""


def person(id_: str, links: str, role: str = "source", tags: str = "[a, b]", extra: str = "") -> str:
    return f"---\nid: {id_}\ntitle: {id_.title()} Person\nrole: {role}\ntags: {tags}\n{extra}---\nKnows {links}.\n"


ENTRIES = {
    "people/ada-lovelace.md": person("ada", "[[bob]]"),
    "people/bob.md": person("bob", "[[ada]] and [[carol]]"),
    "people/carol.md": person("carol", "[[ada]]", extra="aliases: [Caz]\n"),
    "notes/harbor.md": "---\ntitle: The harbor\ntype: note\ntags: [a, b]\n---\nSee [[Caz]] and [[bob]] and [Ada](../people/ada-lovelace.md).\n",
}


def held_workspace(tmp_path: Path, entries: dict[str, str] | None = None, kb_yaml: str = KB_YAML) -> HeldWorkspace:
    root = write_kb(tmp_path / "notes", kb_yaml, ENTRIES if entries is None else entries)
    roots, warnings = workspace_roots([str(tmp_path)])
    held = HeldWorkspace(resolve({"no_cache": True}, None, cwd=str(tmp_path)), roots, warnings)
    held.load()
    assert [h.root for h in held.kbs.values()] == [str(root)]
    return held


def rules(held: HeldWorkspace, path: Path) -> list[tuple[str, int]]:
    return [(i.rule, i.line) for i in held.issues(str(path))]


def edit(held: HeldWorkspace, path: Path, text: str) -> set[str]:
    """The editor holds TEXT for PATH (unsaved); the other entries to publish again."""
    held.texts[str(path)] = text.encode()
    return held.refresh(str(path))


def test_issues_come_from_the_unsaved_text_and_go_when_it_is_fixed(tmp_path: Path):
    held = held_workspace(tmp_path)
    ada = tmp_path / "notes/people/ada-lovelace.md"
    assert rules(held, ada) == []
    assert edit(held, ada, person("ada", "[[bob]]", role="spy", tags="[a]")) == set()
    assert rules(held, ada) == [("invalid_field", 4), ("rubric_violation", 5)]
    assert ada.read_text() == ENTRIES["people/ada-lovelace.md"]  # nothing is written
    edit(held, ada, ENTRIES["people/ada-lovelace.md"])
    assert rules(held, ada) == []


def test_a_changed_id_breaks_and_mends_the_links_of_other_entries(tmp_path: Path):
    held = held_workspace(tmp_path)
    ada, bob, carol = (tmp_path / "notes/people" / f for f in ("ada-lovelace.md", "bob.md", "carol.md"))
    assert edit(held, ada, person("adaa", "[[bob]]")) == {str(bob), str(carol)}
    assert rules(held, bob) == [("broken_link", 7)] and rules(held, carol) == [("broken_link", 8)]
    assert "did you mean 'adaa'?" in held.issues(str(bob))[0].message
    assert edit(held, ada, ENTRIES["people/ada-lovelace.md"]) == {str(bob), str(carol)}
    assert rules(held, bob) == [] and rules(held, carol) == []


def test_a_deleted_target_breaks_its_linkers_and_its_return_mends_them(tmp_path: Path):
    held = held_workspace(tmp_path)
    bob, carol, harbor = (tmp_path / "notes" / p for p in ("people/bob.md", "people/carol.md", "notes/harbor.md"))
    renamed = tmp_path / "notes/people/caroline.md"
    carol.rename(renamed)
    assert held.remove(str(carol)) == {str(bob), str(harbor)}
    assert rules(held, bob) == [("broken_link", 7)] and rules(held, harbor) == [("broken_link", 6)]
    assert held.refresh(str(renamed)) == {str(bob), str(harbor)}  # its id and alias answer again
    assert rules(held, bob) == [] and ("broken_link", 6) not in rules(held, harbor)


def test_an_entry_that_loses_its_only_linker_becomes_an_orphan(tmp_path: Path):
    held = held_workspace(tmp_path)
    harbor = tmp_path / "notes/notes/harbor.md"
    edit(held, harbor, "---\ntitle: The harbor\ntype: note\ntags: [a, b]\n---\nNo links.\n")
    assert rules(held, harbor) == [("orphan_entry", 1), ("rubric_violation", 1)]  # no links in, none out
    new = tmp_path / "notes/notes/quay.md"  # an entry the editor has, not saved yet
    assert edit(held, new, "---\ntitle: The quay\ntype: note\ntags: [a, b]\n---\nNear [[harbor]].\n") == {str(harbor)}
    assert rules(held, harbor) == [("rubric_violation", 1)] and rules(held, new) == []


def test_duplicate_ids_appear_on_both_and_go_with_either(tmp_path: Path):
    held = held_workspace(tmp_path)
    ada, bob = tmp_path / "notes/people/ada-lovelace.md", tmp_path / "notes/people/bob.md"
    assert edit(held, bob, person("ada", "[[ada]] and [[Carol]]")) >= {str(ada)}
    assert ("duplicate_id", 2) in rules(held, ada) and ("duplicate_id", 2) in rules(held, bob)
    assert edit(held, bob, ENTRIES["people/bob.md"]) >= {str(ada)}
    assert rules(held, ada) == []


def test_kb_yaml_text_replans_the_kb(tmp_path: Path):
    held = held_workspace(tmp_path)
    kb = held.kbs["notes"]
    ada = tmp_path / "notes/people/ada-lovelace.md"
    held.reload_kb(kb, KB_YAML.replace("required: [role]", "required: [role, born]"))
    assert ("missing_required", 1) in rules(held, ada)
    held.reload_kb(kb, KB_YAML + "  - {text: Broken, checker: no_such_checker}\n")
    assert [(i.rule, i.line) for i in held.issues(kb.kb_yaml)] == [("config_error", 12)]
    assert rules(held, ada) == []
    held.reload_kb(kb, "name: [unclosed\n")
    assert held.issues(kb.kb_yaml)[0].message.startswith("kb.yaml cannot be read")
    assert rules(held, ada) == []  # the last plan stays
    held.reload_kb(kb, None)
    assert held.issues(kb.kb_yaml) == [] and not kb.unsaved


@pytest.mark.parametrize(
    "kb_yaml",
    [
        KB_YAML.replace("subdirectory: people", "subdirectory: notes"),  # every entry changes type
        KB_YAML.replace("name: notes", "name: other"),  # the KB's name: links into it by name
        KB_YAML.replace("params: {min: 2}", "params: {min: 3}"),
    ],
)
def test_a_kb_replanned_from_unsaved_text_is_the_kb_indexed_afresh(tmp_path: Path, kb_yaml: str):
    held = held_workspace(tmp_path, {**ENTRIES, "people/dan.md": person("dan", "[[notes:ada]] [[Carol]]")})
    kb = held.kbs["notes"]
    before = {p: held.issues(p) for p in held.live.facts}
    republish = held.reload_kb(kb, kb_yaml)
    (tmp_path / "notes/kb.yaml").write_text(kb_yaml)
    fresh = held_workspace(tmp_path, entries={}, kb_yaml=kb_yaml)
    for path in fresh.live.facts:
        assert [(i.rule, i.message) for i in held.issues(path)] == [(i.rule, i.message) for i in fresh.issues(path)]
    graph_rules = {"broken_link", "orphan_entry", "duplicate_id", "noncanonical_link"}
    changed = {
        p
        for p, issues in before.items()
        if {i.message for i in issues if i.rule in graph_rules}
        != {i.message for i in held.issues(p) if i.rule in graph_rules}
    }
    assert changed <= republish


def test_what_the_server_holds_is_what_validate_reports(tmp_path: Path):
    held = held_workspace(tmp_path, {**ENTRIES, "people/dan.md": person("dan", "[[nobody]]", role="spy")})
    report = run_kblint("validate", str(tmp_path / "notes"), "--format", "json", "--no-cache", "--fail-on", "never")
    batch = sorted(
        (os.path.normpath(ROOT / i["path"]), i["rule"], i["line"], i["message"]) for i in report.json["issues"]
    )
    paths = [*held.live.facts, held.kbs["notes"].kb_yaml]
    mine = sorted((p, i.rule, i.line, i.message) for p in paths for i in held.issues(p))
    assert mine == batch and len(batch) >= 2


_NAMES = ["ada", "bob", "carol", "Ada", "caz", "dan"]
_step = st.tuples(
    st.sampled_from(["people/ada-lovelace.md", "people/bob.md", "people/carol.md", "notes/harbor.md", "people/dan.md"]),
    st.sampled_from(_NAMES + [None]),  # the id (None: the file is deleted)
    # link targets (near misses too: their "did you mean" changes with the ids)
    st.lists(st.sampled_from(_NAMES + ["people/bob", "notes:carol", "nobody", "carrol", "adda"]), max_size=3),
    st.sampled_from(["", "aliases: [Caz]\n", "aliases: [bob]\n", "type: note\n"]),
)


@settings(max_examples=examples(15), deadline=None)
@given(st.lists(_step, min_size=1, max_size=6))
def test_an_index_changed_step_by_step_is_the_index_built_afresh(tmp_path_factory, steps):
    """After any edits, each entry's issues are those a fresh index of the same files gives; and
    after each edit, every other entry whose issues it changed is among those to publish again."""
    base = tmp_path_factory.mktemp("kb")
    held = held_workspace(base)
    index = held.live.graph.indexes["notes"]
    index.suggest("someone")  # the ids in order for suggestions: kept in order from now on
    for rel, id_, targets, extra in steps:
        path = base / "notes" / rel
        before = {p: held.issues(p) for p in held.live.facts if p != str(path)}
        if id_ is None:
            path.unlink(missing_ok=True)
            republish = held.remove(str(path))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(person(id_, " ".join(f"[[{t}]]" for t in targets) or "nobody", extra=extra))
            republish = held.refresh(str(path))
        changed = {p for p, issues in before.items() if held.issues(p) != issues}
        assert changed <= republish
    fresh = held_workspace(base, entries={})
    assert sorted(held.live.facts) == sorted(fresh.live.facts)
    fresh.live.graph.indexes["notes"].suggest("someone")
    assert index._sorted is not None and fresh.live.graph.indexes["notes"]._sorted is not None
    for kept, made in zip(index._sorted, fresh.live.graph.indexes["notes"]._sorted, strict=True):
        assert sorted(kept) == sorted(made) and [i.casefold() for i in kept] == [i.casefold() for i in made]
    for path in fresh.live.facts:
        assert [(i.rule, i.message) for i in held.issues(path)] == [(i.rule, i.message) for i in fresh.issues(path)]
        assert sorted(held.live.graph.inlinks.get(path, [])) == sorted(fresh.live.graph.inlinks.get(path, []))


def test_ranges_cover_the_key_the_link_or_the_line(tmp_path: Path):
    text = (
        "---\nid: dan\ntitle: Dan\nrole: spy\ntags: [a]\nlinks:\n  - nobody\n---\n"
        "Knows [[ghost|a ghost]] and [Zed](zed.md).\n"
    )
    held = held_workspace(tmp_path, {**ENTRIES, "people/dan.md": text})
    lines = lines_of(text)
    spans = {
        (i.rule, i.field): lines[s.line][s.start : s.end]
        for i in held.issues(str(tmp_path / "notes/people/dan.md"))
        for s in [issue_span(i, lines)]
    }
    assert spans[("invalid_field", "role")] == "role"
    assert spans[("rubric_violation", "tags")] == "tags"
    assert spans[("broken_link", "links")] == "nobody"
    assert spans[("broken_link", None)] in ("[[ghost|a ghost]]", "[Zed](zed.md)")
    broken = sorted(
        lines[s.line][s.start : s.end]
        for i in held.issues(str(tmp_path / "notes/people/dan.md"))
        if i.rule == "broken_link"
        for s in [issue_span(i, lines)]
    )
    assert broken == ["[Zed](zed.md)", "[[ghost|a ghost]]", "nobody"]
    harbor = ENTRIES["notes/harbor.md"]
    (alias,) = [i for i in held.issues(str(tmp_path / "notes/notes/harbor.md")) if i.rule == "noncanonical_link"]
    span = issue_span(alias, lines_of(harbor))
    assert lines_of(harbor)[span.line][span.start : span.end] == "[[Caz]]"  # the link, not the rest of its line
    held.texts[str(tmp_path / "notes/people/dan.md")] = b"---\nid: [dan\n---\n"
    held.refresh(str(tmp_path / "notes/people/dan.md"))
    (parse_error,) = held.issues(str(tmp_path / "notes/people/dan.md"))
    span = issue_span(parse_error, lines_of("---\nid: [dan\n---\n"))
    assert parse_error.rule == "parse_error" and span.line == parse_error.line - 1


def test_completion_offers_targets_types_values_and_fields(tmp_path: Path):
    held = held_workspace(tmp_path)
    path = str(tmp_path / "notes/notes/harbor.md")

    def labels(text: str, line: int) -> list[str]:
        lines = lines_of(text)
        return [o.label for o in complete(held, path, lines, line, len(lines[line]))[0]]

    assert labels("---\ntitle: x\n---\nSee [[ca", 3) == ["carol", "Caz"]
    assert labels("---\ntitle: x\n---\nSee [[", 3) == ["ada", "bob", "carol", "Caz"]
    assert labels("---\ntitle: x\n---\nSee [[notes:b", 3) == ["bob"]
    assert "person" in labels("---\ntype: \n---\n", 1)
    assert labels("---\ntype: person\nrole: \n---\n", 2) == ["source", "official"]
    fields = labels("---\ntype: person\ntitle: x\n\n---\n", 3)
    assert fields[0] == "role" and "tags" in fields and "title" not in fields
    assert labels("---\ntitle: x\n---\nprose", 3) == []


def test_hover_says_how_the_rubric_item_is_enforced(tmp_path: Path):
    held = held_workspace(tmp_path)
    ada = tmp_path / "notes/people/ada-lovelace.md"
    edit(held, ada, person("ada", "[[bob]]", tags="[a]"))
    (violation,) = held.issues(str(ada))
    text = explain_issue(held, violation)
    assert "[checker] Entry has at least two tags → has_tags(min=2)" in text
    assert "docs/rules.md#has_tags" in text


def test_quick_fixes_come_from_the_safe_fixes_and_registered_providers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    held = held_workspace(tmp_path)
    ada = tmp_path / "notes/people/ada-lovelace.md"
    kb = held.kbs["notes"]

    def subject(text: str) -> actions.Subject:
        edit(held, ada, text)
        (issue,) = held.issues(str(ada))
        return actions.Subject(issue, text.encode(), kb.ctx.schema, "people/ada-lovelace.md", kb.ctx.limits)

    pytest.importorskip("kblint.fix.fixers")
    (fix,) = actions.fixes_for(subject(person("ada", "[[bob]]", role="Source")))
    assert fix.edits == (actions.Edit(3, 6, 3, 7, "s"),) and fix.preferred  # the one character that changes
    assert actions.fixes_for(subject(person("ada", "[[bob]]", role="spy"))) == []  # no safe fix
    mine = actions.Fix("Use 'source'", (actions.Edit(3, 6, 3, 9, "source"),))
    monkeypatch.setattr(
        actions, "PROVIDERS", [lambda s: [mine] if s.issue.rule == "invalid_field" else [], lambda s: 1 / 0]
    )
    assert actions.fixes_for(subject(person("ada", "[[bob]]", role="spy"))) == [mine]


def test_the_edit_between_two_texts_keeps_line_breaks_whole():
    assert actions.edit_between("a: b\r\nc: d\r\n", "a: b\r\nc: e\r\n") == actions.Edit(1, 3, 1, 4, "e")
    assert actions.edit_between("x\r\ny", "x\r\nz\r\ny") == actions.Edit(1, 0, 1, 0, "z\r\n")
    assert actions.edit_between("---\n---\n", "---\ntype: note\n---\n") == actions.Edit(1, 0, 1, 0, "type: note\n")


def test_judgment_comes_from_the_verdict_cache_and_the_judge_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from llm_server import FakeLLM

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    root = write_kb(tmp_path / "notes", KB_YAML + '  - "Claims are FAIL checked"\n', ENTRIES)
    ada = str(root / "people/ada-lovelace.md")
    with FakeLLM() as fake:
        conf = tmp_path / "kblint.toml"
        conf.write_text(
            f'cache_dir = "{tmp_path / "cache"}"\n[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{fake.openai_url}"\n'
        )
        settings = resolve({}, str(conf), cwd=str(tmp_path))
        held = HeldWorkspace(settings, [str(root)])
        held.load()
        assert held.issues(ada) == [] and fake.count == 0  # linting never asks the LLM
        assert "1 request(s)" in held.judge_now(ada)
        assert [i.rule for i in held.issues(ada)] == ["llm_rubric_violation"]
        again = HeldWorkspace(settings, [str(root)])
        again.load()
        assert [i.rule for i in again.issues(ada)] == ["llm_rubric_violation"] and fake.count == 1  # from the cache
        edit(again, Path(ada), (root / "people/ada-lovelace.md").read_text() + "More.\n")
        assert again.issues(ada) == []  # a verdict is of the text it was given


def test_a_symlink_to_a_file_outside_the_kb_is_never_read(tmp_path: Path):
    """As the walk of the KB decides (and `kblint validate`): an entry that is a symlink to a file
    outside the KB is not read, be it indexed, created later, closed, or its KB planned again."""
    outside = tmp_path / "elsewhere/secret.md"
    outside.parent.mkdir()
    outside.write_text("---\nid: secret\ntitle: Secret\naliases: [hidden-alias]\n---\nSecret body.\n")
    held = held_workspace(tmp_path / "ws")
    kb = held.kbs["notes"]
    link = tmp_path / "ws/notes/people/leak.md"
    link.symlink_to(outside)
    held.refresh(str(link))  # a watched file created
    said = [(i.rule, i.message) for i in held.issues(str(link))]
    assert said == [("parse_error", "a symlink to a file outside the KB: not read")]
    assert held.read(str(link)) is None
    fresh = held_workspace(tmp_path / "ws", entries={})
    assert [(i.rule, i.message) for i in fresh.issues(str(link))] == said
    held.texts[str(link)] = b"---\nid: typed\n---\n"  # the editor's text is linted; once closed, the file is not
    held.refresh(str(link))
    held.texts.pop(str(link))
    held.refresh(str(link))
    held.reload_kb(kb, KB_YAML)
    assert [(i.rule, i.message) for i in held.issues(str(link))] == said
    bob = tmp_path / "ws/notes/people/bob.md"
    names = [o.label for o in complete(held, str(bob), ["See [["], 0, 6)[0]]
    assert names and not {"secret", "hidden-alias", "leak"} & set(names)


def test_a_file_not_open_is_read_only_as_an_entry_of_a_held_kb(tmp_path: Path):
    """HeldWorkspace.read: what a client names is read only when the engine would read it."""
    held = held_workspace(tmp_path / "ws")
    kb_root = tmp_path / "ws/notes"
    bob = kb_root / "people/bob.md"
    assert held.read(str(bob)) == bob.read_bytes()
    assert held.read(str(kb_root / "kb.yaml")) == (kb_root / "kb.yaml").read_bytes()
    pipe = kb_root / "people/pipe.md"
    os.mkfifo(pipe)  # an open() of it would wait for a writer for ever
    (kb_root / "people/notes.txt").write_text("not an entry")
    (tmp_path / "outside.md").write_text("---\ntitle: x\n---\n")
    for path in (pipe, kb_root / "people/notes.txt", tmp_path / "outside.md", Path("/dev/zero")):
        assert held.read(str(path)) is None
    ctx = held.kbs["notes"].ctx
    ctx.limits = dataclasses.replace(ctx.limits, max_file_bytes=10)
    assert held.read(str(bob)) is None  # over the size limit
    held.texts[str(bob)] = b"the editor's"
    assert held.read(str(bob)) == b"the editor's"


def test_a_changed_id_republishes_the_entries_it_was_suggested_to(tmp_path: Path):
    """A broken link's "did you mean" names an id: when that id goes (or a closer one comes), the
    entry with the link is published again, as a fresh index would suggest."""
    held = held_workspace(tmp_path, {**ENTRIES, "people/dan.md": person("dan", "[[carrol]]")})
    carol, dan = tmp_path / "notes/people/carol.md", tmp_path / "notes/people/dan.md"
    (broken,) = [i for i in held.issues(str(dan)) if i.rule == "broken_link"]
    assert broken.message.endswith("did you mean 'carol'?")
    assert str(dan) in edit(held, carol, person("karla", "[[ada]]"))
    (broken,) = [i for i in held.issues(str(dan)) if i.rule == "broken_link"]
    assert broken.message == "Link target 'carrol' not found"
    assert str(dan) in edit(held, carol, person("carol", "[[ada]]"))
    assert [i.message for i in held.issues(str(dan)) if i.rule == "broken_link"][0].endswith("'carol'?")
    assert str(dan) not in edit(held, tmp_path / "notes/people/bob.md", person("bobby", "[[ada]]"))
