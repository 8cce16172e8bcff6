"""The LLM judge: the evaluator, its reply cache and its token and cost accounting."""
