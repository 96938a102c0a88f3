"""The core checkers of SPEC §5.2: one function each; the docstring is the documentation.

A checker is called as `checker(entry, params, context)` and returns None when the entry passes,
or the message of the violation.
"""

from __future__ import annotations

import re

from .. import userpattern
from ..model.entry import is_empty
from ..model.markdown import in_spans
from .base import CheckContext, Checker, EntrySubject, GraphSubject, Param, Params

_NON_DESCRIPTIVE = frozenset(
    ["update", "notes", "todo", "untitled", "new entry", "draft", "temp", "test", "placeholder", "wip"]
)


def descriptive_title(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """Title says what the entry is about.

    Fails when the title (stripped, case-folded) is one of: update, notes, todo, untitled,
    new entry, draft, temp, test, placeholder, wip.

    Passes:

        ---
        title: OODA loop
        ---

    Fails:

        ---
        title: Untitled
        ---
    """
    stripped = (entry.title or "").strip()
    if stripped.casefold() in _NON_DESCRIPTIVE:
        return f"Title '{stripped}' is not descriptive"
    return None


def has_tags(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """Entry has at least `min` tags (default 1).

    `tags` may be a list or a single string (one tag); a tag given twice counts once.

    Passes:

        ---
        tags: [strategy, doctrine]
        ---

    Fails:

        ---
        tags: []
        ---
    """
    need = params.get("min", 1)
    if len(entry.tags) < need:
        if not entry.tags:
            return f"Entry '{entry.id}' has no tags" + (f" (needs {need})" if need > 1 else "")
        return f"Entry '{entry.id}' has {len(entry.tags)} tag{'s' if len(entry.tags) != 1 else ''}, needs {need}"
    return None


def _is_stub(entry: EntrySubject) -> bool:
    status = entry.metadata.get("research_status")
    return (
        (isinstance(status, str) and status.strip().casefold() == "stub")
        or (entry.status or "").strip().casefold() == "stub"
        or "stub" in (t.casefold() for t in entry.tags)
    )


def has_outlinks(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """Entry links to at least `min` other entries (default 1), unless it is a stub.

    Counts distinct link targets of every kind (frontmatter links, references, wikilinks,
    markdown links, cross-KB links); broken and external links count, a link to itself does not.
    A stub (`research_status: stub`, `status: stub`, or a `stub` tag) passes.

    Passes:

        ---
        title: Example
        ---
        See [[another-entry]].

    Fails:

        ---
        title: Example
        ---
        No link at all.
    """
    need = params.get("min", 1)
    if _is_stub(entry):
        return None
    count = entry.outlink_count
    if count < need:
        if count == 0:
            return f"Entry '{entry.id}' links to no other entry"
        return f"Entry '{entry.id}' links to {count} entr{'y' if count == 1 else 'ies'}, needs {need}"
    return None


def has_inlinks(entry: GraphSubject, params: Params, context: CheckContext) -> str | None:
    """At least `min` entries of the workspace link to this one (default 1).

    Runs after the graph pass: incoming links are counted over every KB in the run.

    Passes:

        ==> example.md <==
        ---
        title: Example
        ---
        ==> other.md <==
        ---
        title: Other
        ---
        See [[example]].

    Fails:

        ---
        title: Example
        ---
    """
    need = params.get("min", 1)
    count = len((context.inlinks or {}).get(entry.path, ()))
    if count < need:
        if count == 0:
            return f"No entry links to '{entry.id}'"
        return f"{count} entr{'y links' if count == 1 else 'ies link'} to '{entry.id}', needs {need}"
    return None


def status_present(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """Entry has a `status`.

    Passes:

        ---
        status: draft
        ---

    Fails:

        ---
        status: ""
        ---
    """
    if is_empty(entry.status):
        return f"Entry '{entry.id}' has no status"
    return None


def priority_present(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """Entry has a `priority`.

    Passes:

        ---
        priority: high
        ---

    Fails:

        ---
        title: Example
        ---
    """
    if is_empty(entry.metadata.get("priority")):
        return f"Entry '{entry.id}' has no priority"
    return None


def has_field(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """The metadata field `field` is present and not empty.

    Missing, null, an empty string and an empty list all fail. Fields of a nested `metadata:`
    mapping count.

    Passes (field: role):

        ---
        role: Chair of the committee
        ---

    Fails (field: role):

        ---
        role: ""
        ---
    """
    name = params["field"]
    if is_empty(entry.metadata.get(name)):
        return f"Entry '{entry.id}' has no '{name}'"
    return None


def has_any_field(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """At least one of the metadata fields `fields` is present and not empty.

    Passes (fields: [url, author]):

        ---
        author: J. Smith
        ---

    Fails (fields: [url, author]):

        ---
        title: Example
        ---
    """
    names = params["fields"]
    if all(is_empty(entry.metadata.get(name)) for name in names):
        return f"Entry '{entry.id}' has none of: {', '.join(names)}"
    return None


SECTION_LEVEL = 2  # a section is a `## heading`


def _norm_heading(text: str) -> str:
    return text.strip().rstrip(":").strip().casefold()


def body_has_section(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """The body has a level-2 heading `## heading` (case-insensitive, a trailing colon ignored).

    Passes (heading: Sources):

        ---
        title: Example
        ---
        ## Sources

    Fails (heading: Sources):

        ---
        title: Example
        ---
        ### Sources
    """
    if has_section(entry, params["heading"]):
        return None
    return f"Entry '{entry.id}' has no '## {params['heading']}' section"


def has_section(entry: EntrySubject, heading: str) -> bool:
    """Whether the body has the level-2 heading `## HEADING` (as body_has_section compares them)."""
    want = _norm_heading(heading)
    return any(level == SECTION_LEVEL and _norm_heading(text) == want for level, text, _ in entry.headings)


def body_has_heading(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """The body has a heading with the text `heading`, at `level` if given (any level otherwise).

    Passes (heading: Timeline, level: 3):

        ---
        title: Example
        ---
        ### Timeline

    Fails (heading: Timeline, level: 3):

        ---
        title: Example
        ---
        ## Timeline
    """
    want = _norm_heading(params["heading"])
    level = params.get("level")
    if any(_norm_heading(text) == want and (level is None or lvl == level) for lvl, text, _ in entry.headings):
        return None
    where = f"level-{level} " if level is not None else ""
    return f"Entry '{entry.id}' has no {where}heading '{params['heading']}'"


def body_has_pattern(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """The body matches the regular expression `pattern` (multiline, case-insensitive).

    Passes (pattern: "^source:"):

        ---
        title: Example
        ---
        Source: council minutes

    Fails (pattern: "^source:"):

        ---
        title: Example
        ---
        The council minutes say so.
    """
    if userpattern.search(params["pattern"], entry.body, userpattern.MULTILINE_IGNORECASE):
        return None
    return f"Entry '{entry.id}' body does not match /{params['pattern']}/"


def body_has_code_block(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """The body has a fenced code block (``` or ~~~), outside HTML comments.

    Passes:

        ---
        title: Example
        ---
        ```python
        print("hello")
        ```

    Fails:

        ---
        title: Example
        ---
        Only inline `code`.
    """
    comments = entry.comments
    if any(not in_spans(start, comments) for start, _ in entry.fences):  # a fence in a comment is hidden
        return None
    return f"Entry '{entry.id}' has no fenced code block"


def body_min_words(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """The body has at least `min` words (whitespace-separated, code and HTML comments not counted).

    Passes (min: 5):

        ---
        title: Example
        ---
        One two three four five.

    Fails (min: 5):

        ---
        title: Example
        ---
        Too short.
    """
    need = params["min"]
    count = entry.words_up_to(need)
    if count < need:
        return f"Entry '{entry.id}' body has {count} word{'s' if count != 1 else ''}, needs {need}"
    return None


# "Source: text", or "Sources:" with the list starting on the next line: matched at the start of the
# body, and searched for after a newline (a leading literal lets the regex engine skip ahead, where
# `^` with re.MULTILINE would try every position of the body).
_SOURCE_LINE = r"[ \t]*sources?:[ \t]*(?:[^\s]|\n[ \t]*[^\s#])"
_SOURCE_FIRST_LINE_RE = re.compile(_SOURCE_LINE, re.IGNORECASE)
_SOURCE_LATER_LINE_RE = re.compile("\n" + _SOURCE_LINE, re.IGNORECASE)


def _section_has_content(entry: EntrySubject, names: set[str]) -> bool:
    lines: list[str] = []  # the body's, split once a heading is one of NAMES
    first = entry.raw.body_line
    heads = entry.headings
    for i, (level, text, line) in enumerate(heads):
        if _norm_heading(text) not in names:
            continue
        lines = lines or entry.uncommented.split("\n")
        end = len(lines)
        for later_level, _, later_line in heads[i + 1 :]:
            if later_level <= level:
                end = later_line - first
                break
        if any(part.strip() for part in lines[line - first + 1 : end]):
            return True
    return False


def cites_source(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """Entry cites a source: a source field, a sources section with content, or a `Source:` line.

    Passes when any of `fields` (default sources, source, source_url, url, references) is
    present, or a heading named one of `sections` (default Sources, References, Source,
    Bibliography) has content under it, or a line starts with `Source:` or `Sources:` (any case)
    followed by text. What an HTML comment holds does not count.

    Passes:

        ---
        title: Example
        ---
        ## Sources
        - Coram, *Boyd* (2002)

    Fails:

        ---
        title: Example
        ---
        ## Sources
    """
    fields = params.get("fields") or ["sources", "source", "source_url", "url", "references"]
    if any(not is_empty(entry.metadata.get(name)) for name in fields):
        return None
    body = entry.uncommented
    if _SOURCE_FIRST_LINE_RE.match(body) or _SOURCE_LATER_LINE_RE.search(body):
        return None
    sections = {
        _norm_heading(s) for s in (params.get("sections") or ["Sources", "References", "Source", "Bibliography"])
    }
    if _section_has_content(entry, sections):
        return None
    return f"Entry '{entry.id}' cites no source"


def not_oversized(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """A backlog item sized XL or XXL is broken down into subtasks.

    Fails when `effort` is XL or XXL (any case) and the entry has no link with relation
    `has_subtask`.

    Passes:

        ---
        effort: XL
        links: [{target: part-1, relation: has_subtask}]
        ---

    Fails:

        ---
        effort: XL
        ---
    """
    effort = entry.metadata.get("effort")
    oversized = isinstance(effort, str) and effort.strip().upper() in ("XL", "XXL")
    if oversized and not any(link.relation == "has_subtask" for link in entry.links):
        return f"Entry '{entry.id}' has effort {str(effort).strip()} but no has_subtask link: break it down"
    return None


_CLOSED = frozenset(["done", "retired", "wont_do", "deferred"])


def orphan_backlog_item(entry: EntrySubject, params: Params, context: CheckContext) -> str | None:
    """An open backlog item belongs to a larger item through a `subtask_of` link.

    Applies to open items: `kind` is not epic and `status` is not done, retired, wont_do or
    deferred. Such an item fails when it has no link with relation `subtask_of`.

    Passes:

        ---
        kind: task
        links: [{target: epic-1, relation: subtask_of}]
        ---

    Fails:

        ---
        kind: task
        status: open
        ---
    """
    kind = entry.metadata.get("kind")
    if isinstance(kind, str) and kind.strip().casefold() == "epic":
        return None
    if (entry.status or "").strip().casefold() in _CLOSED:
        return None
    if any(link.relation == "subtask_of" for link in entry.links):
        return None
    return f"Open backlog item '{entry.id}' has no subtask_of link"


_MIN = Param("min", "int", default=1, help="the minimum count", minimum=0)

CHECKERS = (
    Checker("descriptive_title", descriptive_title, field="title"),
    Checker("has_tags", has_tags, (_MIN,), field="tags"),
    Checker("has_outlinks", has_outlinks, (_MIN,)),
    Checker("has_inlinks", has_inlinks, (_MIN,), needs_graph=True),
    Checker("status_present", status_present, field="status"),
    Checker("priority_present", priority_present, field="priority"),
    Checker(
        "has_field", has_field, (Param("field", "str", required=True, help="the field name"),), field="param:field"
    ),
    Checker("has_any_field", has_any_field, (Param("fields", "str_list", required=True, help="field names"),)),
    Checker("body_has_section", body_has_section, (Param("heading", "str", required=True),)),
    Checker("body_has_heading", body_has_heading, (Param("heading", "str", required=True), Param("level", "int"))),
    Checker("body_has_pattern", body_has_pattern, (Param("pattern", "regex", required=True),)),
    Checker("body_has_code_block", body_has_code_block),
    Checker("body_min_words", body_min_words, (Param("min", "int", required=True, minimum=0),)),
    Checker("cites_source", cites_source, (Param("fields", "str_list"), Param("sections", "str_list"))),
    Checker("not_oversized", not_oversized, field="effort"),
    Checker("orphan_backlog_item", orphan_backlog_item),
)
