"""Placement: a new model's suite score, predicted full scores, ranks and intervals among the
reference models, and whether its run looks like theirs (docs/architecture.md, "The library's
layers"). One benchmark's placement math (:mod:`.benchmark`), the full-score estimators
(:mod:`.estimators`), the placement calibration a build stores (:mod:`.calibration`), the suite
placement (:mod:`.suite`) with its rank among reference models whose missing benchmarks are
imputed (:mod:`.imputation`) and its standing on the OpenVLM leaderboard (:mod:`.standing`), the
misfit check (:mod:`.misfit`), and the ranking of a model's variants (:mod:`.variants`). Their
defaults are defined once, in :mod:`.defaults`."""
