"""Reads the claims the course's sources make, for .ci/claims-table and .ci/check-references.

A claim is a call of `tutorial::documented(...)`, `tutorial::documented_error(...)`,
`tutorial::observed(...)`, `tutorial::at_least(...)` or `tutorial::at_most(...)` (common/harness/claim.hpp).
Its arguments are split at top-level commas, string literals are joined, and an argument that is a
name is looked up among the file's `constexpr const char* NAME = "...";` (or `const char* const`)
constants, so a section may name its reference once and use it for several claims.
"""
import os
import pathlib
import re
import shutil

ROOT = pathlib.Path(__file__).resolve().parent.parent
KINDS = ("documented_error", "documented", "observed", "counted_at_least", "counted_at_most",
         "at_least", "at_most")
CALL = re.compile(r"\btutorial::(" + "|".join(KINDS) + r")\(")
CODE = re.compile(r"\b(cudaError[A-Z]\w*|CUDA_ERROR_[A-Z0-9_]+)\b")


def call_text(src, start):
    """The text between the parenthesis at src[start - 1] and its partner."""
    depth, i, quote = 1, start, None
    while i < len(src):
        c = src[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return src[start:i]
        i += 1
    return src[start:]


def split_args(text):
    args, depth, quote, cur, i = [], 0, None, [], 0
    while i < len(text):
        c = text[i]
        if quote:
            cur.append(c)
            if c == "\\":
                cur.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            cur.append(c)
        elif c in "([{":
            depth += 1
            cur.append(c)
        elif c in ")]}":
            depth -= 1
            cur.append(c)
        elif c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        args.append("".join(cur).strip())
    return args


def literal(arg, constants=None):
    """The string an argument spells when it is only literals (or a known constant); else None."""
    arg = arg.strip()
    f = re.match(r"(?:tutorial::)?format\((.*)\)$", arg, re.S)
    if f:
        arg = split_args(f.group(1))[0]
    if constants is not None and re.fullmatch(r"[A-Za-z_]\w*", arg):
        return constants.get(arg)
    out, pos = [], 0
    while True:
        m = re.match(r'\s*"((?:[^"\\]|\\.)*)"', arg[pos:])
        if not m:
            break
        out.append(m.group(1))
        pos += m.end()
    if not out or arg[pos:].strip():
        return None
    return "".join(out).replace('\\"', '"').replace("\\n", " ")


def constants_in(src):
    found = {}
    for m in re.finditer(r"(?:constexpr\s+)?const\s+char\s*\*\s*(?:const\s+)?(\w+)\s*=\s*((?:\s*\"(?:[^\"\\]|\\.)*\")+)\s*;", src):
        found[m.group(1)] = literal(m.group(2))
    return found


def claims_in(path):
    """(kind, statement, other literal arguments by position, line) for every claim in a file."""
    src = path.read_text()
    constants = constants_in(src)
    for m in CALL.finditer(src):
        args = split_args(call_text(src, m.end()))
        line = src.count("\n", 0, m.start()) + 1
        values = [literal(a, constants) for a in args]
        yield {"kind": m.group(1), "args": args, "values": values, "line": line, "file": path}


def statement_of(claim):
    first = claim["args"][0] if claim["args"] else ""
    s = literal(first)
    if s is None:
        return None
    return re.sub(r"%(zu|d|s|llu|\.\d?f)", "N", s)


def source_files():
    files = []
    for chapter in sorted(ROOT.glob("0[1-7]_*")):
        for f in sorted(chapter.rglob("*")):
            if f.suffix in (".cu", ".cpp") and "solutions" not in f.parts:
                files.append(f)
    return files


def cuda_include_dirs():
    dirs = []
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDAToolkit_ROOT"):
        if os.environ.get(var):
            dirs.append(pathlib.Path(os.environ[var]) / "include")
    nvcc = shutil.which("nvcc")
    if nvcc:
        dirs.append(pathlib.Path(nvcc).resolve().parent.parent / "include")
    dirs += [pathlib.Path("/usr/local/cuda/include"),
             pathlib.Path("/usr/local/cuda/targets/x86_64-linux/include")]
    return [d for d in dirs if (d / "cuda_runtime_api.h").exists() and (d / "cuda.h").exists()]


class Reference:
    """The doc comments of the installed toolkit's cuda_runtime_api.h and cuda.h, by function."""

    def __init__(self, include_dir):
        self.include_dir = include_dir
        self.entries = {}
        for name in ("cuda_runtime_api.h", "cuda.h"):
            text = (include_dir / name).read_text(errors="replace")
            text = re.sub(r"^[ \t]*#.*$", "", text, flags=re.M)  # #if defined(__cplusplus) ...
            for m in re.finditer(r"/\*\*(.*?)\*/([^(]*)\(", text, re.S):
                comment, head = m.group(1), m.group(2)
                # The declaration right after the comment: words, no other comment or statement.
                d = re.fullmatch(r"\s*(?:[\w*]+\s+)*\**((?:cuda|cu)[A-Z]\w*)\s*", head)
                if d and "/*" not in head:
                    self.entries.setdefault(d.group(1), comment)

    def lists(self, entry, code):
        comment = self.entries.get(entry, "")
        return re.search(r"::" + re.escape(code) + r"\b", comment) is not None
