"""Other agents' logs: the transcript model, each format's importer (whole file or line by
line), replay into a memory root, and `follow` of a live log."""
