"""What computes a measure: pytrec_eval, or the compiled engine for large inputs, behind one
interface; which one serves a call is decided by one table of size thresholds."""
