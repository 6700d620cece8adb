"""Conformance cases that use `assert`: outside the test module, whose asserts pytest
rewrites into calls of its own helpers (test_python_conformance.py runs them)."""


def failed_asserts_raise_assertion_error(x):
    """A failed assert raises AssertionError with its message, which a handler catches."""
    messages = []
    for limit in (3, 0):
        try:
            assert limit > 1, f"limit {limit} too small"
            messages.append("passed")
        except AssertionError as e:
            messages.append(str(e))
    try:
        assert not messages
    except AssertionError as e:
        messages.append(type(e).__name__ + str(e))
    return x * len(messages), messages
