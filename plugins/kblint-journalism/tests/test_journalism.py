"""The example plugin's own tests: its checkers, called as kblint calls them."""

from __future__ import annotations

from types import SimpleNamespace

from kblint_journalism import corroborated, named_sources, plugin


def entry(**metadata):
    return SimpleNamespace(id="c1", path="/kb/claims/c1.md", metadata=metadata)


def test_named_sources():
    assert named_sources(entry(sources=["minutes", "interview"]), {"min": 2}, None) is None
    assert (
        named_sources(entry(sources=["anonymous", " "]), {"min": 1}, None)
        == "Entry 'c1' names 0 on-the-record sources, needs 1"
    )
    assert named_sources(entry(sources="minutes"), {}, None) is None
    assert named_sources(entry(), {}, None) is not None


def test_corroborated_counts_inlinks_from_documents():
    facts = {
        "/kb/d1.md": SimpleNamespace(type="document"),
        "/kb/d2.md": SimpleNamespace(type="document"),
        "/kb/n.md": SimpleNamespace(type="note"),
    }
    graph = SimpleNamespace(entry_at=facts.get)
    context = SimpleNamespace(graph=graph, inlinks={"/kb/claims/c1.md": ["/kb/d1.md", "/kb/n.md"]})
    assert "corroborated by 1 of the 2" in corroborated(entry(), {"min": 2}, context)
    context.inlinks["/kb/claims/c1.md"].append("/kb/d2.md")
    assert corroborated(entry(), {"min": 2}, context) is None
    assert corroborated(entry(), {"min": 1, "types": ["note"]}, context) is None


def test_plugin_shape():
    assert set(plugin.checkers) == {"journalism.named_sources", "journalism.corroborated"}
    assert all(name.startswith("journalism.") for name in plugin.checkers)
    assert plugin.kb_types == ["journalism"]
    assert corroborated.needs_graph is True
