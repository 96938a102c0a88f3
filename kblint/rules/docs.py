"""The documentation of each rule as data: what triggers it, how to fix it, and an example KB that
triggers it and one that does not. `kblint explain` prints it, `docs/rules.md` is generated from it,
reports quote the fix, and the tests run every example through `kblint validate`.

An example is a small KB: its files by path (kb.yaml among them), the extra `kblint validate`
arguments it needs, and for the judgment rules what the LLM judge answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import RULES


@dataclass(frozen=True, slots=True)
class JudgeReply:
    """What the LLM judge answers for every rubric item of an example: a verdict (pass, fail,
    uncertain) with a confidence, or nothing at all when the server is not `reachable`."""

    verdict: str = "pass"
    confidence: float = 0.95
    reachable: bool = True
    level: str | None = None  # what it answers for a graded item, such as a pair of entries

    def describe(self) -> str:
        if not self.reachable:
            return "Nothing answers at the --llm-base-url."
        if self.level is not None:
            return f"The judge classifies each pair of alike entries as {self.level}."
        return f"The judge answers {self.verdict} for each rubric item, with confidence {self.confidence}."


@dataclass(frozen=True, slots=True)
class Example:
    """A KB of a few files, linted with `kblint validate` and the extra ARGS (and with an LLM judge
    when the example says what it answers)."""

    files: Mapping[str, str]
    args: tuple[str, ...] = ()
    judge: JudgeReply | None = None

    def command(self) -> str:
        """The command line, run in the KB's directory."""
        judge = ("--llm", "openai:MODEL", "--llm-base-url", "URL") if self.judge is not None else ()
        return " ".join(("kblint", "validate", *judge, *self.args))


# Where a rule's issues are, which decides how they can be suppressed.
ENTRY = "entry"  # in an entry: every form of suppression
FILE = "file"  # in a file that is no entry (it could not be read): by path or by name
KB = "kb"  # on kb.yaml, about the KB or the run: by name, or by the path kb.yaml
SUPPRESSION = "suppression"  # about a suppression: to be corrected rather than hidden


@dataclass(frozen=True, slots=True)
class RuleDoc:
    """The documentation page of one rule."""

    name: str
    triggers: str  # what makes kblint report it
    fix: str  # how to fix it: short and imperative
    bad: Example  # an example that triggers it
    good: Example  # an example that does not
    scope: str = ENTRY  # ENTRY, FILE, KB or SUPPRESSION
    notes: tuple[str, ...] = field(default=())


_NOTES_YAML = "name: notes\n"
_FINDINGS_YAML = """\
name: harbor
types:
  finding:
    subdirectory: findings
    required: [title, date, confidence]
    fields:
      date: {type: date}
      confidence: {type: select, values: [low, medium, high]}
    workflow:
      states: [draft, review, confirmed]
"""


def _finding(frontmatter: str, body: str = "The council signed the harbor contract in May.\n") -> str:
    return f"---\ntitle: Council signed the harbor contract\ntype: finding\n{frontmatter}---\n{body}"


_GOOD_FINDING = _finding("date: 2024-05-14\nconfidence: high\nstatus: review\n")

_LINKED_STEMS = {
    "harbor-contract": "---\ntitle: Harbor contract\ntags: [harbor]\n---\nSigned in May; see [[council]].\n",
    "council": "---\ntitle: City council\ntags: [harbor]\n---\nIt signed the [[harbor-contract]].\n",
}

_ORPHAN = "---\ntitle: Harbor contract\ntags: [harbor]\n---\nSigned in May.\n"

_TAGS_YAML = """\
name: notes
evaluation_rubric:
  - text: "Entry has at least two tags"
    checker: has_tags
    params: {min: 2}
"""
_TWO_TAGS = {stem: text.replace("tags: [harbor]", "tags: [harbor, council]") for stem, text in _LINKED_STEMS.items()}

_SLOW_YAML = """\
name: notes
evaluation_rubric:
  - text: "Body gives the file reference of the minutes, such as Ref: Minutes-2024"
    checker: body_has_pattern
    params: {{pattern: '{pattern}'}}
"""
_SLOW_BODY = (
    "---\ntitle: Harbor contract\ntags: [harbor]\n---\nSigned in May.\n\nRef: HarborContractCouncilMinutes2024\n"
)
_FAST_LIMITS = "[limits]\nregex_timeout = 0.05\n"

_JUDGED_YAML = """\
name: harbor
evaluation_rubric:
  - "Entry says how sure we are of what it states, and why"
"""


def _judged(body: str, verdict: str = "pass", confidence: float = 0.95, reachable: bool = True) -> Example:
    """An example judged by an LLM that gives every item VERDICT with CONFIDENCE."""
    entry = f"---\ntitle: Harbor contract\ntags: [harbor]\n---\n{body} See [[council]].\n"
    files = {"kb.yaml": _JUDGED_YAML, "notes/harbor-contract.md": entry, "notes/council.md": _LINKED_STEMS["council"]}
    return Example(files, judge=JudgeReply(verdict, confidence, reachable))


_SURE = "The council signed the contract on 14 May: we are sure, the signed minutes are public."
_UNSTATED = "The council signed the contract on 14 May."
_VAGUE = "The council may have signed the contract, perhaps in May; some say so."


_CONTRACT = "---\ntitle: Harbor contract\ntags: [harbor]\n---\nThe council signed the contract on 14 May.{see}"
_CONTRACT_AGAIN = "---\ntitle: Harbor contract\ntags: [harbor]\n---\nThe council signed the contract in May.{see}"
_CONTRACT_DRAFT = "---\ntitle: Harbor contract, first draft\ntags: [harbor]\n---\nA first draft went out in March.{see}"


def _pair(second: str, level: str | None = None) -> Example:
    """Two entries of a KB (the second one SECOND), and a judge that classifies a pair as LEVEL."""
    files = _notes(
        contract=_CONTRACT.format(see=" See [[second]].\n"), second=second.format(see=" See [[contract]].\n")
    )
    return Example(files, judge=JudgeReply(level=level) if level else None)


def _notes(**entries: str) -> dict[str, str]:
    """A KB named notes with ENTRIES under notes/ (by file stem)."""
    return {"kb.yaml": _NOTES_YAML, **{f"notes/{stem}.md": text for stem, text in entries.items()}}


def _findings(path: str, text: str) -> dict[str, str]:
    return {"kb.yaml": _FINDINGS_YAML, path: text}


_EXPLAINS = '"Entry explains why the contract matters"'


def _rubric_yaml(*items: str) -> str:
    """kb.yaml of a KB named notes with the rubric ITEMS (YAML scalars)."""
    return "name: notes\nevaluation_rubric:\n" + "".join(f"  - {item}\n" for item in items)


def _graded_yaml(threshold: float, top: float) -> str:
    """A KB whose one judge-graded item, of weight 3, scores TOP at its best level."""
    return (
        f"name: notes\npass_threshold: {threshold}\nevaluation_rubric:\n"
        '  - text: "Entry explains why the contract matters"\n'
        "    weight: 3\n"
        "    levels:\n"
        "      - {id: missing, score: 0}\n"
        "      - {id: partial, score: 0.5}\n"
        f"      - {{id: clear, score: {top}}}\n"
    )


def _levels_yaml(top: float) -> str:
    return _graded_yaml(0.5, top).replace("pass_threshold: 0.5\n", "")


_DATE_ITEM = '    evaluation_rubric:\n      - "Finding has a date"\n'
_DATE_BOUND = '{text: "Finding has a date", covered_by: schema, field: date}'

_GATE_ITEM = '    evaluation_rubric:\n      - "status review->confirmed requires metadata.confidence required"\n'

_BY_ITEM = (
    "In an entry's suppressions, name the rubric item's `id` instead of the rule to hide that item's issues only."
)
_BY_CHECKER = (
    "To hide one checker's or one item's issues only, name the checker (`has_tags`) instead of the rule, "
    "or in an entry's suppressions the rubric item's `id`."
)

_DOCS = [
    RuleDoc(
        "parse_error",
        "A file that should be an entry cannot be read as one: it has no `---` frontmatter fences or "
        "the closing fence is missing, the frontmatter is not valid YAML or not a mapping, the file "
        "is empty, or it is not valid UTF-8. The issue gives the line of the problem; the file is "
        "not checked any further.",
        "Fix the frontmatter at the line given: close the `---` fence, quote values that contain "
        "`:` or `[`, and save the file as UTF-8.",
        Example(_notes(a="---\ntitle: Harbor contract\ntags: [harbor, council\n---\nSigned in May.\n")),
        Example(_notes(a="---\ntitle: Harbor contract\ntags: [harbor, council]\n---\nSigned in May.\n")),
        scope=FILE,
    ),
    RuleDoc(
        "duplicate_id",
        "Two or more entries of one KB have the same id (the `id` field, or the file stem when "
        "there is none). Each of them is reported, naming the others (five of them, and how many "
        "more), since a link to that id cannot say which one it means.",
        "Give each entry a unique `id` (or rename one of the files), and update the links to it.",
        Example(
            _notes(
                a="---\nid: harbor-contract\ntitle: Harbor contract\n---\nSigned in May.\n",
                b="---\nid: harbor-contract\ntitle: Harbor contract, second draft\n---\nSigned in June.\n",
            )
        ),
        Example(
            _notes(
                a="---\nid: harbor-contract\ntitle: Harbor contract\n---\nSigned in May.\n",
                b="---\nid: harbor-contract-draft\ntitle: Harbor contract, second draft\n---\nSigned in June.\n",
            )
        ),
    ),
    RuleDoc(
        "duplicate_key",
        "A key is given twice in one mapping of the frontmatter (at the top, or inside a nested "
        "mapping such as `metadata:`). YAML keeps the last value and drops the earlier one without a "
        "word, so an edit to the first occurrence changes nothing. The issue is on the later "
        "occurrence and names the line of the first. (The same in `kb.yaml` or "
        "`cross-kb-links.yaml` is a `config_error` warning.)",
        "Keep one occurrence of the key, with the value meant, and delete the other.",
        Example(_notes(a="---\ntitle: Harbor contract\nstatus: draft\nstatus: signed\n---\nSigned in May.\n")),
        Example(_notes(a="---\ntitle: Harbor contract\nstatus: signed\n---\nSigned in May.\n")),
    ),
    RuleDoc(
        "missing_title",
        "The frontmatter has no `title`, or it is empty or only whitespace.",
        "Add a `title:` to the frontmatter that says what the entry is about.",
        Example(_notes(a="---\ntype: note\n---\nThe council signed the harbor contract in May.\n")),
        Example(_notes(a="---\ntype: note\ntitle: Harbor contract\n---\nThe council signed it in May.\n")),
    ),
    RuleDoc(
        "empty_body",
        "The entry has nothing (or only whitespace) after its frontmatter. Collection and "
        "relationship entries, which may be metadata only, are exempt.",
        "Write the entry's body, or delete the entry if it has nothing to say.",
        Example(_notes(a="---\ntitle: Harbor contract\n---\n")),
        Example(_notes(a="---\ntitle: Harbor contract\n---\nThe council signed it in May.\n")),
    ),
    RuleDoc(
        "missing_type",
        "The frontmatter has no `type`, and the entry is not in the subdirectory of any type, so "
        "kblint cannot tell its type and checks it as a `note`.",
        "Add a `type:` to the frontmatter, or move the entry into its type's subdirectory.",
        Example({"kb.yaml": _NOTES_YAML, "harbor.md": "---\ntitle: Harbor contract\n---\nSigned in May.\n"}),
        Example(
            {"kb.yaml": _NOTES_YAML, "harbor.md": "---\ntitle: Harbor contract\ntype: note\n---\nSigned in May.\n"}
        ),
    ),
    RuleDoc(
        "unknown_type",
        "The entry's `type` is not declared under `types:` in kb.yaml, is not one of the core types "
        "(note, person, organization, event, document, topic, relationship, timeline, collection) "
        "and comes from no plugin. It is an error when kb.yaml sets `validation.enforce: true`.",
        "Use a declared type, or declare the type under `types:` in kb.yaml.",
        Example(_findings("findings/harbor.md", _GOOD_FINDING.replace("type: finding", "type: findng"))),
        Example(_findings("findings/harbor.md", _GOOD_FINDING)),
    ),
    RuleDoc(
        "subdirectory_mismatch",
        "The entry's type declares a `subdirectory` in kb.yaml and the entry is not under it.",
        "Move the entry into its type's subdirectory, or correct its `type`.",
        Example(_findings("notes/harbor.md", _GOOD_FINDING)),
        Example(_findings("findings/harbor.md", _GOOD_FINDING)),
    ),
    RuleDoc(
        "missing_required",
        "A field that the entry's type lists as `required` in kb.yaml is missing, null or empty.",
        "Fill in the required field, or remove it from the type's `required` list if it is not.",
        Example(_findings("findings/harbor.md", _finding("confidence: high\n"))),
        Example(_findings("findings/harbor.md", _GOOD_FINDING)),
    ),
    RuleDoc(
        "invalid_field",
        "A value does not fit its field's declaration in kb.yaml: its type (number, list, select "
        "values, object-ref, ...), a range, a pattern, or a `validation.rules` item. It is an "
        "error when kb.yaml sets `validation.enforce: true`. A `links:` or `references:` item that "
        "is no link (a mapping without a `target`, a list, `true`, an empty string) is one too, always a "
        "warning: that link is not counted; so are `tags` or `aliases` that are no list of names, a `status` "
        "that is a list or a mapping, and a `title` YAML reads as true or false (an unquoted `No`).",
        "Change the value to one the field allows (the message says which), or widen the field's declaration.",
        Example(_findings("findings/harbor.md", _finding("date: 2024-05-14\nconfidence: certain\n"))),
        Example(_findings("findings/harbor.md", _GOOD_FINDING)),
    ),
    RuleDoc(
        "invalid_date",
        "A `date` field, a field of type date, or a value under a `format: ISO8601` rule is not a "
        "real calendar date (`2024-02-30`, `14/05/2024`, `May`).",
        "Write the date as a real ISO 8601 date: `YYYY-MM-DD`.",
        Example(_findings("findings/harbor.md", _finding("date: 2024-02-30\nconfidence: high\n"))),
        Example(_findings("findings/harbor.md", _GOOD_FINDING)),
    ),
    RuleDoc(
        "unknown_field",
        "The frontmatter has a key that the entry's type does not declare, when the type lists its "
        "fields in kb.yaml: often a misspelt field name.",
        "Correct the key's spelling, or declare the field in the type's `fields:` (or `optional:`).",
        Example(
            _findings(
                "findings/harbor.md", _GOOD_FINDING.replace("confidence: high", "confidence: high\nconfidance: high")
            )
        ),
        Example(_findings("findings/harbor.md", _GOOD_FINDING)),
    ),
    RuleDoc(
        "invalid_status",
        "The entry's `status` is not one of its type's `workflow.states` in kb.yaml.",
        "Use one of the workflow's states, or add the state to `workflow.states`.",
        Example(_findings("findings/harbor.md", _finding("date: 2024-05-14\nconfidence: high\nstatus: done\n"))),
        Example(_findings("findings/harbor.md", _GOOD_FINDING)),
    ),
    RuleDoc(
        "broken_link",
        "A link (a body `[[wikilink]]` or markdown link, or a frontmatter `links:`, `references:` or "
        "object-ref value) names no entry of the workspace by id, file stem or alias, nor a file.",
        "Correct the link's target, or create the entry it points to.",
        Example(
            _notes(
                **{
                    **_LINKED_STEMS,
                    "council": _LINKED_STEMS["council"].replace("[[harbor-contract]]", "[[harbour-contract]]"),
                }
            )
        ),
        Example(_notes(**_LINKED_STEMS)),
    ),
    RuleDoc(
        "unresolved_external",
        "A link names another KB (`[[archive:old-contract]]`, `kb:` in `links:`) that is not loaded "
        "in this run, so kblint cannot tell whether its target exists.",
        "Lint the other KB in the same run (`kblint validate` on a directory that holds both), or "
        "correct the KB name if it is misspelt.",
        Example(
            _notes(**{**_LINKED_STEMS, "council": _LINKED_STEMS["council"] + "It replaced [[archive:old-contract]].\n"})
        ),
        Example(_notes(**_LINKED_STEMS)),
    ),
    RuleDoc(
        "noncanonical_link",
        "A link resolves, but by the target entry's file name, one of its aliases, or its id spelt in "
        "another case, not by its id (a link to a path, `[[dir/note]]` or a markdown link, names a "
        "file and is not reported). Such a link depends on a name that may change, and a search for "
        "the id does not find it.",
        "Link the entry by its id: `[[Harbor-Contract]]` becomes `[[harbor-contract]]`.",
        Example(
            _notes(
                **{
                    **_LINKED_STEMS,
                    "council": _LINKED_STEMS["council"].replace("[[harbor-contract]]", "[[Harbor-Contract]]"),
                }
            )
        ),
        Example(_notes(**_LINKED_STEMS)),
    ),
    RuleDoc(
        "orphan_entry",
        "No link leads into or out of the entry: nothing in the KB refers to it and it refers to nothing.",
        "Link the entry to the entries it relates to, or link to it from them.",
        Example(_notes(a=_ORPHAN)),
        Example(_notes(**_LINKED_STEMS)),
    ),
    RuleDoc(
        "possible_duplicate",
        'Two entries of one KB (of the workspace with `duplicates.scope = "workspace"`) and of one '
        "type have the same title or alias once case and punctuation are set aside, or two entries "
        "have bodies of at least "
        "`duplicates.min_words` words (50) whose 3-word shingles are `duplicates.threshold` (0.8) "
        "alike or more. Reported once per pair, on the newer-looking entry (an entry given to be "
        "added; else the later `created`, `date` or `updated`; else the later path), naming the "
        "other and the similarity. With an LLM (`--llm`) each pair is classified instead: "
        "duplicate_entry, conflicting_entries, or nothing when the two are unrelated.",
        "Merge the two entries into one and link to it, or make each entry's title and scope say how it differs.",
        _pair(_CONTRACT_AGAIN),
        _pair(_CONTRACT_DRAFT),
        notes=(
            "Configure it in a `[duplicates]` table of kblint.toml (`enabled`, `threshold`, `min_words`, "
            '`scope`, `types`, `max_compare`); see the README\'s "Duplicates and conflicts".',
        ),
    ),
    RuleDoc(
        "rubric_violation",
        "An `evaluation_rubric` item of kb.yaml that is bound to a named checker or written as a "
        "policy fails on the entry (system items, such as having a tag, apply to every KB). The "
        "message says what was measured; the issue names the checker (`kblint explain CHECKER`).",
        "Change the entry so that it meets the rubric item the message quotes.",
        Example(_notes(**_LINKED_STEMS) | {"kb.yaml": _TAGS_YAML}),
        Example(_notes(**_TWO_TAGS) | {"kb.yaml": _TAGS_YAML}),
        notes=(_BY_CHECKER,),
    ),
    RuleDoc(
        "llm_rubric_violation",
        "The LLM judge (`--llm`) says the entry fails a rubric item that no checker, policy or "
        "schema enforces, with a confidence at or above `--llm-min-confidence` (0.7). The issue "
        "gives the judge's reason and confidence.",
        "Change the entry so that it meets the rubric item, as the judge's reason explains.",
        _judged(_UNSTATED, "fail", 0.9),
        _judged(_SURE),
        notes=(_BY_ITEM,),
    ),
    RuleDoc(
        "judgment_uncertain",
        "The LLM judge answers `uncertain` for a rubric item, or fails it with a confidence below "
        "`--llm-min-confidence` (0.7): it cannot say whether the entry meets the item.",
        "Make the entry state plainly what the rubric item asks for, or make the item's text more specific.",
        _judged(_VAGUE, "uncertain", 0.5),
        _judged(_SURE),
        notes=(_BY_ITEM,),
    ),
    RuleDoc(
        "judgment_error",
        "The judge's answer for a rubric item cannot be used, even after asking again once: the "
        "item is missing from the answer, the answer is not the JSON asked for, or its confidence "
        "is not a number from 0 to 1; or the request still failed (a server error, a timeout) after "
        "its retries; or the answer was cut by its output limit, also with twice the budget; or the "
        "server read only part of the prompt (Ollama says how much it read), or the prompt does not "
        "fit in the model's context and was not sent.",
        "Run again (only the items that erred are asked), or use a model that follows the answer format; "
        "for a cut answer raise `--llm-max-output`, for a prompt cut or too long raise `--llm-context` "
        "(up to the model's context) or shorten the entry.",
        _judged(_SURE, "pass", 1.5),
        _judged(_SURE),
        notes=(_BY_ITEM,),
    ),
    RuleDoc(
        "judgment_unavailable",
        "The LLM provider cannot be reached or keeps failing (six server errors or timeouts in a "
        "row): reported once per run, and the judgment items left are not evaluated. With "
        "`--llm-required` the run exits 2.",
        "Start the LLM server or correct `--llm-base-url`, `--llm` and the API key in the environment.",
        _judged(_SURE, reachable=False),
        _judged(_SURE),
        scope=KB,
    ),
    RuleDoc(
        "duplicate_entry",
        "The LLM judge classified a pair of alike entries (see possible_duplicate) as duplicates: "
        "both make the same claim at the same scope, so the newer entry adds nothing. Reported on "
        "the newer entry, naming the existing one, with the judge's reason; a judge below "
        "`--llm-min-confidence` makes the pair a conflict instead, never a duplicate.",
        "Drop the newer entry and link to the existing one, or merge what it adds into that entry.",
        _pair(_CONTRACT_AGAIN, "duplicate"),
        _pair(_CONTRACT_AGAIN, "unrelated"),
    ),
    RuleDoc(
        "conflicting_entries",
        "The LLM judge classified a pair of alike entries as conflicting: the same subject and scope, "
        "with conclusions that differ. The pair goes to the curation queue (the JSON report's "
        '`curation` block, the text report\'s "needs curation"), for a human to decide.',
        "Read both entries, decide which conclusion holds, and correct or retire the other.",
        _pair(_CONTRACT_AGAIN, "conflict"),
        _pair(_CONTRACT_AGAIN, "unrelated"),
    ),
    RuleDoc(
        "score_below_threshold",
        "kb.yaml sets `pass_threshold` and the entry's score, the weighted share of its rubric "
        "items that pass, is below it.",
        "Fix the entry's rubric issues until its score reaches `pass_threshold`.",
        Example(
            _notes(a="---\ntitle: Harbor contract\n---\nSigned in May.\n")
            | {"kb.yaml": "name: notes\npass_threshold: 0.8\n"}
        ),
        Example(_notes(**_LINKED_STEMS) | {"kb.yaml": "name: notes\npass_threshold: 0.8\n"}),
    ),
    RuleDoc(
        "checker_error",
        "A checker raised an exception on the entry, returned what is none of None, a message, an "
        "Issue or a list of those, or ran past its time limit (`plugin_timeout`, 10 s): a plugin's bug; "
        "or a regular expression from "
        "kb.yaml (`body_has_pattern`, a field `pattern`) ran past its time limit (`regex_timeout`, "
        "1 s): the item is not checked on that entry.",
        "Rewrite the pattern so that its alternatives cannot match the same text (not `([a-z]|\\w)+` "
        "but `\\w+`), or fix the plugin checker the message names.",
        Example(
            {
                "kb.yaml": _SLOW_YAML.format(pattern=r"^Ref: ([a-z]|\w)+-\d{4}$"),
                "kblint.toml": _FAST_LIMITS,
                "notes/a.md": _SLOW_BODY,
            }
        ),
        Example(
            {
                "kb.yaml": _SLOW_YAML.format(pattern=r"^Ref: \w+-\d{4}$"),
                "kblint.toml": _FAST_LIMITS,
                "notes/a.md": _SLOW_BODY,
            }
        ),
    ),
    RuleDoc(
        "config_error",
        "kb.yaml (or a file beside it) has a problem kblint can point at: an unknown checker, a "
        "missing or ill-typed param, an invalid regex, a misspelt key, a policy that does not parse, "
        "or a `covered_by` claim the schema does not back. The rubric item shows as `[broken]` in "
        "`kblint checkers --kb DIR` and is not run.",
        "Correct kb.yaml at the line given (`kblint checkers` lists the checkers and their params).",
        Example(_notes(**_TWO_TAGS) | {"kb.yaml": _TAGS_YAML.replace("has_tags", "has_tag")}),
        Example(_notes(**_TWO_TAGS) | {"kb.yaml": _TAGS_YAML}),
        scope=KB,
    ),
    RuleDoc(
        "unused_suppression",
        "A suppression in an entry (`kblint: {disable: [...]}` or a `kblint-disable` comment) names "
        "a rule, checker or rubric item that ran on the entry and found nothing to suppress: the "
        "suppression is stale and would hide a future issue.",
        "Remove the name from the suppression (or the whole suppression).",
        Example(
            _notes(**{**_LINKED_STEMS, "council": _LINKED_STEMS["council"] + "<!-- kblint-disable orphan_entry -->\n"})
        ),
        Example(_notes(**_LINKED_STEMS)),
        scope=SUPPRESSION,
    ),
    RuleDoc(
        "invalid_suppression",
        "A suppression in an entry that kblint cannot read: a comment `<!-- kblint-... -->` with an "
        "unknown directive, a `kblint-disable` or `kblint-disable-next-line` that names nothing, a "
        "`kblint-enable NAME` with no `kblint-disable NAME` above it, a frontmatter `kblint:` that is "
        "not `{disable: [...]}`, or a name that is no rule, checker or rubric item id. (An unknown "
        "name in `per_file_ignores` or `--ignore` stops the run instead, with exit code 2.)",
        "Correct the directive or the name (`kblint explain` lists the rules and checkers).",
        Example(_notes(a=_ORPHAN + "<!-- kblint-disable orphan-entry -->\n")),
        Example(_notes(a=_ORPHAN + "<!-- kblint-disable orphan_entry -->\n")),
        scope=SUPPRESSION,
    ),
    RuleDoc(
        "rubric_duplicate_item",
        "Two rubric items of one scope (the KB's items, or one type's) say the same thing: their texts "
        "are equal, or nearly equal, once case, punctuation and stop words (`the`, `has`, `entry`, ...) "
        "are set aside, with the same numbers, operators and negations (and, when both have one, the "
        "same `to`, `from`, `by`, `for` or `into`). The later item is reported, naming the line of the earlier "
        "one. Items of a KB restricted by `applies_to` to different types are not compared, nor two "
        "items bound differently (other policies, checkers or params).",
        "Delete one of the two items, or reword it if it means something else.",
        Example(_notes(**_LINKED_STEMS) | {"kb.yaml": _rubric_yaml(_EXPLAINS, _EXPLAINS.replace("Entry", "Entries"))}),
        Example(
            _notes(**_LINKED_STEMS) | {"kb.yaml": _rubric_yaml(_EXPLAINS, '"Entry says where its facts come from"')}
        ),
        scope=KB,
    ),
    RuleDoc(
        "rubric_threshold_unreachable",
        "`pass_threshold` is above the best score an entry of some type can get, so every entry of "
        "that type is reported whatever it says. An entry's score is the weighted mean of its scored "
        "items (checker, policy and judgment items; `covered_by: schema` items are not scored); the "
        "best score takes each graded item at its top level, which may score below 1. A type's own "
        "`pass_threshold` is checked against that type.",
        "Lower `pass_threshold` to a score entries can reach, or give the top level of a graded item "
        "the score 1 (or a smaller `weight`).",
        Example(_notes(**_LINKED_STEMS) | {"kb.yaml": _graded_yaml(0.9, 0.6)}),
        Example(_notes(**_LINKED_STEMS) | {"kb.yaml": _graded_yaml(0.9, 1)}),
        scope=KB,
    ),
    RuleDoc(
        "rubric_threshold_trivial",
        "`pass_threshold` is 0, or at or below the worst score any entry can get (every scored item at "
        "its lowest level, or failed), so no entry can fall below it and the threshold checks nothing.",
        "Raise `pass_threshold` to the score an entry must reach, or remove it.",
        Example(_notes(**_LINKED_STEMS) | {"kb.yaml": "name: notes\npass_threshold: 0\n"}),
        Example(_notes(**_LINKED_STEMS) | {"kb.yaml": "name: notes\npass_threshold: 0.8\n"}),
        scope=KB,
    ),
    RuleDoc(
        "rubric_levels_unordered",
        "The `levels:` of a graded rubric item are written lowest first, and a level scores less than "
        "the one before it. kblint cannot tell which level is better: the item is `[broken]` in "
        "`kblint checkers --kb DIR` and is not run.",
        "Order the levels from the lowest score to the highest (or correct the score that is wrong).",
        Example(_notes(**_LINKED_STEMS) | {"kb.yaml": _levels_yaml(0.4)}),
        Example(_notes(**_LINKED_STEMS) | {"kb.yaml": _levels_yaml(1)}),
        scope=KB,
    ),
    RuleDoc(
        "rubric_unknown_name",
        "A rubric item names a field (`metadata.FIELD` in a policy, the field a checker such as "
        "`has_field` reads) that no type the item applies to declares, or a status gate names a status "
        "that is in no such type's `workflow.states`: most likely a misspelling, and the item then "
        "fails on every entry, or its gate never applies. Only types that list their fields (or have "
        "a workflow) are asked; the warning suggests the declared name nearest to the one written.",
        "Correct the name, or declare the field (`fields:`, `optional:`) or the status in the type.",
        Example(
            _findings("findings/harbor.md", _GOOD_FINDING)
            | {"kb.yaml": _FINDINGS_YAML + _GATE_ITEM.replace("confirmed", "confimred")}
        ),
        Example(_findings("findings/harbor.md", _GOOD_FINDING) | {"kb.yaml": _FINDINGS_YAML + _GATE_ITEM}),
        scope=KB,
    ),
    RuleDoc(
        "rubric_restates_schema",
        "A judgment item (a plain string) only restates that a field is required (`Finding has a "
        "date` when type finding requires `date`): the schema already checks it, and without an LLM "
        "the item is never evaluated. The matching is `kblint migrate`'s.",
        "Bind the item to the schema: `{text: ..., covered_by: schema, field: date}` (`kblint migrate` writes it).",
        Example(_findings("findings/harbor.md", _GOOD_FINDING) | {"kb.yaml": _FINDINGS_YAML + _DATE_ITEM}),
        Example(
            _findings("findings/harbor.md", _GOOD_FINDING)
            | {"kb.yaml": _FINDINGS_YAML + _DATE_ITEM.replace('"Finding has a date"', _DATE_BOUND)}
        ),
        scope=KB,
    ),
    RuleDoc(
        "rubric_policy_typo",
        "A rubric string does not start as a policy does (`tags count`, `links.NAME`, `metadata.F`, "
        "`status A -> B`, ..., in lower case), but its first words are close to a policy's and it has "
        "the shape of one: `tags cont >= 2`, `tag count >= 2`, `Tags count >= 2`, `Status draft -> "
        "review requires ...`. It would silently have become a judgment item; instead it is `[broken]` "
        "and not run, and the issue shows where the parser stopped (a caret) and the policy meant, "
        "when a corrected expression parses. Prose that merely contains `>` or `->` is not affected.",
        "Write the policy as the message suggests (`kblint explain policy` gives the grammar), or "
        "reword the item as a sentence if a judge should evaluate it.",
        Example(_notes(**_TWO_TAGS) | {"kb.yaml": _rubric_yaml('"tags cont >= 2"')}),
        Example(_notes(**_TWO_TAGS) | {"kb.yaml": _rubric_yaml('"tags count >= 2"')}),
        scope=KB,
    ),
]

RULE_DOCS: dict[str, RuleDoc] = {doc.name: doc for doc in _DOCS}

TIER_DOCS = {
    "structure": "Each file is read as an entry (frontmatter and body) and checked for what every entry "
    "needs: a title, a body, a type, a unique id; then the links of the whole workspace are resolved.",
    "schema": "Each entry is checked against its type in kb.yaml: required fields, field types, select "
    "values, ranges, patterns, dates, `validation.rules`, workflow states and subdirectories; and "
    "against the JSON Schema of each `json_schema` rubric item (`kblint explain json_schema`), whose "
    "errors are rubric_violations of tier schema.",
    "checker": "The rubric items of kb.yaml bound to a named checker (`kblint checkers`) run on each "
    "entry; a failing item is a rubric_violation that names its checker.",
    "policy": "The rubric items written as policies (`tags count >= 2`, status gates) are measured on "
    "each entry; a failing policy is a rubric_violation of tier policy that says what it measured.",
    "judgment": "The rubric items no checker, policy or schema enforces are asked of an LLM judge "
    "(`--llm`), one request per entry; without an LLM they are counted as not evaluated.",
    "score": "Each entry's score is the weighted mean of the scores of its rubric items with an outcome "
    "(a graded item's level score, 1 for a pass, 0 for a fail; `kblint explain levels`); with "
    "`pass_threshold` in kb.yaml (or under a type), entries below it are reported.",
    "config": "kb.yaml, the configuration and the suppressions in entries are checked themselves.",
    "rubric": "The rubric of kb.yaml is linted itself: items of one scope that say the same thing, a "
    "`pass_threshold` no entry can reach or every entry meets, graded levels whose scores go down, "
    "judgment items that only restate a required field, and strings that look like a policy but do not "
    "parse (broken, never silently judged). Reported on kb.yaml at the item's line, and listed under "
    "`rubric findings:` by `kblint checkers --kb DIR`.",
}

_MORE_IN_TIER = {"policy": ("rubric_violation",)}  # a policy's violation is a rubric_violation of tier policy


def tier_rules(tier: str) -> list[str]:
    """The rules whose issues belong to TIER."""
    return [name for name, rule in RULES.items() if rule.tier == tier or name in _MORE_IN_TIER.get(tier, ())]


def suppression_forms(doc: RuleDoc) -> list[str]:
    """How the issues of a rule can be hidden, one sentence each."""
    name = doc.name
    by_path = (
        f'`per_file_ignores = {{"drafts/**" = ["{name}"]}}` in kblint.toml (or `[tool.kblint]` in '
        "pyproject.toml): in the files that match, relative to the KB."
    )
    everywhere = f'`--ignore {name}` on the command line (or `ignore = ["{name}"]` in the configuration): everywhere.'
    if doc.scope == KB:
        by_path = by_path.replace("drafts/**", "kb.yaml")
        head = ["It is reported on kb.yaml, not in an entry, so no suppression in an entry can hide it."]
        return [*head, by_path, everywhere, *doc.notes]
    if doc.scope == FILE:
        head = ["The file cannot be read, so a suppression written in it is not seen either."]
        return [*head, by_path, everywhere, *doc.notes]
    if doc.scope == SUPPRESSION:
        head = ["Correct the suppression rather than hide this issue; if you must hide it:"]
        return [*head, by_path, everywhere, *doc.notes]
    in_entry = [
        f"`kblint: {{disable: [{name}]}}` in the entry's frontmatter, or `<!-- kblint-disable {name} -->` "
        "alone in its body: the whole entry.",
        f"`<!-- kblint-disable-next-line {name} -->`: the line after the comment.",
        f"`<!-- kblint-disable {name} -->` … `<!-- kblint-enable {name} -->`: the lines between.",
    ]
    return [*in_entry, by_path, everywhere, *doc.notes]
