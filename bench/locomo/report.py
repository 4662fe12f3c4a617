"""What a run prints and saves: the table, the machine, the JSON record, the chart, the failure dump."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.locomo.client import SearchOutcome
from bench.locomo.data import Conversation, Question
from bench.locomo.metrics import GROUPS, HEADLINE, METRIC_LABELS, QuestionScore, Summary, group_label

SYSTEMS = ("mnemo", "bm25", "dense")
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class QuestionResult:
    """One question, what each system returned for it (dia_ids, best first) and how that scored."""

    conversation: Conversation
    question: Question
    mnemo: SearchOutcome
    ranked: Mapping[str, list[str]]  # system -> dia_ids
    scores: Mapping[str, QuestionScore]  # system -> score

    def record(self) -> dict[str, Any]:
        """The JSON form. It quotes the question (dataset text): results files are never committed."""
        return {
            "sample_id": self.conversation.sample_id,
            "qa_index": self.question.index,
            "category": self.question.category,
            "question": self.question.question,
            "gold": list(self.question.evidence),
            "ranked": dict(self.ranked.items()),
            "mnemo_scores": [h.score for h in self.mnemo.hits],
            "latency_ms": round(self.mnemo.seconds * 1000, 3),
            "recall_at_5": {system: s.recall_at_5 for system, s in self.scores.items()},
        }


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    with contextlib.suppress(OSError):
        info["load_avg_1m"] = round(os.getloadavg()[0], 2)
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True)
        info["git_commit"] = commit.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


def format_table(summaries: Mapping[str, Mapping[str, Summary]], latency: Mapping[str, Any]) -> str:
    """Rows: metric × system; columns: categories 1–4, their aggregate, then category 5 apart."""
    any_system = next(iter(summaries.values()))
    width = 12
    head = f"{'metric':<10}{'system':<8}" + "".join(
        ("| " if g == "5" else "") + f"{group_label(g):>{width}}" for g in GROUPS
    )
    counts = f"{'':<10}{'':<8}" + "".join(
        ("| " if g == "5" else "") + f"{'n=' + str(any_system[g].n):>{width}}" for g in GROUPS
    )
    lines = [head, counts, "-" * len(head)]
    for attr, label in METRIC_LABELS.items():
        for i, system in enumerate(summaries):
            cells = "".join(
                ("| " if g == "5" else "") + f"{getattr(summaries[system][g], attr):>{width}.3f}" for g in GROUPS
            )
            lines.append(f"{label if i == 0 else '':<10}{system:<8}{cells}")
        lines.append("")
    if latency.get("n"):
        lines.append(
            f"mnemo search latency (client-side, {latency['n']} calls): p50 {latency['p50_ms']:.1f} ms, "
            f"p95 {latency['p95_ms']:.1f} ms, mean {latency['mean_ms']:.1f} ms"
        )
    return "\n".join(lines)


def format_machine(info: Mapping[str, Any]) -> str:
    parts = [f"machine: {info['platform']}", str(info["processor"]), f"cpus={info['cpus']}", f"python {info['python']}"]
    if "load_avg_1m" in info:
        parts.append(f"load avg {info['load_avg_1m']} at start, {info.get('load_avg_1m_at_end')} at end")
    return " | ".join(parts)


def write_json(path: Path, document: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_chart(path: Path, summaries: Mapping[str, Mapping[str, Summary]], title: str) -> bool:
    """Grouped bars of recall@5 per category 1–4 and over 1–4; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    groups = [g for g in GROUPS if g != "5"]
    any_system = next(iter(summaries.values()))
    labels = [f"{group_label(g)}\n(n={any_system[g].n})" for g in groups]
    systems = list(summaries)
    bar = 0.8 / len(systems)
    fig, ax = plt.subplots(figsize=(10, 5), dpi=120)
    for i, system in enumerate(systems):
        xs = [j + (i - (len(systems) - 1) / 2) * bar for j in range(len(groups))]
        values = [summaries[system][g].recall_at_5 for g in groups]
        bars = ax.bar(xs, values, bar, label=system)
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=8, padding=2)
    ax.set_xticks(range(len(groups)), labels)
    ax.axvline(len(groups) - 1.5, color="grey", linewidth=0.8, linestyle=":")
    ax.set_ylim(0, 1)
    ax.set_ylabel("recall@5")
    ax.set_title(title)
    ax.legend(loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return True


def write_failures(path: Path, results: Sequence[QuestionResult], per_category: int) -> int:
    """Up to `per_category` questions per category where Mnemo's recall@5 is 0: the question, the
    gold turns, Mnemo's top 5 (with score components when the run asked for them) and where the
    gold turns ranked in each system. A tuning aid; it quotes the dataset, so it is never committed."""
    lines = ["# Mnemo failures (recall@5 = 0)", ""]
    written = 0
    for category in sorted({r.question.category for r in results}):
        failed = [r for r in results if r.question.category == category and r.scores["mnemo"].recall_at_5 == 0.0]
        total = sum(1 for r in results if r.question.category == category)
        lines += [f"## Category {category} ({group_label(str(category))}): {len(failed)} of {total} failed", ""]
        for r in failed[:per_category]:
            written += 1
            conversation = r.conversation
            lines.append(f"### {conversation.sample_id} q{r.question.index}: {r.question.question}")
            lines.append("")
            lines.append("Gold:")
            for dia_id in r.question.evidence:
                turn = conversation.turn(dia_id)
                ranks = ", ".join(f"{s} {_rank(r.ranked[s], dia_id)}" for s in r.ranked)
                lines.append(f"- `{dia_id}` ({turn.date:%d %b %Y}) {turn.content}  — rank: {ranks}")
            lines.append("")
            lines.append("Mnemo top 5:")
            for position, hit in enumerate(r.mnemo.hits[:5], start=1):
                explain = ""
                if hit.explain:
                    explain = " [" + ", ".join(f"{k} {v:.3f}" for k, v in hit.explain.items()) + "]"
                score = "?" if hit.score is None else f"{hit.score:.3f}"
                lines.append(f"{position}. `{hit.dia_id}` {score}{explain} {hit.content}")
            lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return written


def _rank(ranked: Sequence[str], dia_id: str) -> str:
    return str(ranked.index(dia_id) + 1) if dia_id in ranked else "-"


def summaries_json(summaries: Mapping[str, Mapping[str, Summary]]) -> dict[str, Any]:
    return {system: {g: s.as_dict() for g, s in groups.items()} for system, groups in summaries.items()}


def headline(summaries: Mapping[str, Mapping[str, Summary]]) -> str:
    return ", ".join(f"{system} {groups[HEADLINE].recall_at_5:.3f}" for system, groups in summaries.items())
