#!/usr/bin/env python3
"""tierio-env(7) from docs/settings.md (itself generated from the code's key tables), so
that the manual page cannot drift either: tests/unit/check_man.sh compares.

    make_env_man.py docs/settings.md VERSION > docs/man/tierio-env.7
"""
import re
import sys

md, version = sys.argv[1], sys.argv[2]


def roff(text):
    """Markdown inline text as roff: code spans bold, escapes for backslash and leading dot."""
    text = text.replace("\\|", "|").replace("\\", "\\e")
    text = re.sub(r"`([^`]*)`", r"\\fB\1\\fR", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return text if not text.startswith((".", "'")) else "\\&" + text


out = [f'.TH TIERIO-ENV 7 "" "tierio {version}" "tierio manual"',
       ".SH NAME",
       "tierio-env \\- the info keys and environment variables tierio reads",
       ".SH DESCRIPTION"]
for line in open(md).read().splitlines():
    if line.startswith("# ") or not line.strip() or line.startswith("| ---"):
        continue
    if line.startswith("## "):
        out.append(".SH " + roff(line[3:]).upper())
    elif line.startswith("| info key"):
        continue
    elif line.startswith("|"):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        key, alias, env, fallback, values, default, meaning = cells
        names = ", ".join(roff(c) for c in (key, alias, env) if c)
        out.append(".TP")
        out.append(names)
        text = roff(meaning)
        if values:
            text += " Values: " + roff(values) + "."
        if default:
            text += " Default: " + roff(default) + "."
        if fallback:
            text += " Without it: the MPI-IO hint " + roff(fallback) + "."
        out.append(text)
    else:
        out.append(".PP")
        out.append(roff(line))
out += [".SH SEE ALSO", "tierio(1); docs/settings.md in the source tree."]
print("\n".join(out))
