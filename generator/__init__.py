"""The ML Training Failure Encyclopedia generator: content/ YAML in, a static site out."""

__version__ = "0.1.0"
