#!/usr/bin/python3
"""muevald.toml(5), written from muevald's configuration table and config/muevald.toml's comments.

    packaging/man/muevald-toml.py MUEVALD CONFIG DATE > muevald.toml.5

The settings, their types, defaults, environment variables and whether a reload applies them come
from `MUEVALD --configuration-reference` (the table in Sources/Daemon/DaemonConfiguration.swift);
what each one means comes from the comment above it in CONFIG, the file the package installs as
/etc/mueval/muevald.toml. A setting of the table that CONFIG does not document, or a commented
setting the table does not know, stops it (exit 1): the manual cannot drift from either.
"""

import json
import re
import subprocess
import sys

SETTING = re.compile(r"^#(\w+) = .*$")
SECTION = re.compile(r"^\[([\w.]+)\]$")


def blocks(config_text):
    """The file's leading comment, and its blocks in order: (section, comment lines, setting names)."""
    lines = config_text.splitlines()
    preamble = []
    while lines and lines[0].startswith("#"):
        preamble.append(lines.pop(0)[1:].removeprefix(" "))
    found, section, comment, names = [], None, [], []

    def close():
        nonlocal comment, names
        if names:
            found.append((section, comment, names))
        elif comment:
            raise SystemExit(f"muevald-toml: a comment in [{section}] documents no setting: {comment[0]!r}")
        comment, names = [], []

    for line in lines:
        if match := SECTION.match(line):
            close()
            section = match.group(1)
        elif match := SETTING.match(line):
            names.append(match.group(1))
        elif line.startswith("#"):
            if names:  # a new comment right after settings starts the next block
                close()
            comment.append(line[1:].removeprefix(" "))
        elif not line.strip():
            close()
    close()
    return preamble, found


def roff(text):
    """One line of text for man(7): backslashes escaped, no line taken for a request, UTF-8 as \\[uXXXX]."""
    text = text.replace("\\", "\\e")
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return "\\&" + text if text.startswith((".", "'")) else text


def toml_literal(setting):
    value = setting["defaultValue"]
    match setting["type"]:
        case "string":
            return json.dumps(value, ensure_ascii=False)
        case "list":
            return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value.split(",") if v) + "]"
        case _:
            return value


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.split("\n\n")[1])
    muevald, config, date = sys.argv[1:]
    table = json.loads(subprocess.run([muevald, "--configuration-reference"], check=True,
                                      capture_output=True, text=True).stdout)
    settings = {s["key"]: s for s in table}
    with open(config, encoding="utf-8") as f:
        preamble, documented = blocks(f.read())
    keys = [f"{section}.{name}" for section, _, names in documented for name in names]
    unknown = [k for k in keys if k not in settings]
    missing = [k for k in settings if k not in keys]
    if unknown or missing:
        raise SystemExit(f"muevald-toml: {config} and muevald's table differ: documented but unknown to muevald: "
                         f"{', '.join(unknown) or 'none'}; known but not documented: {', '.join(missing) or 'none'}")

    out = [f'.TH MUEVALD.TOML 5 "{date}" "muEval" "File Formats"',
           ".nh", ".SH NAME", "muevald.toml \\- configuration file of muevald, the muEval capture server",
           ".SH SYNOPSIS", "/etc/mueval/muevald.toml",
           ".SH DESCRIPTION"]
    for line in preamble:
        out.append(roff(line) if line.strip() else ".PP")
    out += [".PP", "Each setting below gives its type, its default, the environment variables that set it, and",
            "whether \\fBsystemctl reload muevald\\fR (SIGHUP) applies a change without a restart."]
    section = None
    for block_section, comment, names in documented:
        if block_section != section:
            section = block_section
            out.append(f".SH [{section}]")
        for name in names:
            s = settings[f"{section}.{name}"]
            reload = "reloadable" if s["reloadable"] else "needs a restart"
            out += [".TP", f"\\fB{name}\\fR = {roff(toml_literal(s))}",
                    roff(f"{s['allowed'][0].upper()}{s['allowed'][1:]}; {reload}; environment: {', '.join(s['environment'])}.")]
        out.append(".IP")
        out += [roff(line) if line.strip() else ".IP" for line in comment]
    out += [".SH FILES", ".TP", "/etc/mueval/muevald.toml",
            "The configuration of the muevald service; every setting in it is commented out, showing its default.",
            ".SH SEE ALSO", "\\fBmuevald\\fR(8), \\fBmuevalctl\\fR(1), \\fBsystemctl\\fR(1)"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
