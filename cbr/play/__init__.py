"""Playing: one table loop for every table, and what grows from play.

- :mod:`cbr.play.table`: the hand loop (deal, ask each seat, settle) shared by the match
  runner, the ACPC dealer and the human table.
- :mod:`cbr.play.match`: matches between policies, duplicate replay, results with CIs.
- :mod:`cbr.play.human`: a person at the table in a terminal.
- :mod:`cbr.play.retention`: the case base grows from the hands played.
- :mod:`cbr.play.measure`: duplicate measurements and paired comparisons for experiments.
- :mod:`cbr.play.selfplay`: self-play logs of the rule bots, for builds at scale.
"""
