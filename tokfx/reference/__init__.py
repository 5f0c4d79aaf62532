"""Short pure-Python twins of the Cython cores in ext/; tests compare the two."""
