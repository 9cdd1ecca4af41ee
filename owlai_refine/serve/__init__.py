"""Talking to model servers: one chat request (``call``), its retries (``retry``), the
endpoints and the routing between them (``endpoints``, ``routing``), the request fields an
endpoint may refuse (``droppable``, ``priority``, ``prediction``), record/replay
(``cassette``), the adaptive cap (``adaptive``), and everything asked of a server but chat in
one module (``server``: ``/v1/models``, ``/metrics``, ``/tokenize``; ``metrics`` parses the
Prometheus text). ``local`` is the embedded llama.cpp server. Nothing is imported here: each
module loads on first use.
"""
