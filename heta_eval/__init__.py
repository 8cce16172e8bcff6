"""heta-eval."""
