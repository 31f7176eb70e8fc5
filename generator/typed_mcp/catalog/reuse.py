"""The tools of a package's last catalog, reused where their sources did not change: regenerating
after a spec change lists only the tools the change touches, not the whole API again.

What the SDK lists for a tool follows from its own module, the model modules it imports (directly or
through other models), the rest of the package's code (the runtime, `_about.py`, `upstream.py`...),
its entry in `tools/__init__.py` (its module, whether it has a table view), the schema budget and the
toolchain. A tool's key digests exactly those. An import this module does not understand makes the
tool depend on every file of the package, so a key can only cover too much, never too little; and a reused
tool is the previous catalog's own bytes for it, which a fresh listing of the same sources gives.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from typed_mcp import cache
from typed_mcp.catalog.pack import Packed, Packer, layout_problem, read

# Files under the package that no tool's listing reads, and that change with any description: the
# search documents and vectors.
_UNREAD = frozenset({"search.json", "semantic.json", "tokenizer.json", "catalog.json"})
_SPEC_FACTS = (["SPEC_SHA256"], ["TOOL_COUNT"])  # in `_about.py`: see `_without_spec_facts`
_EVERY = "*"  # the dependency of a tool whose imports are not all understood: every file
_CATALOG_ENTRY = re.compile(r"catalog-[0-9a-f]{64}")  # the name of a catalog entry (`cache.key`)


class ToolSource(NamedTuple):
    name: str  # the tool's name
    module: str  # its module under tools/ (tools.INDEX)
    view: Any  # its table view (tools.VIEWS), None when it has none


class Keys:
    """Each tool's key: a digest of everything its listing depends on (see the module's docstring)."""

    def __init__(
        self,
        files: Mapping[str, str | bytes],
        imports: Mapping[str, Iterable[tuple[object, ...]]],
        module: str,
        model_modules: Mapping[str, str],
        budget: int,
    ) -> None:
        """`files`: the package's files (path -> text); `imports`: each checked Python file's imports
        as `(module, level, name, asname)`; `module`: the package's module; `model_modules`: each
        model class -> its module under models/."""
        self.files, self.imports, self.model_modules = files, imports, model_modules
        self.src = f"src/{module}/"
        self.tools, self.models = self.src + "tools/", self.src + "models/"
        shared = sorted(
            (path, _without_spec_facts(text) if path == f"{self.src}_about.py" else text)
            for path, text in files.items()
            if self._read(path) and not path.startswith((self.tools, self.models))
        )
        self.common = cache.key("catalog tool", f"budget {budget}", *(part for pair in shared for part in pair))
        self._digests: dict[str, str] = {}
        self._closures: dict[str, frozenset[str]] = {}
        self._every: str | None = None  # the digest of every file a listing may read, made once

    def of(self, tool: ToolSource) -> str:
        path = f"{self.tools}{tool.module}.py"
        needs: set[str] = set()
        for dependency in self._direct(path, self.tools):
            needs |= self._closure(dependency)
        parts = [tool.name, tool.module, json.dumps(tool.view), self._digest(path)]
        if _EVERY in needs:  # then every file counts
            parts.append(self._every_file())
        else:
            parts += [f"{name} {self._digest(f'{self.models}{name}.py')}" for name in sorted(needs)]
        return cache.key("catalog tool", self.common, *parts)

    def _every_file(self) -> str:
        if self._every is None:
            every = [f"{name} {self._digest(name)}" for name in sorted(self.files) if self._read(name)]
            self._every = hashlib.sha256("\n".join(every).encode()).hexdigest()
        return self._every

    def _read(self, path: str) -> bool:
        """Whether a tool's listing may read the package file at `path`."""
        return path.startswith(self.src) and path[len(self.src) :] not in _UNREAD

    def _digest(self, path: str) -> str:
        found = self._digests.get(path)
        if found is None:
            text = self.files.get(path)
            data = b"\0missing" if text is None else text.encode() if isinstance(text, str) else text
            found = self._digests[path] = hashlib.sha256(data).hexdigest()
        return found

    def _direct(self, path: str, folder: str) -> set[str]:
        """The model modules the module at `path` (in `folder`: tools/ or models/) imports itself;
        `_EVERY` among them for an import not understood."""
        imports = self.imports.get(path)
        if imports is None:
            return {_EVERY}
        found: set[str] = set()
        from_tool = folder == self.tools
        for module, level, name, _ in imports:
            first, _, rest = module.partition(".") if isinstance(module, str) else ("", "", "")
            if level == 0:
                continue  # a library
            if level == 2 and first and first not in ("models", "tools"):
                continue  # the package's own code outside tools/ and models/: in `common`
            if from_tool and level == 2 and first == "models":
                # `from ..models import Name` (through models/__init__.py) or `from ..models.module import Name`
                found.add(rest.partition(".")[0] if rest else self.model_modules.get(str(name), _EVERY))
            elif not from_tool and level == 1 and first:
                found.add(first)  # `from .sibling import Name`
            else:
                found.add(_EVERY)
        return found

    def _closure(self, model: str) -> frozenset[str]:
        """`model` and the model modules it imports, directly or not."""
        if model == _EVERY:
            return frozenset({_EVERY})
        known = self._closures.get(model)
        if known is not None:
            return known
        seen, queue = {model}, [model]
        while queue:
            for other in self._direct(f"{self.models}{queue.pop()}.py", self.models):
                if other == _EVERY:
                    seen.add(_EVERY)
                elif other not in seen:
                    seen.add(other)
                    queue.append(other)
        self._closures[model] = closure = frozenset(seen)
        return closure


def _without_spec_facts(text: str | bytes) -> str | bytes:
    """`_about.py` without the facts about the whole spec (its digest, its number of tools), which
    change with any edit of the spec and which no tool's listing reads: every other line still counts."""
    if not isinstance(text, str):
        return text
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    tree.body = [
        node
        for node in tree.body
        if not (isinstance(node, ast.Assign) and [ast.unparse(target) for target in node.targets] in _SPEC_FACTS)
    ]
    return ast.dump(tree)


def _index_entry(module: str) -> str:
    return cache.key("catalog keys", module)


def remember(module: str, catalog_entry: str, keys: Mapping[str, str]) -> None:
    """Record which cached catalog holds the package's tools, and each one's key, for the next run."""
    cache.put(_index_entry(module), json.dumps({"catalog": catalog_entry, "keys": dict(keys)}, sort_keys=True))


def recorded(module: str) -> bool:
    """Whether the cache records a catalog of the package `module`, whose tools a run may reuse."""
    return cache.get(_index_entry(module)) is not None


class Reused(NamedTuple):
    tools: dict[str, Packed]  # tool -> its entry, added to the packer
    trimmed: dict[str, int]  # of those, the ones the budget trimmed -> depth of references kept


def previous(module: str, keys: Mapping[str, str], packer: Packer) -> Reused:
    """The tools of the package's last catalog whose keys are the same now, added to `packer`."""
    found = Reused({}, {})
    index = cache.get(_index_entry(module))
    if index is None:
        return found
    try:
        recorded = json.loads(index)
        old_keys, entry = recorded["keys"], recorded["catalog"]
        if not (isinstance(old_keys, dict) and isinstance(entry, str) and _CATALOG_ENTRY.fullmatch(entry)):
            raise ValueError("not an index of keys")  # the name of another file is never read
        text = cache.get(entry)
        if text is None:
            return found
        data = read(text)
        problem = layout_problem({**data, "tools": [], "sizes": []})
        if problem is not None or len(data["tools"]) != len(data["sizes"]):
            raise ValueError(problem or "not one size per tool")
        trimmed = (data.get("budget") or {}).get("trimmed", {})
        for each, size in zip(data["tools"], data["sizes"], strict=True):
            tool = json.loads(each)  # one at a time (`read`), as the whole catalog's layout is checked
            problem = layout_problem({**data, "tools": [tool], "sizes": [size]})
            if problem is not None:
                raise ValueError(problem)
            name = tool["name"]
            if name in keys and keys[name] == old_keys.get(name):
                found.tools[name] = packer.add_packed(tool, data["shared"], size)
                if type(trimmed.get(name)) is int:
                    found.trimmed[name] = trimmed[name]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:  # json's errors are ValueErrors
        cache.warn(_index_entry(module), f"it is not an index of a catalog ({exc})")
        return Reused({}, {})
    return found
