"""owlai-refine: polish a Markdown report block by block with a chat model."""

from owlai_refine._version import __version__

__all__ = ["__version__"]
