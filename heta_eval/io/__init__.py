"""Runs and judgments in and out: TREC run and qrels files, BEIR results JSON, DataFrames and
ranx objects, read by one grammar (trec_eval's) into the types every evaluator takes."""
