"""Measures as values: every spelling parsed once into a :class:`Measure`, the trec_eval 9.0.8
catalogue, and the two ways to average over queries (BEIR's and trec_eval ``-c``'s)."""
