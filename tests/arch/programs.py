#!/usr/bin/env python3
"""programs.py - the tests call only programs that scripts/install-deps.sh installs.

scripts/programs.txt is the list: each program a test, or a script a test runs, may call, with the Debian
package that provides it.  install-deps.sh reads the same file and installs the package of every program that
is missing, so on a fresh Debian 12 machine `make test` finds each of them (scripts/fresh-check.sh runs it there).

This check reads every script the tests run (tests/**/*.sh|*.bash|*.py, the shell lines of the data-driven
corpora (`run:` and `setup:` in tests/**/*.txt), the CMake test commands, .ci/run, and each scripts/ file one of
them names, transitively) and finds the words in command position with a small shell lexer: after a newline,
`;`, `|`, `&&`, `||`, `(`, `$(`, a backtick and the keywords that start a command list, skipping quoted text,
comments, here-documents, assignments, redirections and `case` patterns.  A command word must be a shell
builtin or keyword, a function defined in the scanned scripts, a path or variable (the project's own
programs: `$PF`, `./build/...`), a program the project builds (preflight*), or a program in programs.txt.  A line that the tests never run
(a branch for a Slurm cluster, say) says so with `# not-run-by-tests: REASON`.

usage: programs.py SOURCE_DIR [FILE...]   (FILEs: scan only these, for the planted test)
"""
import os
import re
import sys

BUILTINS = set("""
. : [ [[ ]] alias bg bind break builtin caller case cd command compgen complete continue declare dirs disown do
done echo elif else enable esac eval exec exit export false fc fg fi for function getopts hash help history if in
jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly return select set shift shopt
source suspend test then time times trap true type typeset ulimit umask unalias unset until wait while ! { }
""".split())
# words after which the next word is again a command (wrappers whose argument is a command line)
REENTER = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "exec", "command", "builtin",
           "nohup", "nice", "env", "xargs", "timeout", "setsid", "stdbuf", "chroot"}
# wrappers that take options or a fixed argument before the command
WRAP_SKIP = {"timeout": 1, "chroot": 1}
PROJECT = re.compile(r"^preflight(-[a-z0-9_-]+)?$|^(fuzz|test)_[a-z0-9_]+$")


def read_programs(src):
    allowed = {}
    with open(os.path.join(src, "scripts", "programs.txt")) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) != 2:
                sys.exit(f"scripts/programs.txt:{n}: expected 'PROGRAM PACKAGE'")
            allowed[line[0]] = line[1]
    return allowed


class Lexer:
    """Yields (line, word, first) for the words of a shell text; first=True in command position."""

    def __init__(self, text):
        self.t, self.i, self.line = text, 0, 1
        self.heredocs = []
        self.found = []  # (line, word, first) of the $( ... ) lists inside words, lexed on their own

    def words(self):
        t = self.t
        first, skip_next, case_depth, in_pattern = True, 0, 0, False
        for_header = False
        while self.i < len(t):
            c = t[self.i]
            if c == "\n":
                self.line += 1
                self.i += 1
                if self.heredocs:
                    self.skip_heredocs()
                first, for_header = True, False
                continue
            if c in " \t\\":
                self.i += 1 + (c == "\\")
                continue
            if c == "#":
                while self.i < len(t) and t[self.i] != "\n":
                    self.i += 1
                continue
            if t.startswith(";;", self.i):
                self.i += 2
                in_pattern, first = True, False
                continue
            if c in ";&|(){}`" or t.startswith("$(", self.i):
                if t.startswith("$((", self.i) or t.startswith("((", self.i):
                    self.skip_balanced("((", "))")
                    continue
                if c == ")" and in_pattern:
                    in_pattern = False
                self.i += 2 if t.startswith("$(", self.i) else 1
                first, for_header = True, False
                continue
            if c in "<>" or (c.isdigit() and t[self.i + 1:self.i + 2] in ("<", ">")):
                if t.startswith("<<", self.i) and not t.startswith("<<<", self.i):
                    self.i += 2
                    m = re.match(r"-?\s*(['\"]?)([A-Za-z_][A-Za-z_0-9]*)\1", t[self.i:])
                    if m:
                        self.heredocs.append(m.group(2))
                        self.i += m.end()
                    continue
                while self.i < len(t) and t[self.i] in "0123456789<>&|":
                    self.i += 1
                self.word()  # the file name
                continue
            line, w = self.line, self.word()
            if in_pattern:
                continue
            if w == "case":
                case_depth += 1
            elif w == "esac":
                case_depth -= 1
                in_pattern = False
                continue
            elif w == "in" and case_depth and not for_header:
                in_pattern = True
                first = False
                continue
            if w in ("for", "select"):
                for_header = True
            elif w == "do":
                for_header = False
            is_assign = first and re.match(r"^[A-Za-z_][A-Za-z_0-9]*(\[[^]]*\])?\+?=", w)
            if is_assign:
                if t.startswith("(", self.i):
                    self.skip_balanced("(", ")")
                continue
            if first and skip_next:
                skip_next -= 1
                continue
            yield line, w, first and not for_header
            if first and w in WRAP_SKIP:
                skip_next = WRAP_SKIP[w]
            first = first and w in REENTER

    def word(self):
        """Reads one word, following quotes; command substitutions inside it are lexed as commands."""
        t, out = self.t, []
        while self.i < len(t) and t[self.i] not in " \t\n;&|()<>`":
            c = t[self.i]
            if c == "'":
                j = t.find("'", self.i + 1)
                j = len(t) if j < 0 else j
                out.append(t[self.i:j + 1])
                self.line += t.count("\n", self.i, j)
                self.i = j + 1
            elif c == '"':
                self.i += 1
                start = self.i
                while self.i < len(t) and t[self.i] != '"':
                    if t[self.i] == "\\":
                        self.i += 1
                    elif t.startswith("$(", self.i) and not t.startswith("$((", self.i):
                        self.nested("$(")
                        continue
                    elif t[self.i] == "\n":
                        self.line += 1
                    self.i += 1
                out.append('"' + t[start:self.i] + '"')
                self.i += 1
            elif c == "\\":
                out.append(t[self.i:self.i + 2])
                self.i += 2
            elif t.startswith("${", self.i):
                self.skip_balanced("{", "}", offset=1)
                out.append("${}")
            elif t.startswith("$(", self.i):
                if t.startswith("$((", self.i):
                    self.skip_balanced("((", "))", offset=1)
                else:
                    self.nested("$(")
                out.append("$()")
            else:
                out.append(c)
                self.i += 1
        return "".join(out)

    def nested(self, open_):
        """Lexes a $( ... ) inside a word or quotes as its own command list."""
        self.i += len(open_)
        depth, start = 1, self.i
        j = self.i
        while j < len(self.t) and depth:
            if self.t[j] == "(":
                depth += 1
            elif self.t[j] == ")":
                depth -= 1
            j += 1
        sub = Lexer(self.t[start:j - 1])
        sub.line = self.line
        self.found.extend(sub.collect())
        self.line += self.t.count("\n", start, j)
        self.i = j

    def skip_balanced(self, open_, close, offset=0):
        t = self.t
        self.i += offset
        depth = 0
        while self.i < len(t):
            if t.startswith(open_, self.i):
                depth += 1
                self.i += len(open_)
                continue
            if t.startswith(close, self.i):
                depth -= 1
                self.i += len(close)
                if depth == 0:
                    return
                continue
            if t[self.i] == "\n":
                self.line += 1
            self.i += 1

    def skip_heredocs(self):
        lines = self.t[self.i:].split("\n")
        k = 0
        for tag in self.heredocs:
            while k < len(lines) and lines[k].strip() != tag:
                k += 1
            k += 1
        consumed = "\n".join(lines[:k])
        self.i += len(consumed) + (1 if k < len(lines) else 0)
        self.line += k
        self.heredocs = []

    def collect(self):
        out = list(self.words())  # fills self.found as it meets $( ... )
        return self.found + out


def functions_in(text):
    names = set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z_0-9-]*)\s*\(\)", text, re.M))
    names |= set(re.findall(r"^\s*function\s+([A-Za-z_][A-Za-z_0-9-]*)", text, re.M))
    return names


def wrapper_skips(text):
    """Functions that run "$@" after `shift`ing N arguments: their (N+1)-th argument is a command."""
    out = {}
    for m in re.finditer(r"^\s*([A-Za-z_][A-Za-z_0-9]*)\s*\(\)\s*\{([^\n]*)$", text, re.M):
        body = m.group(2)
        if not re.search(r"\}\s*(#.*)?$", body):  # a body over several lines, to the closing brace
            end = re.search(r"^\}", text[m.end():], re.M)
            body = text[m.end():m.end() + (end.start() if end else 0)]
        if re.search(r'(^|[;{\s])"\$@"', body):
            out[m.group(1)] = len(re.findall(r"\bshift\b", body.split('"$@"')[0]))
    return out


def scan_texts(src, files):
    """(file, line, shell text) for every shell text of the given files."""
    for path in files:
        rel = os.path.relpath(path, src)
        text = open(path, encoding="utf-8", errors="replace").read()
        if path.endswith(".py"):
            for m in re.finditer(r"subprocess\.\w+\(\s*\[\s*\"([^\"]+)\"", text):
                yield rel, text.count("\n", 0, m.start()) + 1, m.group(1), "exec"
        elif path.endswith(".txt"):
            for n, line in enumerate(text.split("\n"), 1):
                m = re.match(r"^(run|setup|check):\s?(.*)$", line)
                if m:
                    yield rel, n, m.group(2), "sh"
        elif path.endswith("CMakeLists.txt"):
            for m in re.finditer(r"add_test\s*\(\s*NAME\s+\S+\s+COMMAND\s+(\S+)", text):
                yield rel, text.count("\n", 0, m.start()) + 1, m.group(1), "exec"
        else:
            yield rel, 1, text, "sh"


def files_to_scan(src):
    files = []
    for d, _, names in os.walk(os.path.join(src, "tests")):
        for n in names:
            if n.endswith((".sh", ".bash", ".py")) or n == "CMakeLists.txt" or \
               (n.endswith(".txt") and re.search(r"^(run|setup):", open(os.path.join(d, n), errors="replace").read(), re.M)):
                files.append(os.path.join(d, n))
    files.append(os.path.join(src, ".ci", "run"))
    # the scripts the tests name, transitively
    seen = set(files)
    queue = list(files)
    while queue:
        path = queue.pop()
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue  # this check names scripts in its own text
        text = re.sub(r"(?m)^\s*#.*$", "", open(path, errors="replace").read())  # not the comments
        for m in re.finditer(r"scripts/([A-Za-z0-9_.-]+\.(?:sh|py))", text):
            p = os.path.join(src, "scripts", m.group(1))
            if os.path.isfile(p) and p not in seen:
                seen.add(p)
                files.append(p)
                queue.append(p)
    return sorted(files)


def main():
    src = os.path.abspath(sys.argv[1])
    allowed = read_programs(src)
    files = [os.path.abspath(f) for f in sys.argv[2:]] or files_to_scan(src)
    texts = list(scan_texts(src, files))
    funcs, wraps = set(), {}
    for _, _, text, kind in texts:
        if kind == "sh":
            funcs |= functions_in(text)
            wraps.update(wrapper_skips(text))
    bad = []
    for rel, base, text, kind in texts:
        if kind == "exec":
            cmds = [(0, text)]
        else:
            cmds = [(ln - 1, w) for ln, w in shell_commands_wrapped(text, wraps)]
        lines = text.split("\n")
        for off, w in cmds:
            if kind == "sh" and 0 <= off < len(lines) and "not-run-by-tests:" in lines[off]:
                continue  # a branch the tests never take, with its reason on the line
            w = w.strip("'\"")
            if not w or w[0] in "$\"'-=" or "/" in w or "$" in w or w in BUILTINS or w in funcs:
                continue
            if w.endswith((".sh", ".py")) or PROJECT.match(w) or w.isdigit():
                continue
            if w not in allowed:
                bad.append(f"{rel}:{base + off}: calls '{w}', which scripts/programs.txt does not list "
                           f"(so scripts/install-deps.sh does not install it)")
    for b in bad:
        print(b)
    print(f"programs: {len(files)} files scanned, {len(allowed)} programs allowed, {len(bad)} not installed")
    return 1 if bad else 0


def shell_commands_wrapped(text, wraps):
    """Command words, and the command a wrapper function (expect_exit CODE CMD...) runs."""
    items = Lexer(text).collect()
    out = []
    k = 0
    while k < len(items):
        line, w, first = items[k]
        if first:
            out.append((line, w))
            if w in wraps:
                j = k + 1 + wraps[w]
                if j < len(items) and items[j][0] == line:
                    out.append((line, items[j][1]))
        k += 1
    return out


if __name__ == "__main__":
    sys.exit(main())
