"""Renderers of the docs' generated blocks, one module per area (imported by name by
:mod:`zkconsumer.results.regenerate`)."""
