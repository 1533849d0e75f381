"""The tab views: each a `SessionView` (session_view.py) the app attaches the session on
display to, reloaded when its data changed and it is on screen."""
