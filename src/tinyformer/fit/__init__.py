"""Deterministic scripts that fit the toy models and write their checkpoints under params/."""
