"""tinyformer: the book's NumPy engine (every layer forward and backward, the toy models)."""
