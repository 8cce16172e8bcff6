"""The records every evaluator shares: benchmark cases, knowledge-base responses, scores,
and the evaluator protocol."""
