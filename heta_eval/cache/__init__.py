"""The on-disk cache of built indexes, embeddings and pair scores: its entries, keyed by what
built them (:mod:`.store`), and the lock of one entry, which says who holds it and how far the
holder got (:mod:`.lock`). Where the cache lives: :mod:`heta_eval.config`.
"""
