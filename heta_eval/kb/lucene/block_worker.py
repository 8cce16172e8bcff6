"""A BM25 indexing worker process: ``python -m heta_eval.kb.lucene.block_worker`` serves
blocks (:mod:`.blocks`) on stdin/stdout until stdin closes. A module of its own, imported by
nothing, so that running it loads :mod:`.blocks` under its own name (results pickle as its
classes, not ``__main__``'s)."""

from heta_eval.kb.lucene.blocks import main

if __name__ == "__main__":
    main()
