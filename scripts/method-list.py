#!/usr/bin/python3
"""Writes `Methods.all` for DriverAPI (the MethodList build plugin runs it at every build where a file changed).

    method-list.py OUTPUT SOURCE...

Every `static let NAME: [MethodDescriptor] =` in the sources is a namespace's list of methods; `all` is their
concatenation, in file order. A namespace's file is its own registration: nothing else lists it.
"""
import re
import sys

LIST = re.compile(r"^\s*(?:public\s+)?static let (\w+): \[MethodDescriptor\] =", re.MULTILINE)


def main():
    output, sources = sys.argv[1], sys.argv[2:]
    names = []
    for path in sources:
        with open(path, encoding="utf-8") as f:
            names += LIST.findall(f.read())
    if not names:
        sys.exit("method-list.py: no `static let NAME: [MethodDescriptor]` list in the sources")
    text = (
        "// Written by scripts/method-list.py (the MethodList build plugin) from DriverAPI's files. Do not edit.\n"
        "extension Methods {\n"
        "    /// Every method, once, from each namespace's list.\n"
        "    public static let all: [MethodDescriptor] = [\n"
        + "".join(f"        {name},\n" for name in names)
        + "    ].flatMap { $0 }\n"
        "}\n"
    )
    try:
        with open(output, encoding="utf-8") as f:
            if f.read() == text:
                return  # unchanged: nothing downstream rebuilds
    except FileNotFoundError:
        pass
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
