"""etude: an open training stack for agentic coding models, built on PyTorch."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("etude")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+source"
