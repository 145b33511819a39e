"""CBAI algorithms, one per module, looked up by name in :mod:`.registry`."""
