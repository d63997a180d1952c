"""Put this folder's sitecustomize on PYTHONPATH (``memlife run`` does) to
install memlife's Python hooks in programs that never import memlife."""
