"""The Textual inspector: the app that composes (app.py), the session on display and its
reloads, key routing, actions, the read models of the tabs, `views/` (one per tab) and
`widgets/` (the smaller components), `screens/` (modals) and `styles/`."""
