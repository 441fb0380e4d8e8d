"""Reuse a page's Markdown conversion while everything it was made from is unchanged (MkDocs).

Converting a chapter is most of a warm build (Pygments alone highlights some 900 code
blocks), yet between two builds, and between two saves under ``mkdocs serve``, nearly
every page converts to the same HTML. MkDocs offers no hook that skips ``Page.render``;
like mkdocs-jupyter, which gives notebook pages their own ``render``, the plugin gives each
Markdown page one of its own (`RenderMemo.install`). It converts as MkDocs would the first
time and stores what the conversion left on the page; a later build whose input is the
same takes it back instead of converting again.

"The same" means: the page's final Markdown (numbook's outputs already in it), its path
and URL, the Markdown extensions and their options, the installed versions of the
packages that convert, numbook's own source, the values of the environment variables the
build reads (numbook's ``env`` option), and, recorded while converting, every project file
an extension read (``pymdownx.snippets``' glossary) with its sha256 when read
(`numbook.inputs`) and every link target MkDocs looked up with what it found. A conversion
that raised, or during which a file it read changed, is never stored; the messages it
logged are stored and logged again when it is reused, so ``strict`` fails exactly as it
would have.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from jinja2.bccache import Bucket, BytecodeCache
from mkdocs.structure.files import Files
from mkdocs.structure.toc import get_toc

from .cache import _installed, numbook_source
from .extension import unexecuted_allowed
from .inputs import Reads, environment_values, recording
from .stored import read_checked, sha256_file, write_checked

FORMAT_VERSION = 1
_DISTRIBUTIONS = ("markdown", "pymdown-extensions", "mkdocs", "pygments", "mkdocs-material")


def stable_repr(value: Any) -> str:
    """A text for ``value`` that is the same in every process (no memory addresses):
    the options of Markdown extensions hold functions and objects made by YAML tags."""
    if isinstance(value, Mapping):  # MkDocs' sub-configurations too (their data, not where they were read)
        return "{" + ",".join(f"{stable_repr(k)}:{stable_repr(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(stable_repr(v) for v in value) + "]"
    if value is None or isinstance(value, (str, int, float, bool)):
        return repr(value)
    if isinstance(value, functools.partial):
        return f"partial({stable_repr(value.func)},{stable_repr(value.args)},{stable_repr(value.keywords)})"
    name = getattr(value, "__qualname__", None)
    if name is not None:  # a function or a class
        return f"{getattr(value, '__module__', '')}.{name}"
    state = getattr(value, "__dict__", None)
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    return f"{kind}({stable_repr(state)})" if state is not None else kind


@functools.lru_cache(maxsize=1)  # the code converting in this process does not change
def converter_fingerprint() -> str:
    """The installed packages that convert Markdown, and numbook's own source."""
    parts = [f"format {FORMAT_VERSION}", f"python {sys.version}", numbook_source()]
    parts += [f"{dist} {_installed(dist)}" for dist in _DISTRIBUTIONS]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class _LookupRecorder:
    """``files`` as MkDocs' link processor sees it, noting each path it looked up and what it found."""

    def __init__(self, files: Files) -> None:
        self._files = files
        self.found: dict[str, Any] = {}

    def get_file_from_path(self, path: str) -> Any:
        target = self._files.get_file_from_path(path)
        self.found[path] = _describe(target)
        return target

    def __getattr__(self, name: str) -> Any:
        return getattr(self._files, name)

    def __iter__(self) -> Any:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def _describe(target: Any) -> list[Any] | None:
    return None if target is None else [target.url, str(target.inclusion)]


class _Messages(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class RenderMemo:
    """Stored conversions, one file per page under ``directory`` (safe to delete)."""

    def __init__(self, directory: str, root: str, skip: list[str], variables: Sequence[str] = ()) -> None:
        self.directory = directory
        self.root, self.skip = root, skip
        self.environment = json.dumps(environment_values(variables), sort_keys=True)
        self.hits = 0
        self.misses = 0
        self.read: set[str] = set()  # the files the conversions of this build depend on (serve watches them)

    def install(self, page: Any) -> None:
        """Give ``page`` a render that reuses a stored conversion when it can."""
        original = page.render  # MkDocs' own

        def render(config: Any, files: Files) -> None:
            key = self._key(page, config)
            if self._restore(page, files, key):
                self.hits += 1
                return
            self.misses += 1
            self._convert_and_store(page, config, files, key, original)

        page.render = render

    def _key(self, page: Any, config: Any) -> str:
        parts = [
            converter_fingerprint(),
            page.file.src_uri,
            page.file.url,
            stable_repr(config["markdown_extensions"]),
            stable_repr(config["mdx_configs"]),
            stable_repr(dict(config["validation"])),
            str(config["use_directory_urls"]),
            str(unexecuted_allowed()),
            self.environment,
            page.markdown,
        ]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def _path(self, page: Any) -> str:
        return os.path.join(self.directory, re.sub(r"[^A-Za-z0-9_.-]", "_", page.file.src_uri) + ".json")

    def _restore(self, page: Any, files: Files, key: str) -> bool:
        path = self._path(page)
        try:
            entry = json.loads(read_checked(path))
        except FileNotFoundError:
            return False
        except (OSError, ValueError) as exc:
            logging.getLogger("mkdocs.plugins.numbook").info("numbook: damaged render cache %s (%s); converting", path, exc)
            return False
        if entry.get("format") != FORMAT_VERSION or entry.get("key") != key:
            return False
        reads = {os.path.join(self.root, p): digest for p, digest in entry["reads"].items()}
        if any(sha256_file(p) != digest for p, digest in reads.items()):
            return False
        self.read.update(reads)
        if any(_describe(files.get_file_from_path(p)) != found for p, found in entry["lookups"].items()):
            return False
        page.content = entry["content"]
        page.toc = get_toc(entry["toc_tokens"])
        page._title_from_render = entry["title"]
        page.present_anchor_ids = set(entry["anchors"])
        if entry["links_to_anchors"] is not None:
            page.links_to_anchors = {files.get_file_from_path(k): v for k, v in entry["links_to_anchors"].items()}
        for name, level, message in entry["messages"]:
            logging.getLogger(name).log(level, "%s", message)
        return True

    def _convert_and_store(self, page: Any, config: Any, files: Files, key: str, original: Any) -> None:
        lookups = _LookupRecorder(files)
        messages = _Messages()
        loggers = [logging.getLogger("mkdocs"), logging.getLogger()]
        for logger in loggers:
            logger.addHandler(messages)
        reads = Reads(self.root, self.skip)
        try:
            with recording(reads):
                original(config, lookups)
        finally:
            for logger in loggers:
                logger.removeHandler(messages)
        self.read.update(reads.files)
        if reads.changed():
            return  # a file it read changed meanwhile: converted again next time
        if page.links_to_anchors is not None:  # MkDocs keyed them by the File objects it found
            links = {f.src_uri: v for f, v in page.links_to_anchors.items()}
        else:
            links = None
        seen = {id(r): r for r in messages.records}  # a record may reach both handlers
        entry = {
            "format": FORMAT_VERSION,
            "key": key,
            "content": page.content,
            "toc_tokens": _toc_tokens(page.toc),
            "title": page._title_from_render,
            "anchors": sorted(page.present_anchor_ids or ()),
            "links_to_anchors": links,
            "messages": [[r.name, r.levelno, r.getMessage()] for r in seen.values()],
            "reads": reads.relative(),  # relative to the project: a cache can move with it
            "lookups": lookups.found,
        }
        write_checked(self._path(page), json.dumps(entry, sort_keys=True).encode())


class TemplateCodeMemo(BytecodeCache):
    """The theme's compiled templates, kept in this process's memory from one build to the
    next (`mkdocs serve` makes a new Jinja environment for each): compiling them took a
    quarter of a second of every save (profiled). Code objects never leave the process, so
    nothing is marshalled or read back from a file. A template is compiled again when its
    source changes, or anything of the environment the compiler reads: its syntax options,
    extensions, ``finalize``, and what each filter and test asks to be passed."""

    MAXSIZE = 256  # templates; an edited override adds one per save

    def __init__(self) -> None:
        self._code: dict[tuple[Any, ...], Any] = {}

    @staticmethod
    def _key(bucket: Bucket) -> tuple[Any, ...]:
        env = bucket.environment

        def passes(functions: Mapping[str, Any]) -> tuple[Any, ...]:
            return tuple(sorted((name, str(getattr(f, "jinja_pass_arg", None))) for name, f in functions.items()))

        compiler_reads = (
            env.block_start_string, env.block_end_string, env.variable_start_string, env.variable_end_string,
            env.comment_start_string, env.comment_end_string, env.line_statement_prefix, env.line_comment_prefix,
            env.trim_blocks, env.lstrip_blocks, env.newline_sequence, env.keep_trailing_newline, env.optimized,
            env.autoescape, env.is_async, tuple(sorted(env.extensions)), passes(env.filters), passes(env.tests),
            env.finalize is None, str(getattr(env.finalize, "jinja_pass_arg", None)),
        )
        return bucket.key, bucket.checksum, compiler_reads

    def load_bytecode(self, bucket: Bucket) -> None:
        bucket.code = self._code.get(self._key(bucket))

    def dump_bytecode(self, bucket: Bucket) -> None:
        if len(self._code) >= self.MAXSIZE:
            self._code.pop(next(iter(self._code)))
        self._code[self._key(bucket)] = bucket.code


def _toc_tokens(items: Any) -> list[dict[str, Any]]:
    """The tokens `get_toc` makes ``page.toc`` from, back from the table it made."""
    return [{"name": a.title, "id": a.id, "level": a.level, "children": _toc_tokens(a.children)} for a in items]
