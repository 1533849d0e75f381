"""The Textual inspector and the command line of session-inspector."""
