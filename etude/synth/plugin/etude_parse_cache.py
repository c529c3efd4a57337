"""A pytest plugin (loaded with `-p etude_parse_cache`) that parses each source file once
when pytest formats failure reports.

pytest's long and short tracebacks find each frame's statement by parsing the frame's
whole file (`_pytest._code.source.getstatementrange_ast`), again for every frame of every
failing test: on a 6000-line test module, seconds per run when a deletion fails a dozen
tests. Here the parse is cached by the file's text, so reports are the same text, only
sooner. Where pytest's internals differ (another version), nothing is changed.
"""

import ast
import contextlib
import functools
import warnings

try:
    from _pytest._code import code as _code
    from _pytest._code import source as _source
except ImportError:  # not the pytest this was written against: leave it alone
    _code = _source = None


@functools.lru_cache(maxsize=16)
def _parsed(text):
    with warnings.catch_warnings():  # as pytest does: no duplicate warnings from compiling
        warnings.simplefilter("ignore")
        return ast.parse(text, "source", "exec")


def _install():
    original = getattr(_source, "getstatementrange_ast", None)
    if original is None or getattr(_code, "getstatementrange_ast", None) is not original:
        return

    @functools.wraps(original)
    def getstatementrange_ast(lineno, source, assertion=False, astnode=None):
        if astnode is None:
            with contextlib.suppress(SyntaxError):  # pytest's own parse raises it, as before
                astnode = _parsed(str(source))
        return original(lineno, source, assertion, astnode)

    _source.getstatementrange_ast = getstatementrange_ast
    _code.getstatementrange_ast = getstatementrange_ast


if _source is not None:
    _install()
