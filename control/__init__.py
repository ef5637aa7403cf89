"""The machine: screen capture, input execution, emergency stop, safety policy. No Qt."""
