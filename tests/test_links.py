"""Links (SPEC §3): every source of links, and resolution across the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import issues_of, run_kblint, write_kb

from kblint.model.entry import RawEntry, frontmatter_links, split_and_load
from kblint.model.markdown import markdown_links, strip_code, wikilinks


def body_links(body: str, body_line: int, entry_dir: str) -> list:
    """The links of a body as an entry has them: wikilinks, then markdown links, code removed."""
    text = strip_code(body)
    return [*wikilinks(text, body_line), *markdown_links(text, body_line, entry_dir)]


def targets(links):
    return [(link.kb, link.target, link.relation) for link in links]


def test_a_bar_escaped_as_in_a_table_cell_ends_the_target():
    links = body_links("| a | [[beta\\|shown]] | [[gamma#Part\\|x]] |\n", 1, "")
    assert targets(links) == [(None, "beta", "wikilink"), (None, "gamma", "wikilink")]


def test_wikilink_forms():
    body = (
        "[[plain]] [[with-label|Label]] [[heading#Section]] [[block^abc]] [[other-kb:remote]] "
        "![[embedded]] [[  spaced  ]] [[Note: not a kb]] [[dir/deep]] [[named.md]]\n"
    )
    links = body_links(body, 5, "")
    assert targets(links) == [
        (None, "plain", "wikilink"),
        (None, "with-label", "wikilink"),
        (None, "heading", "wikilink"),
        (None, "block", "wikilink"),
        ("other-kb", "remote", "wikilink"),
        (None, "embedded", "transclusion"),
        (None, "spaced", "wikilink"),
        (None, "Note: not a kb", "wikilink"),
        (None, "dir/deep", "wikilink"),
        (None, "named", "wikilink"),
    ]
    assert [link.path for link in links][-2:] == ["dir/deep.md", "named.md"]
    assert all(link.line == 5 for link in links)
    assert links[1].column == 11


def test_code_and_non_links_are_not_links():
    body = (
        "Inline `[[in-code]]` and ``[[double `tick` code]]``.\n"
        "```\n[[in-fence]]\n```\n"
        "~~~python\n[[in-tilde-fence]]\n~~~\n"
        "A footnote [[1]](#note), an empty [[]], a broken [[across\nlines]], and [[real]].\n"
    )
    links = body_links(body, 1, "")
    assert targets(links) == [(None, "real", "wikilink")]
    assert links[0].line == 9


def test_markdown_links():
    body = (
        "[rel](other.md) [up](../top.md#part) [abs](https://example.com/x.md) "
        "[mail](mailto:a@b.c) [frag](#here) [img](pic.png) ![image](pic.md) [sp](my%20note.md)\n"
    )
    links = body_links(body, 1, "sub")
    assert [(link.relation, link.path) for link in links] == [
        ("mdlink", "sub/other.md"),
        ("mdlink", "top.md"),
        ("mdlink", "sub/my note.md"),
    ]


def test_frontmatter_link_forms():
    raw = split_and_load(
        "---\n"
        "links:\n"
        "  - {target: a, relation: cites, kb: other}\n"
        "  - {to: b, type: mentions}\n"
        "  - c\n"
        "  - other:d\n"
        "  - {target: e}\n"
        "references: [f, other:g]\n"
        "owner: h\n"
        "---\n"
    )
    links = frontmatter_links(raw, object_ref_fields=("owner",))
    assert targets(links) == [
        ("other", "a", "cites"),
        (None, "b", "mentions"),
        (None, "c", "related"),
        ("other", "d", "related"),
        (None, "e", "related"),
        (None, "f", "references"),
        ("other", "g", "references"),
        (None, "h", "owner"),
    ]
    assert [link.line for link in links] == [3, 4, 5, 6, 7, 8, 8, 9]  # each block-list item on its own line


KB_A = """\
name: alpha
types:
  project:
    fields:
      lead: {type: object-ref}
"""

KB_B = "name: beta\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    write_kb(
        tmp_path / "alpha",
        KB_A,
        {
            "hub.md": (
                "---\nid: hub\ntitle: Hub\ntags: [x]\n"
                "links:\n  - {target: by-id, relation: related}\n  - {to: Stem-Name, type: related}\n"
                "  - beta:remote-entry\n  - {target: ghost}\n  - {target: thing, kb: gamma}\n"
                "references: [Alias One]\n"
                "---\n"
                "Body [[BY-ID]] [[alias two]] [[beta:Remote Alias]] [[beta:missing-in-beta]] "
                "[[nowhere]] [[nowhere|again]] [[self-ref]] ![[diagram.png]] ![[absent.png]] "
                "[file](sub/stem-name.md) [gone](sub/gone.md) [[sub/stem-name]] [[stem-name.md]]\n"
            ),
            "by-id-file.md": "---\nid: by-id\ntitle: By id\n---\nBody.\n",
            "sub/stem-name.md": "---\ntitle: Stem\n---\nBody.\n",
            "aliased.md": "---\ntitle: Aliased\naliases: [Alias One, Alias Two]\n---\nBody.\n",
            "self-ref.md": "---\ntitle: Self\n---\nI link to [[self-ref]] only.\n",
            "project.md": "---\ntitle: P\ntype: project\nlead: nobody\n---\nBody [[hub]].\n",
            "diagram.png": b"\x89PNG",
        },
    )
    (tmp_path / "alpha" / "cross-kb-links.yaml").write_text(
        "- {source: hub, target: remote-entry, target_kb: beta, relation: related}\n"
        "- {source: hub, target: not-there, target_kb: beta, relation: related}\n"
        "- {source: no-such-entry, target: remote-entry, target_kb: beta}\n"
        "- {source: hub, target: far, target_kb: delta}\n",
        encoding="utf-8",
    )
    write_kb(
        tmp_path / "beta",
        KB_B,
        {
            "remote-entry.md": "---\ntitle: Remote\naliases: [Remote Alias]\n---\nBack to [[alpha:hub]].\n",
        },
    )
    return tmp_path


def test_resolution_across_the_workspace(workspace: Path):
    result = run_kblint("validate", str(workspace), "--format", "json", cwd=workspace)
    report = result.json
    broken = sorted((i["path"], i["line"], i["message"].split("'")[1]) for i in issues_of(report, "broken_link"))
    assert broken == [
        ("alpha/cross-kb-links.yaml", 2, "not-there"),
        ("alpha/cross-kb-links.yaml", 3, "no-such-entry"),
        ("alpha/hub.md", 9, "ghost"),
        ("alpha/hub.md", 13, "absent.png"),
        ("alpha/hub.md", 13, "missing-in-beta"),
        ("alpha/hub.md", 13, "nowhere"),
        ("alpha/hub.md", 13, "sub/gone"),
        ("alpha/project.md", 4, "nobody"),
    ]
    external = sorted((i["path"], i["line"], i["message"]) for i in issues_of(report, "unresolved_external"))
    assert external == [
        ("alpha/cross-kb-links.yaml", 4, "Link to 'delta:far': KB 'delta' is not in this run"),
        ("alpha/hub.md", 10, "Link to 'gamma:thing': KB 'gamma' is not in this run"),
    ]
    # the issues of cross-kb-links.yaml come together, by line, before the entries' (README "Reports")
    alpha = [(i["path"], i["line"]) for i in report["issues"] if i["kb_name"] == "alpha"]
    crossed = [line for path, line in alpha if path == "alpha/cross-kb-links.yaml"]
    assert crossed == [2, 3, 4] and alpha[: len(crossed)] == [("alpha/cross-kb-links.yaml", n) for n in crossed]
    # one issue per distinct (entry, KB, target): [[nowhere]] twice is reported once
    assert len([i for i in issues_of(report, "broken_link") if "nowhere" in i["message"]]) == 1
    orphans = [i["path"] for i in issues_of(report, "orphan_entry")]
    assert orphans == []  # self-ref links only to itself but is linked from hub


def test_strict_links_makes_external_links_broken(workspace: Path):
    report = run_kblint("validate", str(workspace), "--format", "json", "--strict-links", cwd=workspace).json
    assert issues_of(report, "unresolved_external") == []
    messages = [i["message"] for i in issues_of(report, "broken_link")]
    assert any("gamma:thing" in m for m in messages)


def test_single_kb_run_makes_other_kbs_external(workspace: Path):
    report = run_kblint("validate", str(workspace / "alpha"), "--format", "json", cwd=workspace).json
    external = {i["message"] for i in issues_of(report, "unresolved_external")}
    assert "Link to 'beta:remote-entry': KB 'beta' is not in this run" in external
    assert not any("missing-in-beta" in i["message"] for i in issues_of(report, "broken_link"))


def test_self_link_does_not_count_and_orphans(tmp_path: Path):
    kb = write_kb(
        tmp_path / "kb",
        "name: k\n",
        {
            "lonely.md": "---\ntitle: Lonely\n---\nOnly [[lonely]] here.\n",
            "a.md": "---\ntitle: A\n---\nTo [[b]].\n",
            "b.md": "---\ntitle: B\n---\nNo links out.\n",
        },
    )
    report = run_kblint("validate", str(kb), "--format", "json").json
    assert [Path(i["path"]).name for i in issues_of(report, "orphan_entry")] == ["lonely.md"]


def test_an_id_wins_over_another_entrys_alias_or_stem(tmp_path: Path):
    kb = write_kb(
        tmp_path / "kb",
        "name: k\n",
        {
            "a-alias.md": "---\ntitle: Aliased\ntype: note\ntags: [t]\naliases: [target]\n---\nTo [[hub]].\n",
            "z.md": "---\nid: target\ntitle: Real target\ntype: note\ntags: [t]\n---\nNo links out.\n",
            "hub.md": "---\ntitle: Hub\ntype: note\ntags: [t]\n---\nTo [[target]] and [[a-alias]].\n",
        },
    )
    report = run_kblint("validate", str(kb), "--format", "json").json
    # [[target]] reaches z (its id), not the entry that merely has the alias; else z would be an orphan
    assert issues_of(report, "orphan_entry") == []
    assert issues_of(report, "broken_link") == []


def test_a_links_item_without_a_target_is_reported(tmp_path: Path):
    kb = write_kb(
        tmp_path / "kb",
        "name: k\n",
        {
            "a.md": "---\ntitle: A\ntype: note\ntags: [t]\nlinks:\n  - {target: b}\n  - {targt: b, relation: x}\n---\n",
            "b.md": "---\ntitle: B\ntype: note\ntags: [t]\n---\n[[a]]\n",
        },
    )
    report = run_kblint("validate", str(kb), "--format", "json").json
    (issue,) = [i for i in issues_of(report, "invalid_field") if i["field"] == "links"]
    assert issue["line"] == 7 and "has no 'target'" in issue["message"] and "targt" in issue["message"]


def test_broken_links_suggest_a_near_id_in_a_large_kb():
    from kblint.model.graph import KBIndex

    index = KBIndex("k", "/kb", {})
    ids = [
        f"{word}-{other}-{n}"
        for n in range(30)
        for word in ("harbor", "council", "ledger", "zoning")
        for other in ("report", "minutes", "vote", "budget", "audit")
    ]
    ids += ["inspection-of-the-north-pier", "quayside-warehouse-fire"]
    from kblint.model.facts import EntryFacts

    for name in ids:
        index.add(
            EntryFacts(kb_name="k", path=f"/kb/{name}.md", relpath=f"{name}.md", parsed=True, reported=True, id=name)
        )
    assert len(index.ids) > 500
    assert index.suggest("inspection-of-the-nort-pier") == "inspection-of-the-north-pier"  # the start kept
    assert index.suggest("xnspection-of-the-north-pier") == "inspection-of-the-north-pier"  # the end kept
    assert index.suggest("Quayside-Warehouse-Fire") == "quayside-warehouse-fire"
    assert index.suggest("harbor-vote-77") == "harbor-vote-7"
    assert index.suggest("something-else-entirely") is None


def test_broken_link_message_names_the_near_id(tmp_path: Path):
    kb = write_kb(
        tmp_path / "kb",
        "name: k\n",
        {
            "pier.md": "---\ntitle: Pier\ntype: note\ntags: [t]\n---\nSee [[quayside-warehouse-fir]] and [[nothing-like-it]].\n",
            "quayside-warehouse-fire.md": "---\ntitle: Fire\ntype: note\ntags: [t]\n---\nSee [[pier]].\n",
        },
    )
    report = run_kblint("validate", str(kb), "--format", "json").json
    messages = sorted(i["message"] for i in issues_of(report, "broken_link"))
    assert messages == [
        "Link target 'nothing-like-it' not found",
        "Link target 'quayside-warehouse-fir' not found; did you mean 'quayside-warehouse-fire'?",
    ]


@pytest.mark.parametrize(
    ("frontmatter", "line", "message"),
    [
        ("links: 5\n", 5, "links must be a list of links, got a number"),
        ("links:\n  - b\n  - target: [b, c]\n", 7, "links item 2 has a target that is a list"),
        ("links:\n  - {to: '   '}\n", 6, "links item 1 has an empty 'target'"),
        ("links: {relation: x}\n", 5, "links has no 'target' (it has: relation)"),
        ("links:\n  - {target: null, relation: x}\n", 6, "links item 1 has an empty 'target'"),
        ("references: [b, '']\n", 5, "references item 2 is not a link: an empty string"),
        ("references:\n  - true\n", 6, "references item 1 is not a link: true or false"),
        ("references: {a: b}\n", 5, "references must be a list of links, got a mapping"),
    ],
)
def test_a_frontmatter_link_that_is_no_link_is_reported_at_its_line(
    tmp_path: Path, frontmatter: str, line: int, message: str
):
    entry = f"---\ntitle: A\ntype: note\ntags: [t]\n{frontmatter}---\n[[b]]\n"
    kb = write_kb(tmp_path / "kb", "name: k\n", {"a.md": entry, "b.md": "---\ntitle: B\ntype: note\n---\n[[a]]\n"})
    found = issues_of(run_kblint("validate", str(kb), "--format", "json").json, "invalid_field")
    assert [(i["line"], i["message"]) for i in found] == [(line, message)]


@pytest.mark.parametrize("links", ["[b, 7, {target: b}, {to: b}, 'k:b']", "''", "{}", "[]", "[2024-01-02]"])
def test_links_that_are_links_or_none_are_not_reported(tmp_path: Path, links: str):
    entry = f"---\ntitle: A\ntype: note\nlinks: {links}\nreferences: b\n---\n"
    day = "---\ntitle: The day\ntype: note\n---\n[[a]]\n"  # a date read as YAML's names this entry
    files = {"a.md": entry, "b.md": "---\ntitle: B\ntype: note\n---\n[[a]]\n", "2024-01-02.md": day}
    report = run_kblint("validate", str(write_kb(tmp_path / "kb", "name: k\n", files)), "--format", "json").json
    assert issues_of(report, "invalid_field") == []
    assert [i["message"] for i in issues_of(report, "broken_link")] == (
        ["Link target '7' not found"] if "7" in links else []
    )


@pytest.mark.parametrize("text", ["{a: 1}\n", "not a list\n", "links: {source: a}\n"])
def test_a_cross_kb_links_file_that_lists_no_links_is_a_config_error(tmp_path: Path, text: str):
    kb = write_kb(tmp_path / "kb", "name: kb\n", {"a.md": "---\ntitle: A\n---\nBody.\n"})
    (kb / "cross-kb-links.yaml").write_text(text, encoding="utf-8")
    report = run_kblint("validate", "kb", "--format", "json", "--no-cache", cwd=tmp_path).json
    assert [(i["path"], i["message"]) for i in issues_of(report, "config_error")] == [
        ("kb/cross-kb-links.yaml", "cross-kb-links.yaml must be a list of links (or hold one under 'links')")
    ]


def test_html_comments_hide_links_headings_and_words(tmp_path: Path):
    """What a renderer does not show is not read: links, headings and words inside `<!-- -->` (but
    a `<!--` in code opens no comment, and `<!-->` is a whole comment, as CommonMark has them)."""
    body = (
        "See [[b]].\n\n<!-- TODO link [[zz]] and\n## Sources\nmany more words here -->\n\n"
        "`<!--` [[yy]] `-->`\n<!-->[[qq]]\n<!-- never closed [[ww]]\n## Notes\n"
    )
    kb = write_kb(
        tmp_path / "k",
        "name: k\nevaluation_rubric:\n  - {text: S, checker: body_has_section, params: {heading: Sources}}\n"
        "  - {text: W, checker: body_min_words, params: {min: 8}}\n",
        {
            "a.md": f"---\ntitle: A\ntype: note\ntags: [a, b]\n---\n{body}",
            "b.md": "---\ntitle: B\ntype: note\n---\n[[a]]\n",
        },
    )
    report = run_kblint("validate", str(kb), "--format", "json").json
    assert [(i["line"], i["message"]) for i in issues_of(report, "broken_link")] == [
        (12, "Link target 'yy' not found"),
        (13, "Link target 'qq' not found"),
    ]
    checked = {i["checker"] for i in issues_of(report, "rubric_violation") if i["entry_id"] == "a"}
    assert {"body_has_section", "body_min_words"} <= checked  # the section and the words are in comments


def test_a_cross_kb_link_is_reported_at_its_target_and_an_unknown_source_at_its_source(workspace: Path):
    (workspace / "alpha" / "cross-kb-links.yaml").write_text(
        "links:\n  - source: hub\n    target: not-there\n    target_kb: beta\n"
        "  - relation: related\n    target: far\n    target_kb: delta\n    source: hub\n"
        "  - target: remote-entry\n    source: no-such-entry\n    target_kb: beta\n",
        encoding="utf-8",
    )
    report = run_kblint("validate", str(workspace / "alpha"), str(workspace / "beta"), "--format", "json").json
    found = [(i["rule"], i["line"]) for i in report["issues"] if i["path"].endswith("cross-kb-links.yaml")]
    assert found == [("broken_link", 3), ("unresolved_external", 6), ("broken_link", 10)]


@pytest.mark.parametrize(
    ("body", "headings", "links"),
    [
        ("## Sources <!-- todo -->\nx", ["Sources"], []),  # the comment is not the heading's text
        ("<!--\n```\ncode\n```\n## Sources\n-->\n## Real", ["Real"], []),  # a fence inside a comment
        ("a <!-- never closed\n## Kept\n[[link]]", ["Kept"], ["link"]),  # text: it opens no line
        ("<!-- never closed\n## Hidden\n[[link]]", [], []),  # an HTML block: to the end
        # inline, a comment ends in its paragraph: a later `-->` (a prose arrow) does not close it
        ("It opens with <!-- and [[gone]].\n\n## Sources\n\ndraft --> review [[x]]", ["Sources"], ["gone", "x"]),
        ("## Intro <!-- \n## Sources\n[[t]]\n-->", ["Intro <!--", "Sources"], ["t"]),  # a heading is one line
        ("a <!-- over\ntwo lines --> [[t]]", [], ["t"]),  # within its paragraph it may span lines
    ],
)
def test_what_an_html_comment_hides(body: str, headings: list[str], links: list[str]):
    from kblint.model.entry import build_entry, parse
    from kblint.model.kbschema import default_schema

    raw = parse(f"---\ntitle: A\n---\n{body}\n".encode())
    assert isinstance(raw, RawEntry)
    entry, _ = build_entry(raw, default_schema("/kb"), "/kb/a.md", "a.md")
    assert ([h.text for h in entry.headings], [link.target for link in entry.links]) == (headings, links)


def test_checkers_do_not_read_what_a_comment_hides(tmp_path: Path):
    """cites_source and body_has_code_block see what a reader sees: a commented-out TODO under
    Sources, a commented-out `Source:` line or fence, are not there."""
    kb_yaml = (
        "name: k\nevaluation_rubric:\n  - {text: S, checker: cites_source}\n"
        "  - {text: C, checker: body_has_code_block}\n"
    )
    fm = "---\ntitle: {}\ntype: note\ntags: [a, b]\n---\n"
    kb = write_kb(
        tmp_path / "k",
        kb_yaml,
        {
            "a.md": fm.format("A") + "Text [[b]].\n\n## Sources\n<!-- TODO: find one -->\n",
            "b.md": fm.format("B") + "Text [[a]].\n<!--\nSource: to be found\n```sh\nmake\n```\n-->\n",
            "c.md": fm.format("C") + "Text [[a]].\n\nSource: the minutes\n\n```sh\nmake\n```\n",
        },
    )
    report = run_kblint("validate", str(kb), "--format", "json", "--fail-on", "never").json
    failed = sorted((i["entry_id"], i["checker"]) for i in issues_of(report, "rubric_violation"))
    assert failed == [
        ("a", "body_has_code_block"),
        ("a", "cites_source"),
        ("b", "body_has_code_block"),
        ("b", "cites_source"),
    ]
