"""CLI tier: `session-inspector` as a real subprocess (commands, mistakes, output, import, recall,
serve, the demo, the docs' samples)."""
