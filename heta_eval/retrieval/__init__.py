"""Retrieval evaluation: ``evaluate_run`` on a run of any form, chunk hits collapsed to
documents, and :class:`BeirRetrievalMetric` for benchmark responses."""
