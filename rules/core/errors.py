"""The one error rules/ raises for bad user input; the CLI turns it into one line and exit 2."""

from __future__ import annotations

from typing import Iterable, Optional


class RulesInputError(ValueError):
    """Bad input (a name, a file, a value). `choices`, when given, are the valid values (for did-you-mean)."""

    def __init__(self, message: str, choices: Optional[Iterable[str]] = None, word: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.choices = sorted(choices) if choices is not None else None
        self.word = word
