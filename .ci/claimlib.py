"""Reads the claims the course's sources make, for .ci/claims-table and .ci/check-references.

A claim is a call of `tutorial::documented(...)`, `tutorial::documented_error(...)`,
`tutorial::observed(...)`, `tutorial::at_least(...)`, `tutorial::at_most(...)` or a counted one
(common/harness/claim.hpp). Its arguments are split at top-level commas, string literals are
joined, and an argument that is a name is looked up among the file's
`constexpr const char* NAME = "...";` (or `const char* const`) constants and its
`const tutorial::Entry NAME{...};` entries, so a section may name its reference once and use it
for several claims. `normalized()` gives each claim's fields by name, whether the call has an
identifier first (the current form) or not (the form before identifiers).

It also reads the texts the claims cite: `Reference` (the installed headers' doc comments) and
`Guide` (the Programming Guide sections the source documents hold), and `unchecked_of(where)`
says why an entry's text cannot be read here (both .ci/check-references and .ci/claims-table
list those entries as unchecked).
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
# The source documents (../shared/seeds beside the checkout; a worktree further down finds it in
# a folder above): the Programming Guide's sections they hold are read from there.
SEEDS = next((d / "shared" / "seeds" for d in ROOT.parents if (d / "shared" / "seeds").is_dir()),
             ROOT.parent / "shared" / "seeds")


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


ID = re.compile(r"[a-z][a-z0-9_]*")
# The fields of each kind of claim, in order, after its identifier.
FIELDS = {
    "at_least": ("statement", "measured", "threshold", "unit", "if_not"),
    "at_most": ("statement", "measured", "threshold", "unit", "if_not"),
    "counted_at_least": ("statement", "measured", "threshold", "unit", "if_not"),
    "counted_at_most": ("statement", "measured", "threshold", "unit", "if_not"),
    "documented": ("statement", "held", "seen", "if_not", "entry"),
    "documented_error": ("statement", "returned", "expected", "if_not", "entry"),
    "observed": ("statement", "as_before", "seen", "open"),
}


def entry_of(arg, entries):
    """(where, terms, modal) of an Entry argument: Entry{"...", "...", "..."}, {...} or a named
    entry of the file; a plain string (the form before Entry) is its `where` alone."""
    arg = arg.strip()
    if re.fullmatch(r"[A-Za-z_]\w*", arg) and arg in entries:
        return entries[arg]
    m = re.fullmatch(r"(?:tutorial::)?(?:Entry)?\s*\{(.*)\}", arg, re.S)
    if m:
        parts = [literal(a) for a in split_args(m.group(1))]
        parts += [None] * (3 - len(parts))
        return tuple(parts[:3])
    return (literal(arg), None, None)


def entries_in(src):
    found = {}
    for m in re.finditer(r"(?:static\s+)?(?:const\s+)?(?:tutorial::)?Entry\s+(\w+)\s*(?:=\s*)?\{", src):
        body = call_text(src, m.end())
        found[m.group(1)] = entry_of("{" + body + "}", {})
    return found


def claims_in(path):
    """Every claim in a file: kind, arguments (as written and as literal values), line, and its
    fields by name (`fields`): id (None before identifiers), statement, and per kind those of
    FIELDS; a documented claim's entry as `where`, `terms`, `modal`."""
    src = path.read_text()
    constants = constants_in(src)
    entries = entries_in(src)
    for m in CALL.finditer(src):
        kind = m.group(1)
        args = split_args(call_text(src, m.end()))
        line = src.count("\n", 0, m.start()) + 1
        values = [literal(a, constants) for a in args]
        names = FIELDS[kind]
        has_id = (len(args) == len(names) + 1 and values and values[0] is not None
                  and ID.fullmatch(values[0]) is not None)
        fields = {"id": values[0] if has_id else None}
        rest_args, rest_values = (args[1:], values[1:]) if has_id else (args, values)
        for name, a, v in zip(names, rest_args, rest_values):
            fields[name] = v
            fields[name + "_arg"] = a
        if "entry" in names:
            where, terms, modal = entry_of(fields.get("entry_arg", ""), entries) \
                if fields.get("entry_arg") else (None, None, None)
            if where is None and fields.get("entry_arg") in constants:
                where = constants[fields["entry_arg"]]
            fields.update(where=where, terms=terms, modal=modal)
        yield {"kind": kind, "args": rest_args, "values": rest_values, "line": line,
               "file": path, "fields": fields}


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
    """The reference text of the installed toolkit: the doc comments of cuda_runtime_api.h,
    cuda.h and driver_types.h, by function, by enum value or attribute (a comment just before the
    value, or a `/**< ... */` after it), and by module (`\\defgroup NAME Title`: by its title)."""

    HEADERS = ("cuda_runtime_api.h", "cuda.h", "driver_types.h")

    def __init__(self, include_dir):
        self.include_dir = include_dir
        self.entries = {}   # functions
        self.values = {}    # enum values and attributes
        self.modules = {}   # module titles ("Unified Addressing"): the Runtime API's
        self.driver_modules = {}  # ... and the Driver API's (cuda.h)
        for name in self.HEADERS:
            path = include_dir / name
            if not path.exists():
                continue
            text = path.read_text(errors="replace")
            text = re.sub(r"^[ \t]*#.*$", "", text, flags=re.M)  # #if defined(__cplusplus) ...
            for m in re.finditer(r"/\*\*(.*?)\*/([^(]*)\(", text, re.S):
                comment, head = m.group(1), m.group(2)
                # The declaration right after the comment: words, no other comment or statement.
                d = re.fullmatch(r"\s*(?:[\w*]+\s+)*\**((?:cuda|cu)[A-Z]\w*)\s*", head)
                if d and "/*" not in head:
                    self.entries.setdefault(d.group(1), comment)
            for m in re.finditer(r"/\*\*(?!<)(.*?)\*/\s*(\w+)\s*(?:=[^,}/]*)?[,}]", text, re.S):
                if re.fullmatch(r"(cuda|CU|CUDA_|cu)\w+", m.group(2)):
                    self.values.setdefault(m.group(2), m.group(1))
            for m in re.finditer(r"\b(\w+)\s*(?:=[^,}/\n]*)?,?[ \t]*/\*\*<(.*?)\*/", text, re.S):
                if re.fullmatch(r"(cuda|CU|CUDA_|cu)\w+", m.group(1)):
                    self.values.setdefault(m.group(1), m.group(2))
            for m in re.finditer(r"/\*\*(.*?)\*/", text, re.S):
                g = re.search(r"\\defgroup\s+\w+\s+([^\n]+)", m.group(1))
                if g:
                    modules = self.driver_modules if name == "cuda.h" else self.modules
                    modules.setdefault(g.group(1).strip(), m.group(1))

    def text_of(self, name, driver=False):
        """The doc comment of a function, enum value, attribute or module (the Driver API's
        modules where `driver`), or None."""
        modules = self.driver_modules if driver else self.modules
        for table in (self.entries, self.values, modules):
            if name in table:
                return table[name]
        return None

    def all_texts(self):
        for table in (self.entries, self.values):
            yield from table.items()
        for title, text in self.modules.items():
            yield "Runtime API module " + title, text
        for title, text in self.driver_modules.items():
            yield "Driver API module " + title, text

    def lists(self, entry, code):
        # An error code's own entry ("This indicates that ...") is the text of its case.
        if entry == code and self.text_of(entry) is not None:
            return True
        comment = self.text_of(entry) or ""
        return re.search(r"::" + re.escape(code) + r"\b", comment) is not None


class Guide:
    """The Programming Guide's sections the source documents hold: N.x (Unified Memory), E.x
    (Virtual Memory Management), and the sections on unified virtual addressing and IPC."""

    def __init__(self, seeds):
        self.sections = {}
        if not seeds.is_dir():
            return
        for path in sorted(seeds.glob("*.txt")):
            text = path.read_text(errors="replace")
            if path.name.startswith("000_"):
                cut = text.find("To share device memory pointers")
                self.sections["Unified Virtual Address Space"] = text[:cut]
                self.sections["Interprocess Communication"] = text[cut:]
                continue
            heads = list(re.finditer(r"^\s*#*\s*([NE](?:\.\d+)+)\.\s+[^\n]*$", text, re.M))
            for i, h in enumerate(heads):
                number = h.group(1)
                end = len(text)
                for later in heads[i + 1:]:
                    if not later.group(1).startswith(number + "."):
                        end = later.start()
                        break
                self.sections.setdefault(number, text[h.start():end])

    def text_of(self, section):
        m = re.match(r"([NE](?:\.\d+)+)\b", section)
        if m:
            return self.sections.get(m.group(1))
        for title, text in self.sections.items():
            if section.startswith(title):
                return text
        return None


def unchecked_of(where, guide=None):
    """Why `where`'s text cannot be read here, or None: for .ci/claims-table."""
    if where.startswith("Programming Guide, "):
        guide = guide or Guide(SEEDS)
        if guide.text_of(where[len("Programming Guide, "):]) is None:
            return "the source documents do not hold this Guide section"
        return None
    if where.startswith(("POSIX", "Linux man page")):
        return "its text is not among the sources read here"
    return None
