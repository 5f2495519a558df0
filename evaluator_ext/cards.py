"""Cards as ints 0..51 (``rank*4 + suit``; rank 0 = deuce .. 12 = ace; suits c, d, h, s).

Public entry points accept "card-like" input and clean it once here:

>>> parse_cards("AhKd")
(50, 45)
>>> parse_cards("Ah Kd") == parse_cards(["Ah", "Kd"]) == parse_cards([50, 45])
True
>>> cards_str((50, 45))
'AhKd'
>>> combo_index(0, 1), combo_index(50, 51)
(0, 1325)
"""
from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from typing import Union

from evaluator_ext.errors import InvalidCardError

RANKS = "23456789TJQKA"
SUITS = "cdhs"
N_CARDS = 52
N_COMBOS = 1326  # two-card holdings, C(52, 2)

CardLike = Union[str, int, Iterable[Union[str, int]]]

#: Text of each card number: ``CARD_NAMES[50] == 'Ah'``.
CARD_NAMES: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)
#: The one card lookup table of the project: two-character card text in any letter case
#: (``'Ah'``, ``'ah'``, ``'AH'``, ``'aH'``) -> card number. Log parsers index it directly
#: (their fast path); :func:`parse_card` is the checked entry point for everything else.
CARD_OF_TEXT: dict[str, int] = {
    rank + suit: i * 4 + j
    for i, r in enumerate(RANKS) for j, s in enumerate(SUITS)
    for rank in dict.fromkeys((r, r.lower())) for suit in dict.fromkeys((s, s.upper()))
}


def card_rank(card: int) -> int:
    """Rank 0 (deuce) .. 12 (ace) of a card number."""
    return card >> 2


def card_suit(card: int) -> int:
    """Suit 0..3 (c, d, h, s) of a card number."""
    return card & 3


def _number(value: object, what: str) -> int:
    """An int (numpy ints too; never a bool, a float or an array) or InvalidCardError."""
    if not isinstance(value, (bool, str)):  # numpy bools have no __index__
        try:
            return operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
    raise InvalidCardError(f"{what} must be an int, got {value!r}")


def card_str(card: int) -> str:
    """Text of one card number: ``card_str(51) == 'As'``."""
    card = _number(card, "a card number")
    if not 0 <= card < N_CARDS:
        raise InvalidCardError(f"card number {card} is out of range 0..51")
    return RANKS[card >> 2] + SUITS[card & 3]


def cards_str(cards: Iterable[int], sep: str = "") -> str:
    """Text of several card numbers, joined by ``sep``."""
    try:
        items = list(cards)
    except TypeError:
        raise InvalidCardError(f"not a sequence of card numbers: {cards!r}") from None
    return sep.join(card_str(c) for c in items)


def parse_card(text: str | int) -> int:
    """One card from text (``'Ah'``, ``'td'``, ``'10h'``) or an int 0..51.

    >>> parse_card("Ah"), parse_card("td"), parse_card("10H"), parse_card(3)
    (50, 33, 34, 3)
    """
    if isinstance(text, bool):
        raise InvalidCardError(f"not a card: {text!r}")
    if isinstance(text, int) or hasattr(text, "__index__") and not isinstance(text, str):
        value = _number(text, "a card number")  # numpy integers too; arrays are refused
        if not 0 <= value < N_CARDS:
            raise InvalidCardError(f"card number {value} is out of range 0..51")
        return value
    if not isinstance(text, str):
        raise InvalidCardError(f"not a card: {text!r}")
    t = text.strip()
    if t.startswith("10"):
        t = "T" + t[2:]
    card = CARD_OF_TEXT.get(t)
    if card is None:
        raise InvalidCardError(f"unknown card {text!r} (expected rank 2-9TJQKA and suit cdhs, e.g. 'Ah')")
    return card


def _split_text(text: str) -> list[str]:
    compact = "".join(text.replace(",", " ").split())
    compact = compact.replace("10", "T")
    if len(compact) % 2:
        pair = _marked_pair(compact)
        if pair is not None:
            raise pair
        raise InvalidCardError(f"cannot split {text!r} into cards (odd number of characters)")
    return [compact[i : i + 2] for i in range(0, len(compact), 2)]


def _marked_pair(text: str) -> InvalidCardError | None:
    """The error of a pair written with a suited/offsuit mark (``77s``), or None for any other text:
    a pair's two cards are never of one suit, and its class is written without a mark (``77``).

    >>> print(_marked_pair("77s"))
    '77s' is no hand: a pair cannot be suited (the pair's class is 77); give cards as rank and suit, e.g. 7h7s
    >>> _marked_pair("72s") is None
    True
    """
    t = text.strip()
    if len(t) != 3 or t[0].upper() not in RANKS or t[0].upper() != t[1].upper() or t[2].lower() not in "so":
        return None
    rank, why = t[0].upper(), ("cannot be suited" if t[2].lower() == "s" else "takes no 'o' mark")
    return InvalidCardError(f"{t!r} is no hand: a pair {why} (the pair's class is {rank * 2}); give cards as rank "
                            f"and suit, e.g. {rank}h{rank}s")


def hand_class(text: object) -> str | None:
    """The pre-flop class a text names (``'72o'``, ``'AKs'``, ``'QQ'``; ranks in any order and
    letter case), or None when it names none: a class is not a holding (no suits).

    >>> hand_class("72o"), hand_class("27O"), hand_class("kAs"), hand_class("qq"), hand_class("7h2c")
    ('72o', '72o', 'AKs', 'QQ', None)
    """
    if not isinstance(text, str):
        return None
    t = text.strip()
    if len(t) not in (2, 3) or t[0].upper() not in RANKS or t[1].upper() not in RANKS:
        return None
    hi, lo = sorted((RANKS.index(t[0].upper()), RANKS.index(t[1].upper())), reverse=True)
    kind = t[2:].lower()
    if hi == lo:
        return RANKS[hi] * 2 if kind == "" else None
    return RANKS[hi] + RANKS[lo] + kind if kind in ("s", "o") else None


def class_example(name: str) -> str:
    """One holding of the class ``name`` (as :func:`hand_class` gives it), as text.

    >>> class_example("72o"), class_example("AKs"), class_example("QQ")
    ('7h2c', 'AhKh', 'QhQc')
    """
    return f"{name[0]}h{name[1]}{'h' if name[2:] == 's' else 'c'}"


def unmarked_classes(text: object) -> tuple[str, str] | None:
    """The two classes a text of two different ranks without a suited/offsuit mark stands
    between (``'AK'``: ``('AKs', 'AKo')``; ranks in any order and letter case), or None for
    any other text: such a text is no holding (no suits) and no class (whose numbers differ,
    suited or not).

    >>> unmarked_classes("AK"), unmarked_classes("9t"), unmarked_classes("AA"), unmarked_classes("AKs")
    (('AKs', 'AKo'), ('T9s', 'T9o'), None, None)
    """
    if not isinstance(text, str):
        return None
    t = text.strip()
    if len(t) != 2 or t[0].upper() == t[1].upper():
        return None
    name = hand_class(t + "s")
    return None if name is None else (name, name[:2] + "o")


def no_suits(text: str, classes: tuple[str, str], *, class_taken: bool, field: str | None = None) -> InvalidCardError:
    """The error of an unmarked class (``'AK'``, :func:`unmarked_classes`): where a class is
    taken too (``cbr hand`` before the flop), it names the two classes and a holding to
    type; elsewhere the holding only. ``field``: the input it is about (:class:`CBRError`).

    >>> print(no_suits("AK", ("AKs", "AKo"), class_taken=True))
    'AK' is no holding and no class: say suited or offsuit, AKs or AKo, or give two cards with their suits, e.g. AhKc
    >>> print(no_suits("AK", ("AKs", "AKo"), class_taken=False))
    'AK' has no suits: give two cards with their suits, e.g. AhKc
    """
    example = class_example(classes[1])
    if class_taken:
        return InvalidCardError(f"{text.strip()!r} is no holding and no class: say suited or offsuit, {classes[0]} "
                                f"or {classes[1]}, or give two cards with their suits, e.g. {example}", field=field)
    return InvalidCardError(f"{text.strip()!r} has no suits: give two cards with their suits, e.g. {example}",
                            field=field)


def _not_a_holding(text: str, name: str) -> InvalidCardError:
    kind = "a pair" if len(name) == 2 else "suited" if name[2] == "s" else "offsuit"
    return InvalidCardError(f"{text.strip()!r} is a hand class ({name}, {kind}), not a holding: give two cards "
                            f"with their suits, e.g. {class_example(name)}")


def parse_cards(cards: CardLike, *, allow_empty: bool = True) -> tuple[int, ...]:
    """Clean card-like input into a tuple of distinct card numbers.

    Accepts ``"AhKd"``, ``"Ah Kd"``, ``["Ah", "Kd"]``, ``[50, 45]`` or a numpy array.
    Raises :class:`InvalidCardError` (a ``ValueError``) for unknown cards or duplicates; for
    a hand class (``"72o"``) it says that a class is not a holding.

    >>> parse_cards("72o")
    Traceback (most recent call last):
    evaluator_ext.errors.InvalidCardError: '72o' is a hand class (72o, offsuit), not a holding: give two cards with their suits, e.g. 7h2c
    """
    if cards is None:
        out: tuple[int, ...] = ()
    elif isinstance(cards, str):
        try:
            out = tuple(parse_card(t) for t in _split_text(cards))
        except InvalidCardError:
            name = hand_class(cards)
            if name is not None:
                raise _not_a_holding(cards, name) from None
            classes = unmarked_classes(cards)
            if classes is not None:
                raise no_suits(cards, classes, class_taken=False) from None
            raise
    elif isinstance(cards, int) and not isinstance(cards, bool):
        out = (parse_card(cards),)
    else:
        try:
            items = list(cards)  # type: ignore[arg-type]
        except TypeError:
            raise InvalidCardError(f"not a card or a sequence of cards: {cards!r}") from None
        parsed: list[int] = []
        for item in items:
            if isinstance(item, str) and len(item.strip()) > 2 and not item.strip().startswith("10"):
                parsed.extend(parse_card(t) for t in _split_text(item))
            else:
                parsed.append(parse_card(item))
        out = tuple(parsed)
    if not out and not allow_empty:
        raise InvalidCardError("no cards given")
    check_distinct(out)
    return out


def check_distinct(cards: Sequence[int]) -> None:
    """Raise :class:`InvalidCardError` naming the first card that appears twice."""
    seen: set[int] = set()
    for c in cards:
        if c in seen:
            raise InvalidCardError(f"card {card_str(c)} appears twice")
        seen.add(c)


def parse_hole_and_board(
    hole: CardLike, board: CardLike = (), *, board_sizes: Sequence[int] = (0, 3, 4, 5)
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Clean a two-card hole and a board, checking sizes and that no card repeats. An error's
    ``field`` is the input it is about (``hole``, ``board``, or both for a card in both), so
    each front end names its option (``cbr query ... (--board)``).

    >>> parse_hole_and_board("AdQc", "3h4cJh")
    ((49, 40), (6, 8, 38))
    >>> try:
    ...     parse_hole_and_board("AdQc", "3h4c")
    ... except InvalidCardError as exc:
    ...     print(exc.fields, exc)
    ('board',) board must have 0, 3, 4 or 5 cards, got 2
    """
    h = _parsed(hole, "hole")
    b = _parsed(board, "board")
    if len(h) != 2:
        raise InvalidCardError(f"hole must be exactly 2 cards, got {len(h)}", field="hole")
    if len(b) not in board_sizes:
        sizes = " or ".join(str(s) for s in board_sizes) if len(board_sizes) < 3 else \
            ", ".join(str(s) for s in board_sizes[:-1]) + f" or {board_sizes[-1]}"
        raise InvalidCardError(f"board must have {sizes} cards, got {len(b)}", field="board")
    try:
        check_distinct(h + b)
    except InvalidCardError as exc:
        twice = [c for c in set(h + b) if (h + b).count(c) > 1]
        where = ("hole",) if all(h.count(c) > 1 for c in twice) else \
            ("board",) if all(b.count(c) > 1 for c in twice) else ("hole", "board")
        raise InvalidCardError(str(exc), field=where) from None
    return h, b


def _parsed(cards: CardLike, field: str) -> tuple[int, ...]:
    """:func:`parse_cards`, its error naming ``field``."""
    try:
        return parse_cards(cards)
    except InvalidCardError as exc:
        raise InvalidCardError(str(exc), field=field) from None


def combo_index(a: int, b: int) -> int:
    """Index 0..1325 of the two-card holding {a, b} in weight tables (colex order).

    For ``lo < hi``: ``hi*(hi-1)//2 + lo``.
    """
    a, b = _number(a, "a card number"), _number(b, "a card number")
    lo, hi = (a, b) if a < b else (b, a)
    if lo == hi or not (0 <= lo and hi < N_CARDS):
        raise InvalidCardError(f"not a two-card holding: {a}, {b}")
    return hi * (hi - 1) // 2 + lo


def combo_cards(index: int) -> tuple[int, int]:
    """Inverse of :func:`combo_index`."""
    index = _number(index, "a combo index")
    if not 0 <= index < N_COMBOS:
        raise InvalidCardError(f"combo index {index} is out of range 0..1325")
    hi = 1
    while (hi + 1) * hi // 2 <= index:
        hi += 1
    return index - hi * (hi - 1) // 2, hi
