"""The heuristic extractor's fact rules: S-P-O triples with a polarity and, where the text says or implies
a day, a `valid_at` (mnemo.domain.dates, against the moment the text was said).

Deterministic surface rules, in this order per sentence (docs/extraction.md "Facts"):
1. a turn with a sarcasm cue yields nothing; a question yields nothing, and so does a hypothetical clause (and a
   sentence with a hypothetical marker decides nothing);
2. a decision ("we decided to X", "I chose X", "Decision: X", "went with X") is one fact (S, decided, X),
   negative for "decided not to X" / "decided against X";
3. otherwise the sentence is cut into clauses (commas, "but", "and" before a verb: "Zed lives in Quito and
   works at Cobaltworks" gives two clauses, the second keeping the subject Zed); each clause loses its
   negation ("not", "no longer", "never", "anymore"), which makes the fact negative, and is matched
   against the patterns below, first with its date words removed, then as said;
4. "X, not Y" adds the negative of the previous fact with the object Y ("I live in Porto, not Lisbon").
5. every triple passes the vetoes of heuristic_plausibility (a day is no place, only a person lives somewhere).

Subjects: "I" and "we" are the speaker; "my sister Maya" is Maya (and the speaker's sister is Maya);
"he"/"she" is the last person named in the turn, "her brother" that person's brother.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from mnemo.adapters.local.heuristic_plausibility import plausible
from mnemo.domain import dates
from mnemo.domain.extraction import Fact

MAX_FACTS = 10
_MAX_CLAUSE = 200  # longer clauses are run-ons, so no facts are taken from them
_MAX_SENTENCE = 400


def _rx(src: str) -> re.Pattern[str]:
    return re.compile(src, re.IGNORECASE)


def _words(s: str) -> frozenset[str]:
    return frozenset(s.split())


_SENT_SPLIT = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<=[.!?…])\s+")
_SARCASM = _rx(r"(?:^|[.!?]\s+)(?:oh,? (?:sure|great|yeah|wonderful)|yeah,? right|sure,? because|great,? another|ugh)\b"
               r"|(?:^|[.!?]\s+)not\.?\s*$|/s\b")
_HYPOTHETICAL = _rx(r"\b(?:if|imagine|suppose|supposing|hypothetically|wish|might|maybe|perhaps|someday|one day"
                    r"|in a perfect world|would|could|should|not sure|no idea|who knows|hard to say|thinking about"
                    r"|let's|wonder)\b")
_QUESTION_OPENER = _rx(r"^(?:what|where|who|whom|whose|why|how|which|when|do|does|did|can|could|would|should|is|are"
                       r"|was|were|will|shall|may)\b(?! \w+ (?:decided|chose))")
_PAST = _rx(r"\b(?:ago|yesterday|last|was|were|had|did|went|met|got|left|ran|bought|quit|\w{3,}ed)\b")
_VERB_START = _rx(r"^(?:works?|lives?|loves?|likes?|hates?|enjoys?|prefers?|plays?|teaches|knows?|speaks?|studies"
                  r"|runs?|has|have|is|was|moved|joined|started|decided|went|visited|met|owns?|reports?|goes|flies|fly)\b")
_CLAUSE_SPLIT = _rx(r"\s*(?:,(?! \d{4})|;|:(?![\d/])|[()\[\]—–]|\s-\s|\b(?:but|because|although|though|whereas"
                    r"|which|who|while|when|so that|then)\b|\band (?=(?:i|it|we|he|she|they|you|then|that|this|her|his"
                    r"|my)\b)|\band (?=(?:works?|lives?|loves?|likes?|hates?|enjoys?|prefers?|plays?|teaches|knows?"
                    r"|speaks?|studies|runs?|has|is|moved|joined|started|owns?|reports?)\b))\s*")
_FILLER = _rx(r"^(?:(?:and|also|then|now|actually|btw|oh|well|so|note|fyi|honestly|wait|sorry|hey|hi|finally|turns out"
              r"|correction|to correct what i said|quick correction for your notes|i meant(?: that)?"
              r"|(?:please )?(?:remember|don't forget|do not forget)(?: that)?)\b[\s,:]*)+")
_CONTRACTIONS = (("i'm", "i am"), ("i've", "i have"), ("i'll", "i will"), ("we're", "we are"), ("we've", "we have"),
                 ("we'll", "we will"), ("he's", "he is"), ("she's", "she is"), ("it's", "it is"), ("isn't", "is not"),
                 ("aren't", "are not"), ("wasn't", "was not"), ("doesn't", "does not"), ("don't", "do not"),
                 ("didn't", "did not"), ("haven't", "have not"), ("hasn't", "has not"), ("name's", "name is"),
                 ("can't stand", "cannot stand"), ("won't", "will not"))
_CONTRACTION_RE = _rx(r"\b(?:" + "|".join(re.escape(a) for a, _ in _CONTRACTIONS) + r")\b")
_NEGATION = _rx(r"\b(?:(?:do|does|did) not|no longer|never)\s+"
                r"|(?:(?<=\bis )|(?<=\bam )|(?<=\bare )|(?<=\bwas )|(?<=\bhave )|(?<=\bhas ))not (?:really )?"
                r"|,?\s*\b(?:any ?more|after all)\b")
_DECISION = re.compile(r"(?:(?P<s>\b(?:[Ii]|[Ww]e|[Tt]he \w+|[A-Z][\w'-]+(?: and I)?)) )?(?i:(?:have |has |had |are |am )?"
                r"(?P<v>decided against|decided not to|decided (?:that|to|on)|chose|chosen|picked|opted (?:for|to)"
                r"|settled on|went with|agreed (?:to|on)|going to go with|going with|will go with))\s+(?P<o>.+)")
_DECISION_MARK = _rx(r"^(?:decision:|final call:|(?:it is settled|i have made up my mind)[:,]?\s*(?:(?:i|we) (?:am|are) )?)"
                     r"\s*(?P<o>.+)")
_NAME_HEAD = re.compile(r"[A-Z][\w'’&.-]*(?: (?:of |de |the |& )?[A-Z][\w'’&.-]*)*")
_OCCUPATIONS = _words(
    "nurse engineer teacher lawyer dentist pilot painter photographer counselor counsellor developer designer doctor "
    "chef accountant architect student consultant analyst scientist writer programmer pharmacist vet plumber "
    "electrician librarian journalist founder professor researcher cto ceo cfo coo manager therapist barista "
    "paramedic firefighter musician artist editor surgeon")
_NOT_SUBJECT = _words("it this that these those there here you what who which where when why how one everyone "
                         "someone something anything nothing everything")
# A subject holding any of these is a reported thought, a modal or a date, not a thing a fact is about.
_NOT_IN_SUBJECT = _words("think thought said says believe guess know knew feel felt hope mean heard told will would can "
                         "could should did do does to yesterday today tomorrow tonight is are am was were be been "
                         "sounds looks seems feels have has had got so much i'd your our their")
_ADVERBS = _words("finally just also really still already recently now")
# Objects of these are places or organisations, never the person "he"/"she" refers to next.
_PLACE_PREDICATES = _words("lives in works at travels to visited is from was born in studies at attends attended "
                           "graduated from interviewed at")
_FROM_TAIL = re.compile(r" from [A-Z].*$")
_PAIR = re.compile(r"(?P<a>[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)?) and (?P<b>[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)?)")
_TRAILERS = _rx(r"(?:\s+(?:now|these days|originally|honestly|please|for me|already|again|there|for work|right now))+$")
_Match = Callable[[re.Match[str]], list[tuple[str, str, str]]]  # -> (subject word, predicate, object) triples
_S = r"^(?P<s>.+?) "
# Adverbs a verb phrase may open with: "has also been", "was just talking" are verbs, not possessions or states.
_ADV = r"(?:(?:also|actually|already|just|really|still|recently|even|finally|currently|now|always|often) )*"


def _head(text: str) -> str:
    """The Capitalised name an object opens with ("the Louvre and ..." -> "Louvre"), else the object as is."""
    text = re.sub(r"^(?:the|a|an|my|our)\s+", "", text.strip(), flags=re.IGNORECASE)
    m = _NAME_HEAD.match(text)
    return m.group() if m else ""


def _plain(text: str) -> str:
    text = re.sub(r"^(?:a|an|the|my|our|to)\s+", "", text.strip(" ,.\"'“”"), flags=re.IGNORECASE)
    return _TRAILERS.sub("", text)


def _named(predicate: str) -> _Match:
    return lambda m: [(m["s"], predicate, _head(m["o"]))]


def _phrase(predicate: str, cut: str = r"\s+(?:at|in|for|on|to|with|from)\s+.*$") -> _Match:
    return lambda m: [(m["s"], predicate, re.sub(cut, "", _plain(m["o"]), flags=re.IGNORECASE) if cut else _plain(m["o"]))]


def _third_person(stem: str) -> str:
    """"us" -> "uses", "teach" -> "teaches", "play" -> "plays": a habit's predicate from the verb's stem."""
    stem = stem.casefold()
    if stem in ("us", "smok", "driv", "manag", "practic"):
        return stem + "es"
    return stem + ("es" if stem.endswith(("ch", "sh")) else "s")


def _named_as(text: str) -> str:
    """"a cat named Miso" -> "Miso"; otherwise the phrase."""
    m = re.search(r"\bnamed ([A-Z]\w+)", text)
    return m.group(1) if m else _plain(text)


def _identity(m: re.Match[str]) -> list[tuple[str, str, str]]:
    """"<X> is/am <what>": an age, a name, an occupation (and where), an origin, an attribute."""
    s, o = m["s"], m["o"].strip()
    if re.fullmatch(r"\d{1,3}(?: years? old)?", o):
        return [(s, "age is", o.split()[0])]
    if m.group("s").casefold() == "i" and re.fullmatch(r"[A-Z][a-z]+", o) and not re.search(r"(?:ian|ean|ese|ish|ch|i)$", o):
        return [(s, "is named", o)]
    role = re.match(r"^(?:a|an|the)\s+(?P<r>[\w -]+?)(?:\s+(?P<prep>at|for|of|in|based in|with)\s+(?P<w>.+))?$", o, re.I)
    if role and role["r"].split()[-1].casefold() in _OCCUPATIONS:
        out = [(s, "works as", role["r"])]
        where = _head(role["w"] or "")
        if where and role["prep"].casefold() in ("at", "for", "of"):
            out.append((s, "works at", where))
        elif where and role["prep"].casefold() == "based in":
            out.append((s, "lives in", where))
        return out
    if re.match(r"^(?:a |an |the |my )", o, re.I) or len(o.split()) > 3:
        return []  # "a night owl" is said below; longer phrases are descriptions, not attributes
    return [(s, "is", _plain(o))]


def _attribute(m: re.Match[str]) -> list[tuple[str, str, str]]:
    return [(m["s"], "is", _plain(m["o"]))]


# (clause pattern, what it yields). Group s = subject words, o = object words. First match wins.
_RULES: tuple[tuple[str, _Match], ...] = (
    (r"^my name is (?P<o>[A-Z][\w'-]+)", lambda m: [("I", "is named", m["o"])]),
    (_S + r"(?:was|were) born on (?P<o>.+)$", lambda m: [(m["s"], "was born on", m["o"])]),
    (_S + r"(?:was|were) born in (?P<o>.+)$", lambda m: [(m["s"], "was born in", _head(m["o"]) or m["o"])]),
    (r"^my (?P<p>[\w -]{1,30}?)['’]s name is (?P<o>.+)$", lambda m: [("I", m["p"].casefold(), _head(m["o"]) or m["o"])]),
    (r"^my (?P<p>[\w' -]{1,40}?) (?:is|was|are|were) (?!\w+ing\b)(?:named |called )?(?:on )?(?P<o>.+)$",
     lambda m: [("I", m["p"].casefold(), _plain(m["o"]))]),
    (r"^(?P<o>.+?) (?:is|was) my (?P<p>[\w -]{1,25})$", lambda m: [("I", m["p"].casefold(), m["o"])]),
    (r"^(?P<o>[A-Z][\w'-]+) is (?P<s>[A-Z][\w'-]+)['’]s (?P<p>[\w -]{1,20})$", lambda m: [(m["s"], m["p"], m["o"])]),
    (r"^(?P<s>.+?)['’]s (?P<p>[\w -]{1,40}?) (?:is|was|are|were) (?:named |called )?(?P<o>.+)$",
     lambda m: [(m["s"], m["p"].casefold(), m["o"])]),
    (_S + r"(?:quit|left|resigned from) (?P<o>[A-Z].*)$", lambda m: [(m["s"], "-works at", _head(m["o"]))]),
    (_S + r"moved out of (?P<o>[A-Z].*)$", lambda m: [(m["s"], "-lives in", _head(m["o"]))]),
    (_S + r"(?:stopped|quit) (?P<v>\w+?)ing (?P<o>.+)$",
     lambda m: [(m["s"], "-" + m["v"] + ("es" if m["v"].endswith("s") else "s"), _plain(m["o"]))]),
    (_S + r"(?:(?:am|is|are|was|were|have been|has been) working|(?:will |have |has )?(?:work|works|worked)"
     r"|(?:am|is|are|was|were) employed) (?:at|for|by) (?P<o>.+)$",
     lambda m: [(m["s"], "works at", _head(m["o"]) or re.sub(r"\s+(?:as|in|on)\s+.*$", "", _plain(m["o"])))]),
    (_S + r"(?:work|works|worked|am working|is working) as (?P<o>.+)$", _phrase("works as")),
    (_S + r"(?:live|lives|lived|am living|is living|are living|have lived|has lived|am based|is based|are based) "
     r"(?:in|at) (?P<o>.+)$", _named("lives in")),
    (_S + r"(?:am|is|are|will be) (?:moving|relocating) to (?P<o>.+)$", _named("lives in")),
    (_S + r"(?:am |is |are )?planning to move to (?P<o>.+)$", _named("lives in")),
    # "move" is the form left once "did not" is cut: "Ana didn't move to Lisbon" denies a move
    (_S + r"(?:moved|moves|move|relocated) to (?P<o>.+)$", _named("lives in")),
    (_S + r"(?:start|starts|started|am starting|is starting|will start|am joining|is joining|will join|join|joins|joined"
     r"|has joined|have joined) (?:(?:his|her|my|a) )?(?:new )?(?:job |work |working )?(?:at )?(?P<o>[A-Z].*)$",
     _named("works at")),
    (_S + r"(?:started|starts) (?:working |a job )?at (?P<o>.+)$", _named("works at")),
    (_S + r"(?:am|is|are|was|were|got) (?:married) to (?P<o>.+)$", _named("is married to")),
    (_S + r"(?:am|is|are|was|were|got) engaged to (?P<o>.+)$", _named("is engaged to")),
    (_S + r"(?:am|is|are) dating (?P<o>.+)$", _named("is dating")),
    (_S + r"(?:reports?|reported) to (?P<o>.+)$", _named("reports to")),
    (_S + r"(?:am|is|was) the (?:ceo|founder) of (?P<o>.+)$", _named("is ceo of")),
    (_S + r"(?:am|is|are) (?:originally )?from (?P<o>.+)$", _named("is from")),
    (_S + r"grew up in (?P<o>.+)$", _named("is from")),
    (_S + r"(?:am|is|are) allergic to (?P<o>.+)$", _phrase("is allergic to", r",.*$")),
    (_S + r"(?:speak|speaks) (?:fluent )?(?P<o>[A-Z]\w+)", lambda m: [(m["s"], "speaks", m["o"])]),
    (_S + r"(?:study|studies|studied) at (?P<o>.+)$", _named("studies at")),
    (_S + r"goes to (?P<o>[A-Z][\w ]*(?:School|Elementary|College|University|Academy|High))\b", _named("studies at")),
    (_S + r"(?:study|studies) (?P<o>[a-z][\w ]+)$", _phrase("studies")),
    (_S + r"(?:know|knows|have known|has known|met|meet) (?P<o>[A-Z].*)$", _named("knows")),
    (_S + r"had (?:lunch|dinner|coffee|breakfast|drinks) with (?P<o>[A-Z].*)$", _named("knows")),
    # plans: travel, meetings, appointments, events
    (_S + r"(?:am |is |are |will )?(?:going|flying|heading|driving|travell?ing|fly|flies|drive|go|be) (?:back )?"
     r"(?:to|in) (?!(?:the|a|an)\b)(?P<o>[A-Z].*)$", _named("travels to")),
    (_S + r"(?:am |is |are )?leaving for (?P<o>[A-Z].*)$", _named("travels to")),
    (_S + r"(?:am |is |are )?(?:going to )?visit(?:ing)? (?P<o>[A-Z].*)$", _named("travels to")),
    (_S + r"(?:am |is |are )?(?:visiting|taking) .+? (?:in|to) (?P<o>[A-Z].*)$", _named("travels to")),
    (_S + r"(?:am|is|are) going to (?:the|a) (?P<o>.+)$", _phrase("attends")),
    (_S + r"(?:am|is|are) (?:attending|running) (?P<o>.+)$", _phrase("attends")),
    (_S + r"(?:am|is|are) going to (?P<o>[a-z].+)$", _phrase("plans to", "")),
    (_S + r"(?:plan|plans|am planning|is planning) to (?P<o>.+)$", _phrase("plans to", "")),
    (_S + r"(?:am|is|are) (?:meeting|seeing) (?P<o>.+)$", _phrase("meets", r"\s+(?:for|to|at|about)\s+.*$")),
    (_S + r"(?:have|has|am having|is having) (?:a |an )?(?P<o>[\w-]+(?: [\w-]+)?) appointment", _phrase("has appointment")),
    (_S + r"(?:have|has|am having|is having) (?:a |an )?(?P<o>(?:[\w-]+ )?(?:interview|surgery|check-?up|exam)\b.*)$",
     _phrase("has appointment", "")),
    # dated events
    (_S + r"(?:visited|went to) (?:(?:my|our) [\w ]+? in )(?P<o>[A-Z].*)$", _named("visited")),
    (_S + r"(?:visited|visit|visits) (?P<o>.+)$", _named("visited")),
    (_S + r"went to (?!(?:the|a|an)\b)(?P<o>[A-Z].*)$", _named("visited")),
    (_S + r"(?:went to|attended) (?P<o>.+)$", _phrase("attended", r"\s+(?:on|in|at)\s+.*$")),
    (_S + r"graduated from (?P<o>.+)$", _named("graduated from")),
    (_S + r"interviewed (?:at|with) (?P<o>.+)$", _named("interviewed at")),
    (_S + r"adopted (?:a |an )?(?P<o>.+)$",
     lambda m: [(m["s"], "adopted", _named_as(m["o"]))]),
    (_S + r"(?P<p>bought|ran|painted|finished) (?P<o>.+)$", lambda m: [(m["s"], m["p"].casefold(), _plain(m["o"]))]),
    # preferences
    (_S + r"(?:am|is|are) (?:a )?(?:big |huge )?fan of (?P<o>.+)$", _phrase("likes", "")),
    (_S + r"(?:really |also |much )?(?:like|likes|liked|love|loves|loved|adore|adores|enjoy|enjoys|enjoyed) (?P<o>.+)$",
     _phrase("likes", "")),
    (_S + r"(?:really )?(?:hate|hates|hated|dislike|dislikes|cannot stand|detest) (?P<o>.+)$", _phrase("dislikes", "")),
    (_S + r"(?:really )?(?:prefer|prefers|preferred) (?P<o>.+)$", _phrase("prefers", r"\s+(?:to|over|than|on)\s+.*$")),
    (r"^(?P<s>i)['’]d rather (?:take |have |go by |eat |drink |use |get )?(?P<o>.+?) than\b", _phrase("prefers", "")),
    (r"^(?P<o>[\w -]+?) over [\w -]+ for (?P<s>me)\b", lambda m: [("I", "prefers", _plain(m["o"]))]),
    (_S + r"(?:have|has|own|owns) (?!" + _ADV + r"(?:to\b|been\b|got\b|gotten\b|\w+ed\b|(?:done|had|read|seen|gone|made|taken|given|known|heard|met|told"
     r"|found|thought|bought|eaten|written|tried)\b))(?P<o>.+)$", _phrase("has", "")),
    (_S + r"(?:am|is|are) (?P<o>(?:a|an) [\w -]+ (?:at|for|of|based in) .+|(?:a|an|the) [\w -]+|\d.*|(?-i:[A-Z][a-z]+))$",
     _identity),
    (_S + r"(?:am|is|are) (?!" + _ADV + r"\w+ing\b|gonna\b)(?P<o>(?-i:[a-z])[\w -]{2,30})$", _attribute),
    (_S + r"(?:(?:have|has|am|is|are|was|were) )?" + _ADV + r"(?:been )?" + _ADV + r"(?P<v>eat|drink|smok|play|driv|us|cook|read|watch|lead"
     r"|manag|collect|grow|practic|teach)(?:e?s|ing|e)? (?!(?:to|up|around|at|in|on|for|with|about|into|from)\b)(?P<o>.+)$",
     lambda m: [(m["s"], _third_person(m["v"]), _plain(m["o"]))]),
    (_S + r"(?P<p>is|are|was|were) (?!not\b|going\b|gonna\b|about to\b|" + _ADV + r"\w+ing\b)(?P<o>.+)$",
     lambda m: [(m["s"], m["p"].casefold(), m["o"])]),
)
_PATTERNS = tuple((_rx(src), make) for src, make in _RULES)


class _Turn:
    """What the clauses of one turn share: the speaker, the last person named, the facts so far."""

    def __init__(self, speaker: str) -> None:
        self.speaker, self.last_name = speaker, ""
        self.out: list[Fact] = []
        self.seen: set[tuple[str, str, str, str]] = set()

    def subjects(self, raw: str) -> list[str]:
        words = _FROM_TAIL.sub("", raw).strip(" \"'“”").split()  # "Alice Johnson from Acme Corp (met ...)"
        while len(words) > 1 and words[-1].casefold() in _ADVERBS:
            words.pop()  # "my brother Dev finally (moved)"
        low = [w.casefold().replace("’", "'") for w in words]
        if not words or len(words) > 5 or any(w in _NOT_IN_SUBJECT for w in low) or low == ["my"]:
            return []
        if low == ["they"] and self.out and self.out[-1].predicate in ("is married to", "is dating", "is engaged to"):
            return [self.out[-1].subject, self.out[-1].object]
        if low in (["i"], ["we"]):
            return [self.speaker]
        if low in (["he"], ["she"]):
            return [self.last_name] if self.last_name else []
        if len(words) == 3 and low[1] == "and" and low[2] == "i":
            return [words[0], self.speaker]
        pair = _PAIR.fullmatch(" ".join(words))
        if pair:  # "Priya Patel and Tom Lee (visited Kyoto)": one fact each
            return [pair["a"], pair["b"]]
        if low[0] in ("her", "his") and len(words) > 1 and self.last_name:
            return [f"{self.last_name}'s {' '.join(words[1:])}"]
        if low[0] == "my" and len(words) > 1:
            if len(words) >= 3 and words[-1][0].isupper():  # "my sister Maya": Maya, and the relation
                self.add(self.speaker, " ".join(low[1:-1]), words[-1], "positive", None)
                return [words[-1]]
            return [f"{self.speaker}'s {' '.join(words[1:])}"]
        if "i" in low or any(w in _NOT_SUBJECT for w in low) or low[0] in ("he", "she", "they", "we", "you"):
            return []
        return [" ".join(words[1:] if low[0] in ("the", "a", "an") and len(words) > 1 else words)]

    def add(self, subject: str, predicate: str, obj: str, polarity: str, valid_at: datetime | None) -> None:
        obj = " ".join(obj.strip(" \"'“”.,").split()[:12])[:300]
        if obj.casefold() in ("he", "she", "him", "her") and self.last_name:
            obj = self.last_name
        predicate = " ".join(predicate.casefold().split())[:100]
        if not subject or not obj or not predicate or obj.split()[0].casefold() in _NOT_SUBJECT | {"he", "she", "they"}:
            return
        if not plausible(subject, predicate, obj, self.speaker):  # "Dentist appointment lives in Wednesday" (issue 54)
            return
        key = (subject.casefold(), predicate, obj.casefold(), polarity)
        if key not in self.seen and len(self.out) < MAX_FACTS:
            self.seen.add(key)
            self.out.append(Fact(subject=subject[:200], predicate=predicate, object=obj, polarity=polarity,
                                 valid_at=valid_at))
        if subject[:1].isupper() and " " not in subject and subject != self.speaker:
            self.last_name = subject
        elif predicate not in _PLACE_PREDICATES and re.fullmatch(r"[A-Z][\w'-]+", obj):
            self.last_name = obj  # "Yusuf is my cousin and he ..."


def _expand(text: str) -> str:
    table = dict(_CONTRACTIONS)
    return _CONTRACTION_RE.sub(lambda m: table[m.group().casefold()], text.replace("’", "'"))


def _decision(turn: _Turn, sentence: str, valid_at: datetime | None) -> bool:
    m = _DECISION_MARK.match(sentence)
    d = _DECISION.search(sentence)
    if d is None and m is None:
        return False
    if d is not None:
        verb = d["v"].casefold()
        negative = verb in ("decided against", "decided not to")
        subjects = turn.subjects(d["s"]) if d["s"] else [turn.speaker]
        obj = d["o"]
    else:
        assert m is not None
        negative, subjects, obj = False, [turn.speaker], m["o"]
    obj = re.split(r"\s*(?:[,;]|\s-\s|\bbecause\b|\bdecided\b)\s*", obj)[0]
    obj = re.sub(r"^(?:that|to)\s+", "", obj.strip(" .!"), flags=re.IGNORECASE)
    for subject in subjects or [turn.speaker]:
        turn.add(subject, "decided", obj, "negative" if negative else "positive", valid_at)
    return True


def _clause_facts(turn: _Turn, clause: str, carried: str, valid_at: datetime | None) -> str:
    """The facts of one clause; returns the subject words a following verb-first clause inherits."""
    negative = clause.casefold().startswith("not ")
    if _NEGATION.search(clause):
        negative, clause = True, " ".join(_NEGATION.sub(" ", clause).split())
    if carried and _VERB_START.match(clause):
        clause = f"{carried} {clause}"
    not_y = re.fullmatch(r"(?:not )?(?P<o>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)(?: (?P<is>is|does))?", clause)
    if turn.out and not_y and (negative or not_y["is"]):  # "..., not Lisbon" / "..., Marco is"
        last = turn.out[-1]
        turn.add(last.subject, last.predicate, not_y["o"], "negative" if negative else "positive", last.valid_at)
        return carried
    texts = tuple(dict.fromkeys((dates.strip(clause), clause)))
    for pattern, make in _PATTERNS:
        for text in texts:
            m = pattern.match(text)
            if not m:
                continue
            triples = make(m)
            if not triples or not all(o for _, _, o in triples):
                continue
            for raw, predicate, obj in triples:
                polarity = "negative" if negative != predicate.startswith("-") else "positive"
                for subject in turn.subjects(raw):
                    turn.add(subject, predicate.lstrip("-"), obj, polarity, valid_at)
            return m.groupdict().get("s") or carried
    return carried


def facts(text: str, speaker: str, said: datetime | None) -> list[Fact]:
    """The facts of one turn (a chat prefix already removed); `said` anchors relative dates (None: none)."""
    if _SARCASM.search(text):
        return []
    turn = _Turn(speaker)
    turn_day: datetime | None = None
    for sentence in _SENT_SPLIT.split(_expand(text)):
        sentence = sentence.strip(" \"'“”")
        if not sentence or sentence.endswith("?") or len(sentence) > _MAX_SENTENCE:
            continue
        body = _FILLER.sub("", sentence.rstrip(".!…"))
        if _QUESTION_OPENER.match(body):
            continue
        future = not _PAST.search(sentence)
        day = dates.resolve(sentence, said, future=future) if said else None
        turn_day = day or turn_day
        hypothetical = bool(_HYPOTHETICAL.search(body))
        if not hypothetical and _decision(turn, body, day):  # "maybe we'll go with X" decides nothing
            continue
        carried = ""
        for clause in _CLAUSE_SPLIT.split(body):
            clause = _FILLER.sub("", clause.strip(" \"'“”.!…"))
            if hypothetical and _HYPOTHETICAL.search(clause):
                carried = ""  # "if ...", "I might ...": this clause asserts nothing; "I have 37 coins, if ..." still does
                continue
            if clause and len(clause) <= _MAX_CLAUSE:
                own = dates.resolve(clause, said, future=future) if said else None
                carried = _clause_facts(turn, clause, carried, own or day or turn_day)
    return turn.out
