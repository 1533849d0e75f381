"""Guards: the project's layout checked from its source (the import graph, function length, the
docs against the code, the test suite's own layout)."""
