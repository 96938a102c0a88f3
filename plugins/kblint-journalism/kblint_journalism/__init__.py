"""An example kblint plugin for investigative journalism KBs.

kblint finds it through the `kblint.plugins` entry point declared in pyproject.toml; the object
`plugin` carries the checkers (namespaced `journalism.*`), a `claim` type with its rubric, and the
`kb_type` values the type applies to.
"""

from __future__ import annotations

_ANONYMOUS = {"anonymous", "unnamed", "unnamed source", "confidential source", "background"}


def named_sources(entry, params, context):
    """The entry's `sources` name at least `min` on-the-record sources (default 1).

    A source counts when it is not empty and not anonymous ("anonymous", "unnamed",
    "unnamed source", "confidential source", "background").

    Passes:

        ---
        sources: [council-minutes-2025-03, "Interview with the harbor master"]
        ---

    Fails:

        ---
        sources: [anonymous]
        ---
    """
    need = params.get("min", 1)
    sources = entry.metadata.get("sources") or []
    if isinstance(sources, str):
        sources = [sources]
    named = [s for s in sources if str(s).strip() and str(s).strip().casefold() not in _ANONYMOUS]
    if len(named) < need:
        return (
            f"Entry '{entry.id}' names {len(named)} on-the-record source{'s' if len(named) != 1 else ''}, needs {need}"
        )
    return None


named_sources.params = {"min": {"type": "int", "default": 1, "help": "the minimum number of named sources"}}
named_sources.field = "sources"


def corroborated(entry, params, context):
    """At least `min` entries of the given `types` link to this entry (default 2 documents).

    Runs after kblint's graph pass: it reads the incoming links of the whole workspace.

    Passes (min: 2):

        ==> example.md <==
        ---
        title: Harbor fees doubled
        ---
        ==> minutes.md <==
        ---
        type: document
        ---
        Confirms [[example]].
        ==> letter.md <==
        ---
        type: document
        ---
        Also confirms [[example]].

    Fails (min: 2):

        ==> example.md <==
        ---
        title: Harbor fees doubled
        ---
        ==> minutes.md <==
        ---
        type: document
        ---
        Confirms [[example]].
    """
    need = params.get("min", 2)
    types = set(params.get("types") or ["document"])
    graph = context.graph
    sources = context.inlinks.get(entry.path, ()) if context.inlinks else ()
    count = sum(1 for path in sources if (facts := graph.entry_at(path)) is not None and facts.type in types)
    if count < need:
        return f"Claim '{entry.id}' is corroborated by {count} of the {need} {'/'.join(sorted(types))} entries it needs"
    return None


corroborated.params = {"min": {"type": "int", "default": 2}, "types": {"type": "str_list"}}
corroborated.needs_graph = True


class _Plugin:
    checkers = {
        "journalism.named_sources": named_sources,
        "journalism.corroborated": corroborated,
    }
    types = {
        "claim": {
            "description": "A factual claim the investigation makes, with its evidence",
            "subdirectory": "claims",
            "required": ["title", "sources"],
            "fields": {
                "sources": {"type": "list"},
                "confidence": {"type": "select", "values": ["low", "medium", "high"]},
            },
            "ai_instructions": "State one checkable claim in the title; the body gives the evidence.",
            "rubric": [
                {"text": "Claim names at least one on-the-record source", "checker": "journalism.named_sources"},
                {
                    "text": "Claim is corroborated by two documents",
                    "checker": "journalism.corroborated",
                    "params": {"min": 2},
                },
                "Claim says what is not known",
            ],
        },
    }
    kb_types = ["journalism"]


plugin = _Plugin()
