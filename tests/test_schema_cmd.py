"""`kblint schema`: the intent an agent reads before writing an entry, and the gate after."""

from __future__ import annotations

from conftest import run_kblint


def test_schema_gives_types_fields_guidelines_and_bound_rubrics():
    result = run_kblint("schema", "fixtures/example")
    assert result.code == 0
    data = result.json
    assert data["kb"]["name"] == "harbor-investigation" and data["kb"]["path"] == "fixtures/example"
    assert set(data["guidelines"]) == {"sourcing", "cross_linking", "completeness", "voice"}  # system merged
    assert data["goals"]["primary"].startswith("Document who decided")
    finding = data["types"]["finding"]
    assert finding["required"] == ["title", "date", "confidence"]
    assert finding["fields"]["confidence"] == {"type": "select", "required": True, "values": ["low", "medium", "high"]}
    assert "sources" in finding["optional"] and finding["subdirectory"] == "findings"
    assert finding["ai_instructions"].startswith("State the finding")
    assert finding["workflow"]["states"] == ["draft", "review", "confirmed"]
    rubric = {item["text"]: item for item in finding["rubric"]}
    assert rubric["Finding has a Sources section"]["binding"] == "checker"
    assert rubric["Finding has a Sources section"]["params"] == {"heading": "Sources"}
    assert rubric["Findings name the people involved"]["policy"] == "links.person count >= 1"
    assert rubric["Finding states how confident we are and why"]["binding"] == "judgment"
    assert rubric["Entry body is non-empty"]["binding"] == "schema"
    assert "Findings name the people involved" not in {i["text"] for i in data["types"]["person"]["rubric"]}
    assert data["validation_rules"][0] == {"field": "importance", "range": [1, 10]}


def test_agent_loop_schema_then_gate_with_stdin():
    """What the README shows: read the intent, write a candidate, gate it before saving."""
    intent = run_kblint("schema", "fixtures/example").json
    finding = intent["types"]["finding"]
    draft = (
        "---\n"
        "title: The harbor master was told to stop inspections\n"
        f"type: finding\ndate: 2025-05-02\nconfidence: {finding['fields']['confidence']['values'][1]}\n"
        "tags: [inspections, harbor]\nstatus: draft\nsources: [inspector-interviews]\n"
        "links: [{target: mara-quist, relation: ordered_by}]\n"
        "---\n\nTwo inspectors describe the order given by [[mara-quist]].\n\n## Sources\n\n- Two interviews.\n"
    )
    gate = run_kblint(
        "validate",
        "--kb",
        "fixtures/example",
        "--stdin",
        "--stdin-path",
        "findings/inspections-stopped.md",
        "--format",
        "json",
        "--fail-on",
        "warning",
        input=draft.encode(),
    )
    assert gate.code == 0, gate.stdout
    assert gate.json["summary"]["files"] == 1 and gate.json["issues"] == []
    bad = run_kblint(
        "validate",
        "--kb",
        "fixtures/example",
        "--stdin",
        "--stdin-path",
        "findings/x.md",
        "--fail-on",
        "warning",
        input=b"---\ntitle: Notes\ntype: finding\n---\n",
    )
    assert bad.code == 1 and "missing_required" in bad.stdout and "descriptive_title" in bad.stdout


def test_schema_unknown_kb_is_exit_2(tmp_path):
    assert run_kblint("schema", "no-such-kb", cwd=tmp_path).code == 2
