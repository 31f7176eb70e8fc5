"""A Dockerfile read into its instructions, so that a test runs the exact commands the file holds
(RUN, CMD, HEALTHCHECK) instead of copies of them. Covers what the generated Dockerfile uses:
comments, `\\` continuations, ENV `KEY=value` pairs, the exec (JSON) form of CMD and HEALTHCHECK."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case: FROM, ENV, RUN, ...
    text: str  # everything after the keyword, continuations joined

    def exec_form(self) -> list[str]:
        """CMD/ENTRYPOINT/HEALTHCHECK in exec form: the JSON array (after HEALTHCHECK's options and CMD)."""
        text = self.text
        if self.keyword == "HEALTHCHECK":
            words = text.split()
            index = words.index("CMD")
            text = text.split(None, index + 1)[index + 1]
        command = json.loads(text)
        if not (isinstance(command, list) and all(isinstance(word, str) for word in command)):
            raise ValueError(f"{self.keyword} is not in exec form: {self.text[:80]}")
        return command

    def pairs(self) -> dict[str, str]:
        """ENV's `KEY=value` pairs (shell-quoted values unquoted)."""
        found = {}
        for word in shlex.split(self.text):
            key, sep, value = word.partition("=")
            if not sep:
                raise ValueError(f"ENV without '=': {word}")
            found[key] = value
        return found


def instructions(path: Path) -> list[Instruction]:
    found, pending = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, text = (pending + line).strip().partition(" ")
        found.append(Instruction(keyword.upper(), text.strip()))
        pending = ""
    return found
