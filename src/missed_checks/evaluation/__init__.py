"""Evaluation: planning which occurrence windows to judge, judging them, and the missed checks it writes."""
