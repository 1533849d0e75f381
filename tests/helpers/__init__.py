"""Helpers the tests share. Plain modules, not test modules: a test module imports from here (or
gets a fixture from tests/conftest.py), never from another test module, so moving or deleting
one test file cannot break another (tests/guards/test_test_layout.py checks this)."""
