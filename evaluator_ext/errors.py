"""The project's single exception base class.

It lives here, in the bottom layer, because ``evaluator_ext`` imports nothing else of
ours; ``cbr.errors`` re-exports it and adds the engine's subclasses.
"""


class CBRError(Exception):
    """Base class of every error this project raises on purpose."""


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
