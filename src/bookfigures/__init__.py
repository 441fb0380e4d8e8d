"""bookfigures: the book's matplotlib figures in one house style."""
