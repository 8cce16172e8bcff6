"""What computes a measure: each engine behind one interface (:mod:`.provider`), one module
per engine (:mod:`.pytrec`, :mod:`.compiled` over :mod:`.engine`), and one place that picks
the engine for a call's measures and size (:mod:`.backends`)."""
