"""The modules of ``gang.sim``, in the order they import one another: ``documents``
(inputs and gang-sim's schema) → ``results`` (results, tables, plots, reports) →
``running`` (executors, progress; simulate, compare, experiment) → ``sweeps``. Use them
through ``gang.sim``."""
