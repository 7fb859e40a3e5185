"""``evalset plan power`` and ``plan cost``: how many queries a set needs (:mod:`~evalset.planning.plan`, the
power of a pilot's comparisons) and what judging them costs (:mod:`~evalset.planning.budget`: pairs, annotator
hours, LLM tokens); what each is asked, its rules declared once: :mod:`~evalset.planning.spec`."""
