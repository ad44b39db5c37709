"""Errors that name the argument they are about, so that each front end says it its own way.

The library checks its arguments and raises :class:`ArgumentError`, which
keeps the argument's name, the item of a list argument, and what is wrong
apart from each other. ``str()`` spells the names as Python does
(``special_tokens[1]``); the command line renders the same error with its
options (``--special #2``) by :meth:`ArgumentError.spelled`, without reading
the sentence. Advice inside a message that names other arguments
(``pass trust_pattern=True``) is an :class:`Advice` part, which a front end
may say in its own words.

Messages about the contents of a file are not argument errors: they name the
file and its fields, whatever the front end (``'m.json' is corrupt: merges[0] must ...``).
"""

from __future__ import annotations

from typing import Callable, NamedTuple


class Advice(NamedTuple):
    """A piece of a message that tells the caller what to pass, as Python spells it
    (``text``, or ``key`` itself when ``text`` is None). ``key`` names it for a front end
    that says it otherwise: an argument (``"pretokenize"``), an argument set to a value
    (``"trust_pattern=True"``), or a phrase about the Python API (``"custom regex"``).

    >>> str(Advice("trust_pattern=True")), str(Advice("custom regex", "a compiled regex"))
    ('trust_pattern=True', 'a compiled regex')
    """

    key: str
    text: str | None = None

    def __str__(self) -> str:
        return self.key if self.text is None else self.text


#: How a front end spells an argument (its name and the item of a list, or None) ...
NameSpelling = Callable[[str, "int | None"], str]
#: ... and a piece of advice.
AdviceSpelling = Callable[[Advice], str]


def python_name(argument: str, index: int | None) -> str:
    """An argument as Python names it: ``vocab_size``, ``special_tokens[1]``."""
    return argument if index is None else f"{argument}[{index}]"


class InputError(ValueError):
    """Input that the library refuses, in one line made of ``parts``: strings and
    :class:`Advice`. ``str()`` says the advice as Python does; a front end renders it
    with :meth:`spelled`.

    >>> error = InputError("a.txt is not UTF-8 (only ", Advice("pretokenize=None"),
    ...                    " reads any bytes)")
    >>> str(error)
    'a.txt is not UTF-8 (only pretokenize=None reads any bytes)'
    >>> error.spelled(advice=lambda advice: "--pretokenize none")
    'a.txt is not UTF-8 (only --pretokenize none reads any bytes)'
    """

    def __init__(self, *parts: str | Advice):
        self.parts = parts
        super().__init__(self.spelled())

    def spelled(self, name: NameSpelling = python_name, advice: AdviceSpelling = str) -> str:
        """The message, each :class:`Advice` said by ``advice(part)``."""
        return "".join(part if isinstance(part, str) else advice(part) for part in self.parts)

    def __reduce__(self):  # errors cross process pools: keep the parts
        return (_rebuild, (type(self), self.parts, {}))


class ArgumentError(InputError):
    """A bad value of an argument of a public function, in one line that names it.

    ``argument`` is the parameter's name (``"vocab_size"``), ``index`` the item
    of a list argument (``special_tokens[1]``), and ``parts`` what follows the
    name. A first part that starts with a colon or a comma follows the name
    directly, any other after a space.

    >>> error = ArgumentError("special_tokens", "must be a non-empty str, got ''", index=1)
    >>> str(error)
    "special_tokens[1] must be a non-empty str, got ''"
    >>> error.spelled(lambda name, index: f"--special #{index + 1}")
    "--special #2 must be a non-empty str, got ''"
    >>> str(ArgumentError("max_memory", ": '4x' is not a memory size"))
    "max_memory: '4x' is not a memory size"
    """

    def __init__(self, argument: str, *parts: str | Advice, index: int | None = None):
        self.argument = argument
        self.index = index
        super().__init__(*parts)

    def spelled(self, name: NameSpelling = python_name, advice: AdviceSpelling = str) -> str:
        """The message, the argument spelled by ``name(argument, index)`` and each
        :class:`Advice` by ``advice(part)``."""
        text = super().spelled(advice=advice)
        subject = name(self.argument, self.index)
        return subject + (text if text[:1] in (":", ",", "") else " " + text)

    def __reduce__(self):
        return (_rebuild, (type(self), (self.argument, *self.parts), {"index": self.index}))


def parts_of(error: BaseException) -> tuple:
    """What a message that wraps ``error`` goes on with: its parts (an argument error's
    name spelled as Python does: inside a file, it is the file's field), else its text.

    >>> parts_of(ArgumentError("merges", "must be >= 0", index=2))
    ('merges[2] ', 'must be >= 0')
    >>> parts_of(ValueError("bad"))
    ('bad',)
    """
    if isinstance(error, ArgumentError):
        first = error.parts[0] if error.parts else ""
        separator = "" if isinstance(first, str) and first[:1] in (":", ",", "") else " "
        return (python_name(error.argument, error.index) + separator, *error.parts)
    if isinstance(error, InputError):
        return error.parts
    return (str(error),)


def _rebuild(kind, args, keywords):
    return kind(*args, **keywords)


class MissingPackage(ArgumentError, ImportError):
    """An argument that needs a package that is not installed: ``plot`` needs matplotlib (an
    ImportError too).

    >>> isinstance(MissingPackage("plot", ": needs matplotlib"), ImportError)
    True
    """
