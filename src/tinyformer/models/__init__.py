"""The book's toy models, built from tinyformer.nn."""
