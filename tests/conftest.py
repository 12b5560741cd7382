"""Shared test set-up. Fixtures for the fake model server live in tests/fakeserver."""
