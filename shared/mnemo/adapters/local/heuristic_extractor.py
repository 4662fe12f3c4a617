"""Heuristic extractor: a deterministic, rule-based fallback for tier-2 extraction. It is not an LLM.

It turns one memory's text into an `Extraction` (category, entities, S-P-O facts, importance) using
regular expressions and short word lists only. It needs nothing beyond stdlib and pydantic, makes no
network calls, and always returns the same output for the same input. The rules are in docs/extraction.md.

Limits: it handles English only and relies on capitalisation. Lowercase names, all-caps text and a
one-word name that opens a sentence with no verb, "from" or "and <Name>" after it are missed. It has no gazetteer, so person, place and
organisation are guessed from local cues (a preposition, a suffix, a following verb): "I love Paris"
yields a *person*. Coreference and sarcasm: only the few rules of heuristic_facts.
Facts come from mnemo.adapters.local.heuristic_facts (surface patterns per clause). Use MNEMO_EXTRACTOR=bedrock for quality.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

from mnemo.adapters.local.heuristic_facts import MAX_FACTS, facts
from mnemo.adapters.local.heuristic_plausibility import RELATIONS
from mnemo.domain.extraction import Entity, Extraction
from mnemo.domain.models import normalize_text

__all__ = ["MAX_ENTITIES", "MAX_FACTS", "HeuristicExtractor"]

MAX_ENTITIES = 20
_SCAN_LIMIT = 16_384  # characters scanned for entities and facts; normalized_text itself is never cut


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


_REL = RELATIONS
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
          r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_DATE_SRC = (
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTH}(?:,? \d{{4}})?\b"
    rf"|\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?\b|\b{_MONTH} \d{{4}}\b"
    rf"|(?i:\b(?:(?:next|last|this|every) )?{_WEEKDAY}\b)"
    r"|(?i:\b(?:today|tonight|tomorrow|yesterday|(?:next|last|this) (?:week|weekend|month|year|morning|afternoon"
    r"|evening|night)|\d+ (?:days?|weeks?|months?|years?) ago|christmas|easter|thanksgiving|halloween)\b)"
    r"|(?i:\b\d{1,2}(?::[0-5]\d)? ?(?:am|pm|a\.m\.|p\.m\.)(?!\w)|\b(?:[01]?\d|2[0-3]):[0-5]\d\b)"
    r"|(?i:(?:(?<=\bin )|(?<=\bsince )|(?<=\bby )|(?<=\buntil ))(?:19|20)\d{2}\b)"
)
_DATE_RE = re.compile(_DATE_SRC)
_URL_RE = re.compile(r"\bhttps?://[^\s<>\"']+|\bwww\.[^\s<>\"']+|(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+")
_TOKEN_RE = re.compile(r"\w+(?:['’.\-]\w+)*")
_CAMEL_RE = re.compile(r"[a-z][A-Z]")
# What may follow a product's name: up to two Capitalised words ("OpenSearch Serverless"), a version, a model tier.
_PRODUCT_TAIL_RE = re.compile(r"(?: (?!(?:I|The|A|An|And|Or|In|On|At|To|For)\b)[A-Z][a-z]+\b){0,2}"
                              r"(?: \d+(?:\.\d+)*\b(?! ?(?:am|pm|%)))?(?: (?:Pro|Max|Plus|Ultra|Mini)\b)?")
_ORG_TAIL_RE = re.compile(r"(?: (?i:inc|ltd|llc|plc|corp|gmbh)\b)?")
_NAME_HEAD_RE = re.compile(r"[A-Z][\w'’&.-]*(?: (?:of |de |the )?[A-Z][\w'’&.-]*)*")
_PREV_WORDS_RE = re.compile(r"[\w'’]+")
_NEXT_WORD_RE = re.compile(r"\s*([\w'’]+)")
_NAME_AFTER_CUE_RE = re.compile(r" (?!(?:I|The|A|An|My|Our|Your|His|Her|Their)\b)[A-Z][a-z]")
_SPEAKER_RE = re.compile(r"^([^\W\d_][\w'’-]*(?: [^\W\d_][\w'’-]*){0,2}):\s")

_HONORIFICS = _words("mr mrs ms miss dr prof sir dame")
_ORG_SUFFIX = _words("inc ltd llc plc corp corporation company co gmbh university college bank group institute "
                     "foundation labs agency hospital school academy association society council ministry department")
_PLACE_SUFFIX = _words("city town street st avenue ave road rd boulevard park lake river mountain mountains beach "
                       "island islands county valley bay square airport station bridge village state province")
_PLACE_PREFIX = _words("lake mount mt fort port cape")
_PLACE_PREPS = _words("in at from near around across into")
_MOTION = _words("go goes going went gone moved move moving flew fly flying drove drive travelled traveled trip way "
                 "back came come coming relocated relocating headed heading return returned")
_WORK = _words("work works worked working job intern interning employed")
_VERBS = _words("is was are were has had have works worked lives lived said says told asked went goes moved likes "
                "loves prefers hates wants wanted thinks thought met called started joined got gets visited will "
                "would can could did does made makes gave took bought sent wrote loved liked graduated became founded "
                "runs knows know relocated moves joins visits meets married marries starts left leaves studied owns "
                "leads manages teaches taught")
_OPENER_CUES = _words("from and with")  # "Alice Johnson from Acme ...", "Priya and Tom ..."
_JOIN = _words("joined join joins joining")
_ORG_ROLES = _words("ceo cto cfo coo founder cofounder co-founder president director head chair member employee")
_VISIT = _words("visited visit visits visiting")
_STOP = _words("i i'm i've i'll i'd the a an this that these those my our your his her their its we you he she they "
               "it me us them what when where why how who which if but and or so also then there here yes no not hi "
               "hey hello thanks thank ok okay oh well just please maybe perhaps sure great good nice wow lol yeah "
               "dear happy merry congrats remember todo note notes idea ideas decision task reminder update fyi "
               "important question answer summary context warning tip meeting agenda action status re ps docs doc "
               "link reference see in at on from to for of by with about after before during since until as today "
               "tonight tomorrow yesterday january february march april may june july august september october "
               "november december english french spanish german italian chinese japanese korean american british "
               "european asian african christian muslim jewish internet god phd")
_ACRONYM_DROP = _words("OK AM PM TODO FYI ASAP ETA TBD TBA FAQ NB PS RE FW AKA LOL OMG BTW IMO IMHO TBH TL DR IT UTC "
                       "GMT EST PST CET BST EOD")
_ACRONYM_OTHER = _words("AI ML LLM API SDK SQL HTTP HTTPS URL JSON YAML CSV PDF HTML CSS CEO CTO CFO COO VP HR PR QA "
                        "UI UX MBA LGBT LGBTQ DIY GPS TV PC MRI DNA ID ADHD PTSD ICU ER")
_ACRONYM_PLACE = _words("US USA UK EU UAE NYC LA SF")
_TECH = _words("python javascript typescript kubernetes docker postgres postgresql mysql sqlite redis linux ubuntu "
               "android macbook github gitlab terraform lambda bedrock pytorch tensorflow numpy pandas chatgpt claude "
               "gemini slack notion figma jira confluence excel windows react django flask fastapi rust golang java "
               "swift kotlin opensearch")


class _Rule(NamedTuple):
    category: str
    pattern: re.Pattern[str]
    needs_entities: bool  # the rule also needs at least one entity or fact
    why: str


def _rx(src: str) -> re.Pattern[str]:
    return re.compile(src, re.IGNORECASE)


# Ordered; the first rule that matches wins. Explicit intent (decision, task, idea) beats topical cues.
_RULES = tuple(_Rule(c, _rx(src), needs, why) for c, needs, why, src in (
    ("decision", False, "a commitment already made",
     (r"\b(?:decided|decision:|we(?:'ll| will| are going to) go with|chose|chosen|opted (?:for|to)|settled on"
      r"|agreed (?:to|on)|final call)")),
    ("task", False, "something still to be done: a todo, an obligation or an imperative",
     (r"^(?:todo|to-do|task|action item|reminder)\b|\b(?:todo|need to|needs to|have to|has to|(?:i|we|you) must"
      r"|remind me|remember to|don't forget|do not forget|deadline|due (?:by|on|date)|follow up)\b|^(?:please )?"
      r"(?:buy|call|email|send|renew|book|schedule|fix|finish|write|review|pick up|check|update|submit|pay|clean"
      r"|prepare|cancel|order|reply|sign|register|install|make sure)\b")),
    ("idea", False, "a possibility, not a plan",
     (r"^idea\b|\b(?:what if|idea:|maybe we (?:could|should)|how about|we could try|brainstorm"
      r"|it would be (?:cool|nice|great) (?:if|to)|wouldn't it be)")),
    ("reference", False, "points elsewhere: a URL or documentation",
     (r"https?://|\bwww\.|\b(?:docs? (?:are |is )?(?:at|here)|see (?:the |our )?(?:docs|documentation|link|wiki"
      r"|readme|page|paper|article)|link:|refer to|reference:|documented (?:at|in))")),
    ("preference", False, "first-person taste",
     (r"\b(?:i|we) (?:really |much |also |(?:do|really)(?:n't| not) )?(?:prefer|like|love|hate|enjoy|dislike|adore"
      r"|can't stand|cannot stand)\b|\bfavou?rite\b|\bmy go-to\b|\bi'd rather\b")),
    ("person", False, "describes who someone is",
     (rf"\bis my {_REL}\b|\bmy {_REL}(?:'s| is| was| has| loves| likes| works| lives)\b|['’]s {_REL} (?:is|was)\b"
      r"|\b(?:is|was) named\b|\bworks (?:at|as|for)\b|\blives in\b|\bwas born\b")),
    ("event", False, "a dated or datable happening",
     r"\b(?:went to|met (?:with )?|visited|attended|meeting|meetup|appointment|conference|party|wedding|birthday"
     r"|concert|trip|flight|standups?|interview|dinner|lunch|ceremony|graduat(?:ed|ion)|happened|took place)\b|"
     + _DATE_SRC),
    ("fact", True, "a declarative (not a question) about named things", r"^(?!.*\?\s*$)"),
))  # no rule matched: "note"

# importance = 0.3 + category weight + 0.1 dated/deadline + 0.15 emphasis + 0.05 has facts + min(0.1, words/300)
_CATEGORY_WEIGHT = {"task": 0.2, "decision": 0.2, "preference": 0.15, "person": 0.1, "event": 0.1,
                    "fact": 0.05, "idea": 0.05, "reference": 0.05, "note": 0.0}
_EMPHASIS_RE = _rx(r"\b(?:important|remember|always|never|critical|urgent|crucial|must|don't forget|asap)\b")
_DEADLINE_RE = _rx(r"\b(?:deadline|due|overdue)\b")


def _key(word: str) -> str:
    return word.replace("’", "'").casefold()


def _strip_possessive(word: str) -> str:
    return word[:-2] if len(word) > 2 and word[-2:] in ("'s", "’s") else word


def _is_cap(word: str) -> bool:
    base = _strip_possessive(word)
    return (base[0].isupper() and (any(c.islower() for c in base[1:]) or _key(base) in _ORG_SUFFIX)
            and not any(c.isdigit() for c in base) and _key(base) not in _STOP)


def _token_kind(word: str, shouting: bool) -> str | None:
    """Kind of a single token that stands on its own: acronym, version-bearing or CamelCase product, known tech."""
    base = _strip_possessive(word)
    if _key(base) in _ORG_SUFFIX:
        return None  # "LLC" only counts as part of a name
    if base.isupper() and base.isalpha() and 2 <= len(base) <= 6:
        if shouting or base in _ACRONYM_DROP:
            return None
        return "place" if base in _ACRONYM_PLACE else "other" if base in _ACRONYM_OTHER else "organization"
    if base[0].isalpha() and any(c.isdigit() for c in base) and any(c.isupper() for c in base):
        return "product"  # S3, EC2, GPT-4
    if _key(base) in _STOP:
        return None
    if base[0].isupper() and base.casefold() in _TECH:
        return "product"
    if _CAMEL_RE.search(base) and not base.startswith("Mc"):
        return "product"  # iPhone, DynamoDB, GitHub
    return None


def _classify(text: str, start: int, end: int, words: list[str], possessive: bool) -> str | None:
    first, last = _key(words[0]).rstrip("."), _key(words[-1]).rstrip(".")
    if first in _HONORIFICS:
        return "person"
    if last in _ORG_SUFFIX or (first in ("university", "bank") and len(words) > 1):
        return "organization"
    if last in _PLACE_SUFFIX or (first in _PLACE_PREFIX and len(words) > 1):
        return "place"
    prev = [_key(w) for w in _PREV_WORDS_RE.findall(text[max(0, start - 40):start])[-3:]]
    if prev and prev[-1] == "the":
        prev.pop()
    p1, p2 = (prev[-1] if prev else ""), (prev[-2] if len(prev) > 1 else "")
    if (p1 in ("at", "for", "by") and p2 in _WORK | {"hired", "employed", "started", "starts", "interned"}) or p1 in _JOIN or (
            p1 == "of" and p2 in _ORG_ROLES):
        return "organization"
    if p1 in _PLACE_PREPS or p1 in _VISIT or (p1 == "to" and p2 in _MOTION):
        return "place"
    before = text[max(0, start - 20):start].rstrip(" \"'“‘(")[-1:]
    if possessive or (before and before not in ".!?:;…"):
        return "person"  # mid-sentence Capitalised words, "Melanie's ..."
    nxt = _NEXT_WORD_RE.match(text, end)
    if text.startswith(":", end) or (nxt and _key(nxt.group(1)) in _VERBS):
        return "person"  # "Caroline: ..." chat turn, or "Caroline went ..."
    if nxt and _key(nxt.group(1)) in _OPENER_CUES and (len(words) > 1 or _NAME_AFTER_CUE_RE.match(text, nxt.end())):
        return "person"  # a name opening a sentence: "Alice Johnson from Acme ...", "Priya and Tom went ..."
    if len(words) > 1 and text.startswith(",", end):
        return "person"  # "Alice Johnson, our new CTO, ..."
    return None


def _entities(text: str) -> list[Entity]:
    found: list[tuple[int, str, str]] = []
    mask = bytearray(len(text))

    def free(s: int, e: int) -> bool:
        return mask.find(1, s, e) == -1

    def add(s: int, e: int, name: str, kind: str) -> None:
        found.append((s, name.strip()[:200], kind))
        mask[s:e] = b"\x01" * (e - s)

    for m in _URL_RE.finditer(text):
        mask[m.start():m.end()] = b"\x01" * (m.end() - m.start())
    for m in _DATE_RE.finditer(text):
        if m.group().strip() and free(*m.span()):
            add(m.start(), m.end(), m.group(), "date")
    tokens = [m for m in _TOKEN_RE.finditer(text) if free(*m.span())]
    alpha = [m.group() for m in tokens if m.group().isalpha()]
    upper = sum(1 for w in alpha if w.isupper() and len(w) > 1)
    shouting = upper > 3 and upper * 2 > len(alpha)
    rest = []
    for m in tokens:
        kind = _token_kind(m.group(), shouting)
        if kind is None:
            rest.append(m)
            continue
        s, e = m.start(), m.end()
        tail_re = {"product": _PRODUCT_TAIL_RE, "organization": _ORG_TAIL_RE}.get(kind)
        if tail_re and _strip_possessive(m.group()) == m.group():
            tail = tail_re.match(text, e).end()  # type: ignore[union-attr]  # all-optional: always matches
            e = tail if free(e, tail) else e
        add(s, e, _strip_possessive(text[s:e]), kind)
    seqs: list[list[re.Match[str]]] = []
    for m in rest:
        if not free(*m.span()) or not _is_cap(m.group()):
            continue
        if seqs:
            prev = seqs[-1][-1]
            gap = text[prev.end():m.start()]
            joinable = gap in (" ", " of ", " de ", " van ", " von ", " da ", " del ") or (
                gap == ". " and _key(prev.group()) in _HONORIFICS)
            if joinable and _strip_possessive(prev.group()) == prev.group() and len(seqs[-1]) < 6:
                seqs[-1].append(m)
                continue
        seqs.append([m])
    for seq in seqs:
        s, e = seq[0].start(), seq[-1].end()
        name = text[s:e]
        possessive = _strip_possessive(name) != name
        kind = _classify(text, s, e, [m.group() for m in seq], possessive)
        if kind:
            add(s, e, _strip_possessive(name), kind)
    out: list[Entity] = []
    seen: set[str] = set()
    for _, name, kind in sorted(found, key=lambda f: f[0]):
        if name and name.casefold() not in seen and len(out) < MAX_ENTITIES:
            seen.add(name.casefold())
            out.append(Entity(name=name, kind=kind))
    return out


class HeuristicExtractor:
    """Deterministic, no-LLM extractor; see the module docstring for what it can and cannot do."""

    def extract(self, text: str, *, speaker: str | None = None, captured_at: datetime | None = None) -> Extraction:
        """`captured_at` (in the offset it was said in) anchors relative dates; None: facts carry no day."""
        normalized = normalize_text(text or "")
        if not normalized:
            return Extraction(normalized_text="", category="note", importance=0.0)
        scan = normalized[:_SCAN_LIMIT].encode("utf-8", "replace").decode()  # lone surrogates -> "?"
        chat = _SPEAKER_RE.match(scan)
        chat_name = chat.group(1) if chat and all(_is_cap(w) for w in chat.group(1).split()) else None
        body = scan[chat.end():] if chat_name and chat else scan
        who = (speaker or "").strip().encode("utf-8", "replace").decode() or chat_name or "user"
        entities = _entities(scan)
        found = facts(body, who, captured_at)
        category = next((r.category for r in _RULES
                         if r.pattern.search(body) and (not r.needs_entities or entities or found)), "note")
        dated = any(e.kind == "date" for e in entities) or bool(_DEADLINE_RE.search(body))
        importance = (0.3 + _CATEGORY_WEIGHT[category] + (0.1 if dated else 0.0)
                      + (0.15 if _EMPHASIS_RE.search(body) else 0.0) + (0.05 if found else 0.0)
                      + min(0.1, len(body.split()) / 300))
        return Extraction(normalized_text=normalized, category=category,
                          entities=entities, facts=found, importance=round(min(1.0, max(0.0, importance)), 3))
