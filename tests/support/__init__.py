"""Test helpers: real servers and builders the tests share (no mocks that cannot fail)."""
