"""What a suite's items say about models (docs/architecture.md, "The library's layers"), four
subjects: **validation** — does a selection rank held-out models like the full benchmark
(``protocols``, ``splits``, ``validate``, ``estimators``); **placement** — a new model's
predicted full scores, ranks and intervals among the reference models, and whether its run looks
like theirs (``placement``, ``suite_placement``, ``calibration``, ``leaderboard_standing``,
``person_fit``); **adaptive testing** — items chosen per model, round by round (``adaptive``,
``local_gaussian``, ``adaptive_validation``); **variant ranking** — which LoRA variants a suite
can tell apart (``variants``). Their defaults are defined once, in ``defaults``."""
