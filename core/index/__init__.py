"""index.yaml and the chunk files: the index's text format and scanner (pure), its reader and
cache, the derived catalog (every write of the index), its one freshness stamp, and the chunk
and pending evidence files beside it."""
