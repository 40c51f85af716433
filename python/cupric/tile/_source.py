"""Reading a kernel's source for the compiler: the function's lines and AST, where each node
sits in its file, and CompileError, which points at a line with a caret."""

import ast
import functools
import inspect
import linecache
import textwrap

SUPPORTED = (
    "supported in tile kernels: assignments (also to tuples), arithmetic, comparison and boolean operators, "
    "calls to ct.* and @ct.function helpers, `for ... in range(...)` (run-time or constant bounds, "
    "values carried across iterations), `for ... in ct.static_range(...)` (unrolled), if/else on scalars, "
    "`x if c else y`, tuples and compile-time constants"
)


class CompileError(Exception):
    """A kernel that cannot be compiled, with the place in its source."""

    __module__ = "cupric.tile"  # its public name in tracebacks: cupric.tile.CompileError

    def __init__(self, message, filename="<unknown>", lineno=0, col=0, source_line="", notes=()):
        self.reason = message
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.source_line = source_line
        self.notes = list(notes)
        super().__init__(self._text())

    def _text(self):
        text = f"{self.filename}:{self.lineno}:{self.col + 1}: {self.reason}"
        if self.source_line:
            line = self.source_line.rstrip("\n")
            stripped = line.lstrip()
            text += f"\n    {stripped}\n    {' ' * max(self.col - (len(line) - len(stripped)), 0)}^"
        for n in self.notes:
            text += f"\n  {n}"
        return text


def _function_lines(fn):
    """The source lines of a function and its first line number: from its first decorator to the
    last line indented deeper than its `def` (a fast path that skips inspect's tokenizer); None
    when that block does not look complete (the caller then asks inspect)."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    start = code.co_firstlineno
    if not lines or start > len(lines):
        return None
    first = lines[start - 1]
    indent = len(first) - len(first.lstrip())
    end, depth, in_body = start, 0, False
    for i in range(start - 1, len(lines)):
        text = lines[i]
        stripped = text.strip()
        if in_body and stripped and not stripped.startswith("#") and len(text) - len(text.lstrip()) <= indent:
            break
        if not in_body and stripped.startswith(("def ", "async def ")) or depth > 0:
            depth += stripped.count("(") - stripped.count(")")
            if depth <= 0 and stripped.rstrip().endswith(":"):
                in_body = True
        end = i + 1
    block = lines[start - 1 : end]
    while block and not block[-1].strip():
        block.pop()
    return block, start


class Source:
    """A function's parsed source and where it sits in its file."""

    def __init__(self, fn):
        self.fn = fn
        try:
            found = _function_lines(fn)
            if found is not None:
                try:
                    tree = ast.parse(textwrap.dedent("".join(found[0])))
                except SyntaxError:
                    found = None
            if found is None:
                found = inspect.getsourcelines(fn)
                tree = ast.parse(textwrap.dedent("".join(found[0])))
            lines, start = found
        except (OSError, TypeError) as err:
            raise CompileError(
                f"cannot read the source of {fn.__qualname__} (tile kernels must be defined in a file): {err}"
            ) from err
        self.lines = lines
        self.first_line = start
        self.col0 = len(lines[0]) - len(lines[0].lstrip())
        self.filename = fn.__code__.co_filename
        fdef = tree.body[0]
        if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise CompileError(f"{fn.__qualname__} is not a plain function definition", self.filename, start)
        self.fdef = fdef
        self.globals = fn.__globals__
        self._fn = fn

    @property
    def closure(self):
        """The closure variables' values now (the source is cached; the values may change)."""
        out = {}
        fn = self._fn
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__, strict=True):
                try:
                    out[name] = cell.cell_contents
                except ValueError:
                    pass
        return out

    def where(self, node):
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + self.col0
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return self.filename, self.first_line + line - 1, col, text


_SOURCES = {}


def source_of(fn):
    src = _SOURCES.get(fn)
    if src is None:
        src = _SOURCES[fn] = Source(fn)
    return src


def user_facing(method):
    """Re-raises a CompileError from `method` without cupric's own frames: the user sees the line
    that launched the kernel and the message that points into the kernel, as Triton and JAX show."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except CompileError as err:
            # the compiler's own exception stays reachable as err.internal_cause (for debugging cupric)
            err.internal_cause, err.__cause__, err.__suppress_context__ = err.__cause__, None, True
            raise err.with_traceback(None)  # noqa: B904 - the same error, its internal frames cut

    return wrapper
