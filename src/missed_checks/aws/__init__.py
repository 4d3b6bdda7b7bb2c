"""Thin boto3 adapters: the only modules that talk to AWS."""
