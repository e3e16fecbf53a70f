"""Renderers of the docs' generated blocks, one module per area (imported by the registry)."""
