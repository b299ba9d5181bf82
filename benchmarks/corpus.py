"""Generate a synthetic content folder of N entries valid against the entry schema.

    python benchmarks/corpus.py --entries 1000 --out /tmp/corpus

Text is varied (sentences drawn from a vocabulary with a seeded generator), with
tags, affected systems, typed relations, signatures with examples and code blocks,
so that the generator does realistic work per entry (about 7 KiB of YAML each).
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORDS = ["rank", "collective", "allreduce", "broadcast", "gradient", "optimizer", "shard", "checkpoint", "watchdog", "timeout", "compile", "graph", "kernel", "memory", "allocator", "fragment", "tensor", "buffer", "stream", "device", "host", "node", "network", "socket", "interface", "topology", "bucket", "reducer", "parameter", "activation", "precision", "scaler", "loss", "divergence", "overflow", "worker", "loader", "batch", "epoch", "sampler", "queue", "process", "group", "barrier", "store", "rendezvous", "launcher", "agent", "signal", "trace", "profile", "cache", "autotune", "shape", "guard", "dynamic", "static", "layer", "module", "weight", "bias", "embedding", "attention", "sequence", "pipeline", "stage", "micro", "replica", "mesh", "placement", "offload", "pinned", "page", "driver", "runtime", "firmware", "link", "switch", "fabric"]
STACKS = ["PyTorch", "Hugging Face Accelerate", "DeepSpeed", "Megatron-LM", "vLLM"]
SYSTEMS = ["PyTorch", "NCCL", "DeepSpeed", "Megatron-LM", "CUDA", "vLLM", "Hugging Face Transformers", "torchrun", "Triton", "cuDNN"]
TAGS = [f"{a}-{b}" for a in WORDS[:30] for b in WORDS[30:45]]


def _sentence(rng: random.Random, words: int) -> str:
    chosen = [rng.choice(WORDS) for _ in range(words)]
    return (" ".join(chosen)).capitalize() + "."


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng, rng.randint(8, 18)) for _ in range(sentences))


def _entry(i: int, rng: random.Random, categories: list[str]) -> dict[str, object]:
    key = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} failed on {rng.choice(WORDS)} {i}:"
    related = []
    for other in sorted(rng.sample(range(i), min(i, rng.randint(1, 4)))):
        related.append({"slug": f"synthetic-failure-{other:05d}", "type": rng.choice(["causes", "caused-by", "confused-with", "see-also"])})
    tags = sorted({TAGS[min(int(rng.paretovariate(1.2)) - 1, len(TAGS) - 1)] for _ in range(rng.randint(3, 6))} | {rng.choice(TAGS)})
    return {
        "id": f"MTF-{i + 1:04d}",
        "title": f"Synthetic failure {i}: {_sentence(rng, 5)[:-1]}",
        "category": rng.choice(categories),
        "severity": rng.choice(["low", "medium", "high", "critical"]),
        "failure_mode": rng.choice(["hang", "crash", "slow", "divergence", "silent-corruption", "error"]),
        "tags": tags,
        "status": "reviewed",
        "last_reviewed": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "summary": _paragraph(rng, 3),
        "quick_answer": {"symptom": _sentence(rng, 12), "root_cause": _sentence(rng, 12), "fix": _sentence(rng, 12)},
        "mechanism": _paragraph(rng, 5) + "\n\n" + _paragraph(rng, 4),
        "observations": [_sentence(rng, 10) for _ in range(3)],
        "symptoms": [{"symptom": _sentence(rng, 8), "meaning": _sentence(rng, 10)} for _ in range(4)],
        "affected_systems": [{"name": s, "versions": f">= {rng.randint(1, 2)}.{rng.randint(0, 9)}"} for s in rng.sample(SYSTEMS, 2)],
        "confirm": [_sentence(rng, 14) for _ in range(4)],
        "root_causes": [_sentence(rng, 12) for _ in range(3)],
        "fix": [_sentence(rng, 14) for _ in range(3)],
        "prevention": [_sentence(rng, 12) for _ in range(2)],
        "code_examples": [{
            "stack": rng.choice(STACKS), "language": "python", "why": _sentence(rng, 14),
            "code": "\n".join(f"{rng.choice(WORDS)}_{j} = torch.{rng.choice(WORDS)}({rng.choice(WORDS)}, dim={j})" for j in range(8)) + "\n",
        }],
        "signatures": [{"key": key, "role": rng.choice(["root", "collateral"]),
                        "examples": [f"[rank{r}]: {key} {_sentence(rng, 6)}" for r in range(2)]}],
        "faq": [{"question": f"How does it change from 1 GPU to 1000 GPUs in case {q}?", "answer": _paragraph(rng, 2)} for q in range(4)],
        "references": [{"title": f"Reference {r}", "url": f"https://example.org/{i}/{r}", "kind": "docs"} for r in range(2)],
        "related": related,
    }


def write_corpus(entries: int, out: Path, seed: int = 1) -> None:
    """Write categories.yaml and N synthetic entries under out/."""
    rng = random.Random(seed)
    shutil.rmtree(out, ignore_errors=True)
    (out / "failures").mkdir(parents=True)
    shutil.copy(ROOT / "content" / "categories.yaml", out / "categories.yaml")
    categories = [c["slug"] for c in yaml.safe_load((out / "categories.yaml").read_text())["categories"]]
    for i in range(entries):
        entry = _entry(i, rng, categories)
        text = yaml.safe_dump(entry, sort_keys=False, allow_unicode=True, width=100)
        (out / "failures" / f"synthetic-failure-{i:05d}.yaml").write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    write_corpus(args.entries, args.out, args.seed)


if __name__ == "__main__":
    main()
