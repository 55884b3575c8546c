#!/usr/bin/env python3
"""check_compile_fail.py: compile one file with the project's own command line, -fsyntax-only.

    check_compile_fail.py COMPILE_COMMANDS_JSON SOURCE             # must fail with the text on line 1
    check_compile_fail.py COMPILE_COMMANDS_JSON SOURCE --compiles  # must compile

The command is the one meson wrote for SOURCE into compile_commands.json (so the compiler, -std,
include paths, Boost and project arguments are exactly the build's); the file's meson target is
never built. A compile-fail file's first line is `// expect: <text>`: the check passes only when
compilation fails and <text> appears in the first error's diagnostic (the error line, its context
and source snippet), so a file that fails for another reason (a missing header, a typo, an earlier
assertion) fails the check.
"""
import json, os, re, shlex, subprocess, sys

EXPECT = "// expect:"
DROP_WITH_VALUE = {"-o", "-MF", "-MQ", "-MT"}  # outputs of a real build: not wanted here
DROP = {"-c", "-MD", "-MMD"}


def command_for(compdb_path, source):
    source = os.path.realpath(source)
    with open(compdb_path) as f:
        for entry in json.load(f):
            if os.path.realpath(os.path.join(entry["directory"], entry["file"])) != source:
                continue
            args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
            kept, skip = [], False
            for a in args:
                if skip:
                    skip = False
                elif a in DROP_WITH_VALUE:
                    skip = True
                elif a not in DROP and not a.startswith("-fdiagnostics-color") and a != entry["file"]:
                    kept.append(a)
            return entry["directory"], kept + ["-fsyntax-only", "-fdiagnostics-color=never", source]
    sys.exit(f"check_compile_fail: {source} is not in {compdb_path} (is it a source of a meson target?)")


def first_error(output):
    """The output up to the second error: the first error with its context, snippet and notes."""
    lines = output.splitlines()
    errors = [i for i, line in enumerate(lines) if re.search(r"\berror:", line)]
    return "\n".join(lines[: errors[1]] if len(errors) > 1 else lines)


def excerpt(text, limit=6000):
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--compiles"):
        sys.exit(__doc__)
    compdb, source, compiles = sys.argv[1], sys.argv[2], len(sys.argv) == 4
    cwd, cmd = command_for(compdb, source)
    result = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = result.stdout
    print("$", shlex.join(cmd))

    if compiles:
        if result.returncode != 0:
            print(f"FAIL: {source} should compile\n{excerpt(output)}")
            return 1
        print(f"ok: {source} compiles")
        return 0

    with open(source) as f:
        line = f.readline().strip()
    if not line.startswith(EXPECT) or not line[len(EXPECT):].strip():
        print(f"FAIL: {source}: the first line must be `{EXPECT} <text of the static_assert>`")
        return 1
    expected = line[len(EXPECT):].strip()
    if result.returncode == 0:
        print(f"FAIL: {source} compiled, but should fail with: {expected}")
        return 1
    if expected not in first_error(output):
        why = "is not in the first error" if expected in output else "does not appear"
        print(f"FAIL: {source} failed, but for another reason: the expected text {why}\n"
              f"  expected: {expected}\n{excerpt(first_error(output))}")
        return 1
    print(f"ok: {source} fails with: {expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
