"""Writes a task file's [planner] table, leaving the rest of the file as it was."""

import json
import os
import re
import tempfile

_HEADER = re.compile(r"^\s*\[")  # a table ([x]) or array-of-tables ([[x]]) header
_PLANNER = re.compile(r"^\s*\[planner\]\s*(#.*)?$")


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = f"{value:.4g}"
        return text if any(c in text for c in ".en") else text + ".0"
    return json.dumps(value)  # a TOML basic string


def format_table(options, comments=()):
    """A [planner] table of `options` (key -> value), each comment a '# ' line above."""
    lines = ["[planner]"] + [f"# {c}" for c in comments]
    lines += [f"{key} = {toml_value(value)}" for key, value in options.items()]
    return "\n".join(lines) + "\n"


def replace_table(text, table):
    """`text` (a task file) with its [planner] table replaced by `table`, or added.

    The old table runs from its header to the next header; comment and
    blank lines just above the next header stay with it.
    """
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _PLANNER.match(line)), None)
    if start is None:
        return text + ("" if text.endswith("\n") or not text else "\n") + "\n" + table
    end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
    if end < len(lines):
        while end - 1 > start and (not lines[end - 1].strip() or
                                   lines[end - 1].lstrip().startswith("#")):
            end -= 1
    tail = lines[end:]
    separator = "\n" if tail and tail[0].strip() else ""
    return "".join(lines[:start]) + table + separator + "".join(tail)


def write_whole(path, text):
    """Writes `path` so that a reader (or a kill) sees the old file or the new, never a part."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tune-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if os.path.exists(path):
            os.chmod(temporary, os.stat(path).st_mode & 0o777)
        else:  # as open() would make it, not mkstemp's owner-only mode
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
