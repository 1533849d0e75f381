"""index.yaml and the chunk files: the index's text format, its scanner and reader, the
derived catalog, and the chunk and pending evidence files beside it."""
