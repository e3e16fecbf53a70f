"""The ``zkconsumer`` command line: one module per family of verbs."""
