"""Chat: prompt, writers, output guard, events."""
