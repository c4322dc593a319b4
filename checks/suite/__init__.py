"""The checker suite: a pure function from a conversation and options to findings.

No Django here: the suite runs the same in a worker, in a test and from the command line
(`python -m checks.suite FILE`).
"""
