"""How the server's answers name a case's source log: never by a path on the server.

A case base built from a log given by an absolute path labels its cases with that path
(``cbr build /data/logs/2p.log``); one built from a relative path, as the shipped ones are,
with the relative label (``casebases/selfplay/hu-simbot-lag.log``). The CLI shows the label as
it is. An HTTP answer (``/casebases/{name}``, ``/retrieve``, ``/reuse``, the web table's
explanations) shows an absolute label as the shortest tail of its path components that no
other source of the same case base ends with: its file's name, unless another source has the
same name (``r0/2p.log`` and ``r1/2p.log``). Relative labels are shown as they are.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Iterable, Mapping


def _absolute(label: str) -> bool:
    return PurePosixPath(label).is_absolute() or PureWindowsPath(label).is_absolute()


def _parts(label: str) -> list[str]:
    path = PureWindowsPath(label) if PureWindowsPath(label).is_absolute() and "\\" in label else PurePosixPath(label)
    return [p for p in path.parts if p != path.anchor]


def shown_labels(labels: Iterable[str]) -> dict[str, str]:
    """Each of a case base's source labels -> the label an HTTP answer shows.

    >>> shown = shown_labels(["/srv/a/r0/2p.log", "/srv/a/r1/2p.log", "/srv/b/3p.log", "rel/x.log"])
    >>> [shown[k] for k in ("/srv/a/r0/2p.log", "/srv/a/r1/2p.log", "/srv/b/3p.log", "rel/x.log")]
    ['r0/2p.log', 'r1/2p.log', '3p.log', 'rel/x.log']
    """
    labels = list(dict.fromkeys(str(x) for x in labels))
    parts = {x: _parts(x) for x in labels}
    tails: Counter[str] = Counter()  # how many labels end with each tail of components
    for x in labels:
        for k in range(1, len(parts[x]) + 1):
            tails["/".join(parts[x][-k:])] += 1
    out = {}
    for x in labels:
        if not _absolute(x):
            out[x] = x
            continue
        p = parts[x]
        out[x] = next(("/".join(p[-k:]) for k in range(1, len(p) + 1) if tails["/".join(p[-k:])] == 1),
                      "/".join(p))
    return out


def shown_label(label: Any, shown: Mapping[str, str]) -> Any:
    """``label`` as an HTTP answer shows it (``shown``: :func:`shown_labels` of its case base);
    an absolute label the table lacks (retained since) is shown as its file's name."""
    if not isinstance(label, str) or not _absolute(label):
        return label
    if label in shown:
        return shown[label]
    p = _parts(label)
    return p[-1] if p else label


#: An absolute path inside a sentence: a ``/`` (or a drive's ``C:\\``) that starts a word, up to a
#: space, a quote, a comma, a colon or a bracket (``bet/raise`` is no path: its ``/`` is inside a word).
_PATH_IN_TEXT = re.compile(r"(?<![\w./\\-])(?:/|[A-Za-z]:\\)[^\s'\",:;()\[\]]+")


def shown_text(text: str, shown: Mapping[str, str], named: Mapping[str, str] = {}) -> str:
    """A sentence about a case base (a warning of ``/casebases/{name}``) as an HTTP answer shows
    it: each path of ``named`` (the case base's folder -> its served name) as that name, each
    source label as :func:`shown_label` shows it (``shown``: :func:`shown_labels` of its case
    base), and any other absolute path as its file's name, as a source's is shown.

    >>> shown_text("game '/srv/games/nl' is no-limit: bet/raise sizes are lost", {})
    "game 'nl' is no-limit: bet/raise sizes are lost"
    >>> shown_text("/srv/cb/mine: /srv/a/r0/2p.log holds 3 cases", {"/srv/a/r0/2p.log": "r0/2p.log"},
    ...            {"/srv/cb/mine": "mine"})
    'mine: r0/2p.log holds 3 cases'
    """
    for path in sorted(named, key=len, reverse=True):
        text = text.replace(path, named[path])
    for label in sorted((x for x in shown if _absolute(x)), key=len, reverse=True):
        text = text.replace(label, shown[label])
    return _PATH_IN_TEXT.sub(lambda m: shown_label(m.group(0), {}), text)


def casebase_labels(cb: Any) -> dict[str, str]:
    """:func:`shown_labels` of a case base's sources (its manifest's)."""
    return shown_labels(str(e.get("source", "")) for e in cb.manifest.sources)


def shown_provenance(answer: dict[str, Any], shown: Mapping[str, str]) -> dict[str, Any]:
    """A retrieval's answer (``QueryAnswer.to_dict``) with each case's provenance ``source``
    shown as :func:`shown_label` does; in place, and returned."""
    for case in answer.get("cases") or ():
        prov = case.get("provenance")
        if isinstance(prov, dict) and "source" in prov:
            prov["source"] = shown_label(prov["source"], shown)
    return answer
