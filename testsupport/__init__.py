"""What the tests and the benchmarks share, so that neither imports the other: the loopback
OpenAI-compatible server with its faults (``fake_openai``, ``loopback``), the sample reports
(``reports``), the labelled replies (``edits``), the test oracles (``checks``, ``reviewed``), the
llama.cpp metrics sampler and the headless browser. Not shipped in the wheel.
"""
