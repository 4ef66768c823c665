"""Reading a YAML file so that a syntax error reads as one sentence: line, column, what is wrong.

PyYAML's own message cites `"<unicode string>"` and draws a caret under a copy of the line; the
callers (inventory, settings) put the file's name in front of what this returns.

A key given twice in one mapping, at any depth, is an error that names the key and both lines:
PyYAML keeps the last one silently, so a second `rules:` block would drop the first one's deny
rules. Every YAML file Scout reads (settings, inventory, recipes, its own bundled data) goes
through `load_yaml` (tests/unit/test_yaml_files.py holds agent/ and tools/ to it), except a file
another program defines, read as that program reads it (`load_yaml_as_pyyaml`: a community
recipe, whose runner keeps the last value; the duplicate is then said, not refused).

The text is UTF-8, or UTF-16/32 with a byte order mark (the encodings YAML 1.2 names; Windows
PowerShell writes UTF-16 with a mark). Anything else (Latin-1, a stray 0xff) is a syntax error
that names the first byte that is not UTF-8 and says to save the file as UTF-8.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode


class YAMLSyntaxError(ValueError):
    """The text is not valid YAML; `str()` is `line L, column C: what the parser expected`."""


class DuplicateKeyError(YAMLSyntaxError):
    """A mapping names one key twice; `str()` names the key, where it sits and both lines."""

    def __init__(self, key: Any, path: tuple[str, ...], lines: tuple[int, int]) -> None:
        self.key, self.path, self.lines = key, path, lines
        where = f" in {'.'.join(path).replace('.[', '[')}" if path else ""
        super().__init__(f"key {str(key)!r}{where} appears twice (lines {lines[0]} and {lines[1]})")


MERGE_TAG = "tag:yaml.org,2002:merge"
# what _scalar_key returns for a key it does not compare: not None, which is a key (`~: x`)
_NOT_COMPARED = object()


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader that refuses a key given twice in one mapping, before it builds
    the document (the node tree still holds every key with its line; the dict would not)."""

    def construct_document(self, node: Node) -> Any:
        self._refuse_duplicates(node, (), set())
        return super().construct_document(node)

    def _refuse_duplicates(self, node: Node, path: tuple[str, ...], seen: set[int]) -> None:
        if id(node) in seen:  # an alias: its anchor's nodes were checked where they stand
            return
        seen.add(id(node))
        if isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                self._refuse_duplicates(item, (*path, f"[{index}]"), seen)
        elif isinstance(node, MappingNode):
            first_line: dict[Any, int] = {}
            for key_node, value_node in node.value:
                key = self._scalar_key(key_node)
                line = key_node.start_mark.line + 1
                if key is not _NOT_COMPARED:
                    if key in first_line:
                        self._duplicate(DuplicateKeyError(key, path, (first_line[key], line)))
                    first_line[key] = line
                self._refuse_duplicates(value_node, (*path, str(key)), seen)

    def _duplicate(self, error: DuplicateKeyError) -> None:
        raise error

    def _scalar_key(self, key_node: Node) -> Any:
        """The key as the mapping will hold it (`yes` and `true` are one key, as are `~` and
        `null`), or _NOT_COMPARED for a merge (`<<`, whose keys an explicit one may override)
        or a key that is not a scalar."""
        if not isinstance(key_node, ScalarNode) or key_node.tag == MERGE_TAG:
            return _NOT_COMPARED
        key = self.construct_object(key_node)
        try:
            hash(key)
        except TypeError:
            return _NOT_COMPARED
        return key


class _LastKeyLoader(_UniqueKeyLoader):
    """PyYAML's safe loader as it is: the last of a key given twice wins; each one is noted."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[DuplicateKeyError] = []

    def _duplicate(self, error: DuplicateKeyError) -> None:
        self.duplicates.append(error)


_MARKED = (  # longest mark first: UTF-32's little-endian mark begins like UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def read_yaml(path: Path) -> Any:
    """The parsed file; OSError as raised by reading it, YAMLSyntaxError for bad syntax."""
    return load_yaml(decode_text(path.read_bytes()))


def load_yaml(text: str) -> Any:
    """The parsed text; YAMLSyntaxError for bad syntax, DuplicateKeyError for a key given twice."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader: builds no objects
    except yaml.YAMLError as exc:
        raise YAMLSyntaxError(describe_yaml_error(exc)) from None


def load_yaml_as_pyyaml(text: str) -> tuple[Any, list[DuplicateKeyError]]:
    """The text as a program that reads it with PyYAML's `safe_load` sees it (a community
    recipe, read by its own runner): a key given twice keeps its last value, and each such key is
    returned so that the caller says so, instead of refusing a file its runner accepts."""
    loader = _LastKeyLoader(text)
    try:
        return loader.get_single_data(), loader.duplicates
    except yaml.YAMLError as exc:
        raise YAMLSyntaxError(describe_yaml_error(exc)) from None
    finally:
        loader.dispose()


def decode_text(data: bytes) -> str:
    """The file's text; YAMLSyntaxError naming where the first byte that is not text sits."""
    encoding = next((name for mark, name in _MARKED if data.startswith(mark)), "utf-8")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        shown = encoding.removesuffix("-sig").upper()
        what = f"byte 0x{data[exc.start]:02x} is not {shown} text; save the file as UTF-8"
        raise YAMLSyntaxError(f"{_where(data, exc.start)}: {what}") from None
    if "\0" in text:  # never YAML: UTF-16 without its byte order mark, or a binary file
        where = _where(text.encode(), text.encode().index(b"\0"))
        raise YAMLSyntaxError(f"{where}: a NUL byte is not text; save the file as UTF-8")
    return text


def _where(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        problem += f" ({context} that starts on line {context_mark.line + 1})"
    elif context:
        problem += f" ({context})"
    return where + problem
