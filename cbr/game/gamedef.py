"""Game definitions: the rules of one fixed-limit (or no-limit) hold'em table, as data.

Seats are *positions in the hand*, 0..n-1, as ACPC numbers them: the order in which
players are listed for that hand. ``blinds[i]`` is what position ``i`` posts and
``first_to_act[street]`` the position that opens each betting round. Presets cover
the usual layouts:

>>> g = preset("holdem.limit.2p")            # ACPC heads-up, reverse blinds
>>> g.blinds, g.first_to_act, g.bet_size(0), g.bet_size(3)
((10.0, 5.0), (1, 0, 0, 0), 10.0, 20.0)
>>> preset("casper.9p").n_players
9
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Literal

from cbr.errors import ConfigError, counted

STREETS = ("preflop", "flop", "turn", "river")
#: Board cards showing on each street, and the street a board of that size means.
BOARD_SIZES = (0, 3, 4, 5)
STREET_OF_BOARD = {size: street for street, size in enumerate(BOARD_SIZES)}
# Live tables and bots use 2 to 10 seats; real IRC logs have 11- and 12-handed hands, so
# the rules allow up to 12 to read them.
MAX_SEATS = 12
#: The largest amount of chips a game may name (a blind, an ante, a bet size, a stack): sums of
#: such amounts stay exact in a float (below 2**53).
MAX_CHIPS = 10**15
Betting = Literal["limit", "nolimit"]


@dataclass(frozen=True)
class GameDef:
    """Rules of one table. Validated on construction; raises :class:`ConfigError`.

    - ``blinds``: chips posted by each position before the cards (len == n_players).
    - ``small_bet`` / ``big_bet``: fixed bet size pre-flop+flop / turn+river (limit).
    - ``raise_cap``: the most bets/raises (``r`` actions) allowed per street, ACPC style;
      the big blind is not counted (ACPC limit: 3 4 4 4).
    - ``first_to_act``: position that acts first on each street.
    - ``betting``: ``"limit"`` or ``"nolimit"`` (amounts kept, mapped to bet/raise).
    - ``stack``: starting stack per player for no-limit (None = unlimited).

    Every amount is a finite number of chips of at most :data:`MAX_CHIPS`:

    >>> GameDef("x", 2, (float("nan"), 5), 10, 20, first_to_act=(1, 0, 0, 0))
    Traceback (most recent call last):
    cbr.errors.ConfigError: game 'x': blind nan is not a number of chips (finite, at most 1e+15)
    """

    name: str
    n_players: int
    blinds: tuple[float, ...]
    small_bet: float
    big_bet: float
    raise_cap: tuple[int, int, int, int] = (3, 4, 4, 4)
    first_to_act: tuple[int, int, int, int] = (2, 0, 0, 0)
    betting: Betting = "limit"
    stack: float | None = None
    antes: tuple[float, ...] = field(default=())

    def __post_init__(self) -> None:
        n = self.n_players
        if not 2 <= n <= MAX_SEATS:
            raise ConfigError(f"game {self.name!r}: {counted(n, 'player')}; tables here seat 2 to {MAX_SEATS}")
        chips = self._chips
        object.__setattr__(self, "blinds", tuple(chips("blind", b) for b in self.blinds))
        object.__setattr__(self, "small_bet", chips("small_bet", self.small_bet))
        object.__setattr__(self, "big_bet", chips("big_bet", self.big_bet))
        object.__setattr__(self, "raise_cap", tuple(int(c) for c in self.raise_cap))
        object.__setattr__(self, "first_to_act", tuple(int(p) for p in self.first_to_act))
        object.__setattr__(self, "antes", tuple(chips("ante", a) for a in self.antes) or (0.0,) * n)
        if self.stack is not None:
            chips("stack", self.stack)  # checked; kept as given
        if len(self.blinds) != n or len(self.antes) != n:
            raise ConfigError(f"game {self.name!r}: blinds and antes need one entry per player ({n})")
        if any(b < 0 for b in self.blinds) or any(a < 0 for a in self.antes):
            raise ConfigError(f"game {self.name!r}: blinds and antes cannot be negative")
        if self.small_bet <= 0 or self.big_bet <= 0:
            raise ConfigError(f"game {self.name!r}: bet sizes must be positive")
        if len(self.raise_cap) != 4 or any(c < 1 for c in self.raise_cap):
            raise ConfigError(f"game {self.name!r}: raise_cap needs four values >= 1")
        if len(self.first_to_act) != 4 or any(not 0 <= p < n for p in self.first_to_act):
            raise ConfigError(f"game {self.name!r}: first_to_act needs four positions in 0..{n - 1}")
        if self.betting not in ("limit", "nolimit"):
            raise ConfigError(f"game {self.name!r}: betting must be 'limit' or 'nolimit'")

    def _chips(self, what: str, value: object) -> float:
        """``value`` as a float of chips; NaN, infinities and amounts over :data:`MAX_CHIPS`
        (which every comparison would let through, or a float cannot hold) are refused."""
        try:
            x = float(value)  # type: ignore[arg-type]
        except OverflowError:
            x = math.inf
        if not math.isfinite(x) or abs(x) > MAX_CHIPS:
            raise ConfigError(f"game {self.name!r}: {what} {x:g} is not a number of chips "
                              f"(finite, at most {MAX_CHIPS:.0e})")
        return x

    @property
    def big_blind(self) -> float:
        """The largest blind (the unit of mbb/h and of no-limit amounts)."""
        return max(self.blinds) if any(self.blinds) else self.small_bet

    def bet_size(self, street: int) -> float:
        """Fixed bet of a limit street: small bet pre-flop and flop, big bet turn and river."""
        return self.small_bet if street < 2 else self.big_bet

    def with_players(self, n_players: int) -> "GameDef":
        """The same structure for another table size (standard blind layout)."""
        return standard_table(self.name, n_players, self.blinds_pair(), self.small_bet, self.big_bet,
                              self.raise_cap, betting=self.betting, stack=self.stack)

    def blinds_pair(self) -> tuple[float, float]:
        """(small blind, big blind) as posted in this layout."""
        posted = sorted((b for b in self.blinds if b > 0))
        if not posted:
            return (0.0, 0.0)
        return (posted[0], posted[-1]) if len(posted) > 1 else (0.0, posted[0])

    def to_dict(self) -> dict:
        """Plain data for manifests and log headers; :meth:`from_dict` reads it back."""
        return {
            "name": self.name, "n_players": self.n_players, "blinds": list(self.blinds),
            "small_bet": self.small_bet, "big_bet": self.big_bet, "raise_cap": list(self.raise_cap),
            "first_to_act": list(self.first_to_act), "betting": self.betting, "stack": self.stack,
            "antes": list(self.antes),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "GameDef":
        """Inverse of :meth:`to_dict`; raises :class:`ConfigError` on missing or bad fields.

        >>> GameDef.from_dict({"name": "x"})
        Traceback (most recent call last):
        ...
        cbr.errors.ConfigError: bad game definition {'name': 'x'}: missing 5 fields: n_players, blinds, small_bet, big_bet, first_to_act
        """
        if not isinstance(data, dict):
            raise ConfigError(f"bad game definition {data!r}: not a JSON object of fields")
        missing = [k for k in ("name", "n_players", "blinds", "small_bet", "big_bet", "first_to_act") if k not in data]
        if missing:
            raise ConfigError(f"bad game definition {data!r}: missing "
                              f"{counted(len(missing), 'field')}: {', '.join(missing)}")
        try:
            return cls(
                name=str(data["name"]), n_players=int(data["n_players"]), blinds=tuple(data["blinds"]),
                small_bet=float(data["small_bet"]), big_bet=float(data["big_bet"]),
                raise_cap=tuple(data.get("raise_cap", (3, 4, 4, 4))),
                first_to_act=tuple(data["first_to_act"]), betting=data.get("betting", "limit"),
                stack=data.get("stack"), antes=tuple(data.get("antes", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"bad game definition {data!r}: {exc}") from None

    @classmethod
    def from_acpc_game(cls, text: str, name: str = "acpc") -> "GameDef":
        """Read an ACPC ``.game`` definition (the ``GAMEDEF ... END GAMEDEF`` block).

        Only hold'em structures are accepted (4 rounds, 2 hole cards, board 0 3 1 1, a
        standard deck); ``firstPlayer`` is 1-based in the file. Raises :class:`ConfigError`.

        >>> g = GameDef.from_acpc_game('''GAMEDEF
        ... limit
        ... numPlayers = 2
        ... numRounds = 4
        ... blind = 10 5
        ... raiseSize = 10 10 20 20
        ... firstPlayer = 2 1 1 1
        ... maxRaises = 3 4 4 4
        ... numSuits = 4
        ... numRanks = 13
        ... numHoleCards = 2
        ... numBoardCards = 0 3 1 1
        ... END GAMEDEF''')
        >>> g == preset("holdem.limit.2p").replace(name="acpc")
        True
        """
        fields: dict[str, list[str]] = {}
        betting: str | None = None
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line or line.upper() in ("GAMEDEF", "END GAMEDEF"):
                continue
            low = line.lower()
            if low in ("limit", "nolimit"):
                betting = low
                continue
            # "key = values" or, as the reference dealer's reader also takes, "key values"
            key, _, value = re.sub(r"[\s=]+", " ", line, count=1).partition(" ")
            if not value.strip():
                raise ConfigError(f"ACPC game {name!r}: cannot read line {raw.strip()!r}")
            fields[key.strip().lower()] = value.split()

        def ints(key: str, default: list[int] | None = None) -> list[int]:
            if key.lower() not in fields:
                if default is None:
                    raise ConfigError(f"ACPC game {name!r}: missing {key}")
                return default
            try:
                return [int(v) for v in fields[key.lower()]]
            except ValueError:
                raise ConfigError(f"ACPC game {name!r}: {key} must be integers") from None

        if betting is None:
            raise ConfigError(f"ACPC game {name!r}: betting type (limit or nolimit) missing")
        n = ints("numPlayers")[0]
        if ints("numRounds")[0] != 4 or ints("numHoleCards", [2])[0] != 2 \
                or ints("numBoardCards", [0, 3, 1, 1])[:4] != [0, 3, 1, 1] \
                or ints("numSuits", [4])[0] != 4 or ints("numRanks", [13])[0] != 13:
            raise ConfigError(f"ACPC game {name!r}: not a Texas hold'em structure")
        blinds = ints("blind")[:n]
        first = tuple(p - 1 for p in ints("firstPlayer", [1, 1, 1, 1])[:4])
        caps = ints("maxRaises", [255] * 4)[:4]
        if betting == "limit":
            sizes = ints("raiseSize")[:4]
            if len(sizes) < 4 or sizes[0] != sizes[1] or sizes[2] != sizes[3]:
                raise ConfigError(f"ACPC game {name!r}: raiseSize must be small small big big")
            return cls(name, n, tuple(blinds), sizes[0], sizes[2], tuple(caps), first)  # type: ignore[arg-type]
        stacks = ints("stack", [0])
        if len(set(stacks[:n])) > 1:
            raise ConfigError(f"ACPC game {name!r}: unequal stacks are not supported")
        bb = max(blinds) if blinds else 1
        return cls(name, n, tuple(blinds), bb, bb, tuple(caps), first, "nolimit",  # type: ignore[arg-type]
                   float(stacks[0]) if stacks[0] else None)

    def to_acpc_game(self) -> str:
        """This game as an ACPC ``.game`` text (inverse of :meth:`from_acpc_game`)."""
        def j(values) -> str:
            return " ".join(str(int(v)) if float(v).is_integer() else str(v) for v in values)

        lines = ["GAMEDEF", self.betting, f"numPlayers = {self.n_players}", "numRounds = 4"]
        if self.betting == "nolimit" and self.stack is not None:
            lines.append(f"stack = {j([self.stack] * self.n_players)}")
        lines.append(f"blind = {j(self.blinds)}")
        if self.betting == "limit":
            lines.append(f"raiseSize = {j([self.small_bet, self.small_bet, self.big_bet, self.big_bet])}")
        lines += [f"firstPlayer = {j(p + 1 for p in self.first_to_act)}",
                  f"maxRaises = {j(self.raise_cap)}", "numSuits = 4", "numRanks = 13",
                  "numHoleCards = 2", "numBoardCards = 0 3 1 1", "END GAMEDEF"]
        return "\n".join(lines) + "\n"

    def replace(self, **changes: object) -> "GameDef":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)  # type: ignore[arg-type]


def standard_table(
    name: str,
    n_players: int,
    blinds: tuple[float, float],
    small_bet: float,
    big_bet: float,
    raise_cap: tuple[int, int, int, int] = (3, 4, 4, 4),
    *,
    betting: Betting = "limit",
    stack: float | None = None,
) -> GameDef:
    """A table listed in blind order: position 0 small blind, 1 big blind, n-1 the button.

    Heads-up, position 0 is the small blind *and* the button: it acts first pre-flop and
    last after the flop. With 3+ players position 2 opens pre-flop and position 0 after.
    """
    sb, bb = blinds
    bl = (sb, bb) + (0.0,) * (n_players - 2)
    first = (0, 1, 1, 1) if n_players == 2 else (2 % n_players, 0, 0, 0)
    return GameDef(name, n_players, bl, small_bet, big_bet, raise_cap, first, betting, stack)


PRESETS: dict[str, GameDef] = {
    # ACPC holdem.limit.2p.reverse_blinds.game: first listed player posts the big blind.
    "holdem.limit.2p": GameDef("holdem.limit.2p", 2, (10, 5), 10, 20, (3, 4, 4, 4), (1, 0, 0, 0)),
    # ACPC holdem.limit.3p.game
    "holdem.limit.3p": GameDef("holdem.limit.3p", 3, (5, 10, 0), 10, 20, (3, 4, 4, 4), (2, 0, 0, 0)),
    # ACPC holdem.nolimit.6p (Pluribus logs): blinds 50/100, stacks 10,000
    "holdem.nolimit.6p": GameDef("holdem.nolimit.6p", 6, (50, 100, 0, 0, 0, 0), 100, 100, (99, 99, 99, 99),
                                 (2, 0, 0, 0), "nolimit", 10_000),
    # UofA IRC database: $10/$20 tables, blinds 5/10 (size set per hand by the reader)
    "irc.10-20.2p": standard_table("irc.10-20.2p", 2, (5, 10), 10, 20),
    "irc.10-20.10p": standard_table("irc.10-20.10p", 10, (5, 10), 10, 20),
    # CASPER's tables: 9 players, $10/$20 fixed limit
    "casper.9p": standard_table("casper.9p", 9, (5, 10), 10, 20),
    "casper.2p": standard_table("casper.2p", 2, (5, 10), 10, 20),
}


def irc_table(n_players: int) -> GameDef:
    """A UofA IRC-database $10/$20 fixed-limit table (blinds 5/10) for 2..12 players.

    >>> irc_table(6).name, irc_table(6).blinds[:3], irc_table(6).first_to_act
    ('irc.10-20.6p', (5.0, 10.0, 0.0), (2, 0, 0, 0))
    """
    return standard_table(f"irc.10-20.{n_players}p", n_players, (5, 10), 10, 20)


for _n in range(2, MAX_SEATS + 1):
    PRESETS.setdefault(f"irc.10-20.{_n}p", irc_table(_n))
# limit tables of 4 or more players, named as the ACPC's 3-player game, which they extend
# (blinds 5/10, bets 10/20): the default games of cbr match, cbr play and the dealer
for _n in range(4, MAX_SEATS + 1):
    PRESETS.setdefault(f"holdem.limit.{_n}p", standard_table(f"holdem.limit.{_n}p", _n, (5, 10), 10, 20))
del _n


def preset(name: str) -> GameDef:
    """A preset by name; raises :class:`ConfigError` listing the known names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown game {name!r}; known: {', '.join(sorted(PRESETS))}") from None
