"""The project's single exception base class.

It lives here, in the bottom layer, because ``evaluator_ext`` imports nothing else of
ours; ``cbr.errors`` re-exports it and adds the engine's subclasses.
"""


from typing import Optional, Union


class CBRError(Exception):
    """Base class of every error this project raises on purpose.

    ``field``: the input the error is about, by its name in the library (a parameter such
    as ``"pot"``), or a tuple of them when it is about their combination. The message names
    no option or request field: each front end names its own for the field, in one place
    (the command line ``--pot``: ``cbr.cli._errors``; the HTTP server ``'pot'``:
    ``cbr.serve.app``).

    >>> e = CBRError("the pot cannot be negative, got -3", field="pot")
    >>> str(e), e.field, e.fields
    ('the pot cannot be negative, got -3', 'pot', ('pot',))
    >>> CBRError("bad", field=("to_call", "committed")).fields, CBRError("bad").field
    (('to_call', 'committed'), None)
    """

    #: Every input the error is about (empty: none in particular).
    fields: tuple[str, ...] = ()

    def __init__(self, *args: object, field: Union[str, tuple[str, ...], None] = None) -> None:
        super().__init__(*args)
        if field is not None:
            self.fields = (field,) if isinstance(field, str) else tuple(field)

    @property
    def field(self) -> Optional[str]:
        """The (first) input the error is about, or None."""
        return self.fields[0] if self.fields else None


class InvalidCardError(CBRError, ValueError):
    """Card text or a card number that does not name a card, or a card given twice.

    >>> try:
    ...     raise InvalidCardError("unknown card 'Xx'")
    ... except ValueError as e:
    ...     str(e)
    "unknown card 'Xx'"
    """


class EvaluatorValueError(CBRError, ValueError):
    """A bad evaluator argument that is not a card (weights, n_opponents, trials, array shape...).

    >>> issubclass(EvaluatorValueError, ValueError)
    True
    """
