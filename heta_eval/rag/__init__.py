"""RAG metrics beyond retrieval: evidence recall, SQuAD answer metrics, context and citation
metrics, the LLM judge, and ``evaluate_responses`` that scores them together."""
