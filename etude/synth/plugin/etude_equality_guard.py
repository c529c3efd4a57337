"""A pytest plugin (loaded with `-p etude_equality_guard`) that fails a test in which a
guarded function returns an object claiming to equal anything.

Equality-only tests (`assert expected == f(x)`) are passed by an always-equal object such
as `unittest.mock.ANY`. The grader owns this plugin (it is loaded from etude's tree, never
from the workspace) and wraps the task's deleted public functions, methods and classes,
named in $ETUDE_EQUALITY_GUARD as a JSON list of "module:qualname". A returned value (or,
for methods, the instance) claims equality when it compares equal to a fresh private
sentinel, or not unequal to it; containers are searched a few levels deep. Ordinary
values never do: for them `x == sentinel` falls back to identity. A target that does not
import (the feature is deleted) is skipped. It depends on nothing but pytest.
"""

import contextlib
import functools
import importlib
import inspect
import json
import os
import sys
import threading
import time

import pytest

_violations = []
_MAX_DEPTH = 3
_MAX_ITEMS = 1000
_MAX_SECONDS = 0.05
# Dunders that must not be wrapped: comparison and hashing define what equality is, and
# construction/attribute hooks run too often or too early to wrap safely.
_UNWRAPPED = frozenset(
    [
        "__eq__",
        "__ne__",
        "__hash__",
        "__new__",
        "__init_subclass__",
        "__class_getitem__",
        "__getattr__",
        "__getattribute__",
        "__setattr__",
        "__delattr__",
        "__del__",
        "__reduce__",
        "__reduce_ex__",
        "__getstate__",
        "__setstate__",
        "__dir__",
        "__sizeof__",
    ]
)


class _Sentinel:
    """Equal only to itself; an object equal to one of these is equal to anything."""

    __slots__ = ()


def claims_equality(value, depth=0, budget=None):
    """True when `value`, or an element of a list/tuple/set/dict inside it, compares equal
    to a fresh sentinel (or not unequal to it).

    Bounded: at most _MAX_ITEMS values and _MAX_SECONDS per check (past either, what is
    left counts as no claim), and not re-entrant: guarded callables that the comparison
    itself calls (an `__eq__` that calls `len(self)` or `self.issubset(other)`) run
    unchecked, so a guarded class whose methods call each other cannot recurse."""
    if budget is None:
        budget = [_MAX_ITEMS, time.monotonic() + _MAX_SECONDS]
    budget[0] -= 1
    if budget[0] < 0 or time.monotonic() > budget[1]:
        return False
    sentinel = _Sentinel()
    with _checking():
        try:
            if bool(value == sentinel) or not bool(value != sentinel):
                return True
        except Exception:  # e.g. an array whose truth value is ambiguous: not a claim
            pass
    if depth >= _MAX_DEPTH or isinstance(value, str | bytes):
        return False
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple | set | frozenset):
        items = list(value)
    else:
        return False
    return any(claims_equality(item, depth + 1, budget) for item in items)


class _State(threading.local):
    checking = False


_state = _State()


@contextlib.contextmanager
def _checking():
    previous, _state.checking = _state.checking, True
    try:
        yield
    finally:
        _state.checking = previous


def _guarded(fn, label, check_self):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        if _state.checking:  # called by the guard's own comparison: not an answer's return
            return result
        if claims_equality(result):
            _violations.append(f"{label} returned an object that claims to equal anything")
        elif check_self and args and claims_equality(args[0]):
            _violations.append(f"{label}: the instance claims to equal anything")
        return result

    wrapper.__etude_guarded__ = True
    return wrapper


def _wrap_member(cls, name, label, check_self):
    raw = cls.__dict__[name]
    if isinstance(raw, staticmethod):
        setattr(cls, name, staticmethod(_guarded(raw.__func__, label, False)))
    elif isinstance(raw, classmethod):
        setattr(cls, name, classmethod(_guarded(raw.__func__, label, False)))
    elif isinstance(raw, property) and raw.fget is not None:
        setattr(cls, name, raw.getter(_guarded(raw.fget, label, check_self)))
    elif inspect.isfunction(raw) and not getattr(raw, "__etude_guarded__", False):
        setattr(cls, name, _guarded(raw, label, check_self))


def _wrap_class(cls, label):
    for name in list(cls.__dict__):
        if name not in _UNWRAPPED:
            _wrap_member(cls, name, f"{label}.{name}", check_self=True)


def _resolve(target):
    module_name, _, qualname = target.partition(":")
    try:
        owner = importlib.import_module(module_name)
        *parents, name = qualname.split(".")
        for part in parents:
            owner = getattr(owner, part)
        return owner, name, getattr(owner, name)
    except Exception:  # deleted or broken: the tests fail on their own
        return None


def _install(targets):
    """Wrap every target; top-level functions are replaced wherever a loaded module bound
    them (re-exports in the package's __init__, `from x import f` in test modules)."""
    replaced = {}
    for target in targets:
        found = _resolve(target)
        if found is None:
            continue
        owner, name, obj = found
        if inspect.isclass(obj):
            _wrap_class(obj, target)
        elif inspect.isclass(owner):
            _wrap_member(owner, name, target, check_self=True)
        elif inspect.isfunction(obj) and not getattr(obj, "__etude_guarded__", False):
            replaced[id(obj)] = (obj, _guarded(obj, target, check_self=False))
    _rebind(replaced)
    return replaced


def _rebind(replaced):
    if not replaced:
        return
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for key, value in list(namespace.items()):
            if id(value) in replaced and value is replaced[id(value)][0]:
                namespace[key] = replaced[id(value)][1]


_replaced = {}


def pytest_configure(config):
    targets = json.loads(os.environ.get("ETUDE_EQUALITY_GUARD") or "[]")
    _replaced.update(_install(targets))


def pytest_collection_finish(session):
    # Test modules imported during collection may hold an original bound before the wrap.
    _rebind(_replaced)


def pytest_runtest_logstart(nodeid, location):
    _violations.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if _violations and report.when in ("setup", "call"):
        message = "etude equality guard: " + "; ".join(sorted(set(_violations)))
        _violations.clear()
        report.outcome = "failed"
        report.longrepr = message
