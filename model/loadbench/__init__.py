"""The load benchmark: how many desktops one server keeps busy (generated frames, chart)."""
