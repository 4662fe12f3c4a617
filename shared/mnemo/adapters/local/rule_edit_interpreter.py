"""The local `EditInterpreter`: a fixed grammar of edit phrases, English plus the German lifecycle phrases
of seed 002 ("als erledigt markieren", "archivieren", "wieder öffnen"). No model, fully deterministic.

A request is applied only when the grammar covers **all** of it: every clause must match one phrase
from start to end (a word search would read "The standup is done on Mondays" as "done"). Compound
requests ("replace daily with weekly and mark complete") become several operations; negations,
references to part of the text ("the second sentence") and anything else are refused with the
supported forms listed (`HELP`).
"""

from __future__ import annotations

import re
from functools import cache

from mnemo.domain.edits import AppendText, DeleteSpan, EditOperation, EditPlan, ReplaceSpan, SetStatus, SetText
from mnemo.domain.models import Status

HELP = (
    "understood: 'mark complete' / 'done' / 'als erledigt markieren'; 'archive' / 'not relevant' / "
    "'archivieren' / 'nicht relevant'; 'reopen' / 'wieder öffnen'; 'replace <old> with <new>' "
    "(or 'replace every <old> with <new>'; 'ersetze <alt> durch <neu>'); 'delete \"<exact words>\"'; "
    "'append: <text>'; 'set the text to: <new text>' / 'update it to say <new text>'; several joined by "
    "'and' / 'then'. Or pass raw_text to replace the whole text"
)
MAX_CLAUSES = 4

_REF = (r"(?:it|this|that|this one|this thought|the thought|this memory|the memory|this note|the note|"
        r"this task|the task|this item)")
_GREF = (r"(?:es|das|ihn|den thought|diesen thought|den gedanken|diesen gedanken|die notiz|diese notiz|"
         r"den eintrag|diesen eintrag|die aufgabe|diese aufgabe)")
_Q = r"[\"'“”‘’„`«»]?"
_IS = rf"(?:{_REF} is|it's|its|that's|this's)"
_DONE = r"(?:complete|completed|done|finished|resolved)"
_OPEN = (r"(?:open|active|pending|to-?do|not done|undone|incomplete|not complete|not completed|not finished|"
         r"unfinished)")
_IRRELEVANT = r"(?:archived|irrelevant|obsolete|outdated|not relevant|no longer relevant)"

_STATUS_PHRASES: dict[Status, list[str]] = {
    Status.COMPLETED: [
        rf"(?:mark|set|flag)(?: {_REF})?(?: as)? {_DONE}",
        rf"(?:complete|finish|resolve|close)(?: {_REF})?",
        rf"{_IS} (?:now )?{_DONE}",
        _DONE,
        rf"check(?: {_REF})? off",
        rf"(?:{_GREF} )?(?:als )?(?:erledigt|abgeschlossen|fertig)(?: markieren| setzen)?",
        rf"(?:{_GREF} )?(?:abschließen|erledigen)",
        rf"markiere(?: {_GREF})? als (?:erledigt|abgeschlossen|fertig)",
        r"(?:das|es) ist (?:jetzt )?erledigt",
    ],
    Status.ARCHIVED: [
        rf"archive(?: {_REF})?",
        rf"(?:mark|set|flag)(?: {_REF})?(?: as)? {_IRRELEVANT}",
        rf"(?:{_IS} )?(?:no longer|not) relevant(?: anymore| any more)?",
        rf"{_IS} (?:now )?(?:irrelevant|obsolete|outdated)",
        rf"(?:delete|remove|discard) {_REF}",
        rf"(?:{_GREF} )?archivieren",
        rf"archiviere(?: {_GREF})?",
        rf"(?:{_GREF} )?(?:ist )?nicht (?:mehr )?relevant",
        rf"(?:{_GREF} )?als nicht (?:mehr )?relevant markieren",
    ],
    Status.OPEN: [
        rf"(?:re-?open|un-?archive|restore|reactivate)(?: {_REF})?",
        rf"(?:mark|set|flag)(?: {_REF})?(?: as)? {_OPEN}",
        r"undo (?:the )?(?:completion|archiving|archive)",
        rf"(?:{_GREF} )?wieder (?:öffnen|eröffnen|aufmachen)",
        rf"öffne(?: {_GREF})? wieder",
        rf"(?:{_GREF} )?(?:als )?offen markieren",
        rf"(?:{_GREF} )?wiederherstellen",
    ],
}
_SET_TEXT = [
    rf"(?:set|change|update) (?:the )?(?:text|wording|content)(?: of {_REF})? to(?: say| read)?:? (?P<text>.+)",
    rf"(?:update|change|set|edit) {_REF} to (?:say|read):? (?P<text>.+)",
    rf"(?:rewrite|reword) {_REF} (?:as|to say|to read|to):? (?P<text>.+)",
    r"(?:make|have) (?:it|this) (?:say|read):? (?P<text>.+)",
    rf"(?:{_REF}|the text) should (?:say|read):? (?P<text>.+)",
    rf"(?:replace|overwrite) (?:the )?(?:whole |entire )?(?:text|{_REF}) with:? (?P<text>.+)",
]
_REPLACE = [
    rf"(?:replace|change|substitute|swap|correct)(?P<every> every| all| all occurrences of)? {_Q}(?P<old>.+?){_Q} "
    rf"(?:with|to|by|for|into) {_Q}(?P<new>.+?){_Q}",
    rf"ersetze(?P<every> alle| jedes| jede)? {_Q}(?P<old>.+?){_Q} durch {_Q}(?P<new>.+?){_Q}",
    rf"{_Q}(?P<old>.+?){_Q} durch {_Q}(?P<new>.+?){_Q} ersetzen",
]
_APPEND = [
    r"(?:append|add)(?: to (?:it|this|the end|the text))?\s*[:–-]\s*(?P<text>.+)",
    r"append (?P<text>.+)",
    r"add [\"“‘'](?P<text>.+)[\"”’'](?: at the end| to the end| to it)?",
    r"(?:füge hinzu|anhängen|ergänze)\s*:\s*(?P<text>.+)",
]
_DELETE = [
    rf"(?:delete|remove|drop|strike|cut)(?: the (?:word|words|phrase|text|part))? {_Q}(?P<text>.+?){_Q}"
    rf"(?: from (?:it|this|the text|the thought))?",
    rf"(?:lösche|entferne|streiche) {_Q}(?P<text>.+?){_Q}",
]
_CONNECTOR = re.compile(r",?\s+and then\s+|,?\s+and\s+|,?\s+then\s+|\s*;\s*|,\s+|\s+und(?: dann)?\s+|,?\s+also\s+",
                        re.IGNORECASE)
_FILLER = re.compile(r"^(?:(?:please|pls|kindly|just|now|also|bitte|can you|could you|would you|go ahead and)[,\s]+)+",
                     re.IGNORECASE)
_TRAILER = re.compile(r"(?:[,\s]+(?:please|thanks|thank you|bitte|danke|now))+$", re.IGNORECASE)
_PARTIAL = re.compile(
    r"\b(?:the )?(?:first|second|third|fourth|fifth|last|next|previous|other|\d+(?:st|nd|rd|th)) "
    r"(?:sentence|line|word|paragraph|part|item|bullet|point|half|clause)s?\b"
    r"|\b(?:erste|zweite|dritte|letzte)[nrs]? (?:satz|zeile|teil|wort|absatz)\b",
    re.IGNORECASE,
)
_VAGUE_REWRITE = re.compile(rf"^(?:please )?(?:change|update|set|make|turn) {_REF} (?:to|into) ", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:don'?t|do not|doesn'?t|never|not|nicht|kein|keine|nie)\b", re.IGNORECASE)


def _compile(patterns: list[str]) -> list[re.Pattern[str]]:
    return [re.compile(rf"^{p}$", re.IGNORECASE | re.DOTALL) for p in patterns]


_STATUS = [(status, _compile(patterns)) for status, patterns in _STATUS_PHRASES.items()]
_REF_ONLY = re.compile(rf"^{_REF}$", re.IGNORECASE)
_TEXT_FORMS = [(kind, _compile(patterns)) for kind, patterns in
               (("set", _SET_TEXT), ("replace", _REPLACE), ("append", _APPEND), ("delete", _DELETE))]


def _unquote(text: str) -> str:
    return text.strip().strip("\"'“”‘’„`«»").strip()


def _text_clause(clause: str, bare: str) -> EditOperation | None:
    """`clause` keeps its final punctuation (new text keeps its full stop); `bare` does not (a span to
    find in the text must not end with the request's own full stop)."""
    for kind, patterns in _TEXT_FORMS:
        subject = clause if kind in ("set", "append") else bare
        match = next((m for p in patterns if (m := p.match(subject))), None)
        if match is None:
            continue
        if kind == "set":
            return SetText(_unquote(match["text"]))
        if kind == "append":
            return AppendText(_unquote(match["text"]))
        span = _unquote(match["old" if kind == "replace" else "text"])
        if _REF_ONLY.match(span):
            continue  # "change it to X", "remove this": not a span of the text
        if kind == "replace":
            return ReplaceSpan(span, _unquote(match["new"]), every=bool(match.groupdict().get("every")))
        return DeleteSpan(span)
    return None


def _clause(raw: str) -> EditOperation | None:
    clause = _TRAILER.sub("", _FILLER.sub("", raw.strip())).strip()
    bare = clause.rstrip(".!").strip()
    if not bare:
        return None
    for status, patterns in _STATUS:
        if any(p.match(bare) for p in patterns):
            return SetStatus(status)
    op = _text_clause(clause, bare)
    if op is not None and not any(getattr(op, name, None) == "" for name in ("text", "old")):
        return op
    return None


class RuleEditInterpreter:
    """Deterministic phrase grammar; see the module docstring. `help` is what the tool description lists."""

    help = HELP

    def interpret(self, request: str, text: str) -> EditPlan:
        request = " ".join(request.split())
        partial = _PARTIAL.search(request)
        if partial and partial.group(0).casefold() not in text.casefold():
            return EditPlan.refuse(_positional(partial.group(0)))
        ops = _parse(request)
        if ops is not None:
            return EditPlan(operations=ops)
        return EditPlan.refuse(self._why(request, text))

    @staticmethod
    def _why(request: str, text: str) -> str:
        if _VAGUE_REWRITE.match(request):
            return ("'change it to ...' could mean the whole text or one word; say 'set the text to: <new text>' "
                    "or 'replace <old words> with <new words>'")
        if _NEGATION.search(request):
            return "the request contains a negation, which this interpreter does not apply; say only what to do"
        return "the request is not in a form this interpreter understands"


def _positional(reference: str) -> str:
    return (f"{reference!r} refers to part of the text by position; quote the exact words to change instead "
            "(delete \"<words>\", replace <words> with <new words>)")


def _parse(request: str) -> tuple[EditOperation, ...] | None:
    """The operations of `request` if every part of it is one understood clause, else None. A split
    at a connector is preferred when both sides parse (so 'replace daily with weekly and mark
    complete' is two operations), and the whole request is tried as one clause otherwise (so 'replace
    salt and pepper with herbs' stays one)."""

    @cache
    def parse(part: str, depth: int) -> tuple[EditOperation, ...] | None:
        if depth < MAX_CLAUSES:
            for connector in _CONNECTOR.finditer(part):
                left = _clause(part[: connector.start()])
                rest = parse(part[connector.end():], depth + 1) if left is not None else None
                if left is not None and rest is not None:
                    return (left, *rest)
        single = _clause(part)
        return (single,) if single is not None else None

    return parse(request.strip(), 1)

