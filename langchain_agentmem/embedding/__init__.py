"""Text to vectors: the bundled sentence-transformers model, its int8 ONNX twin, packing.

Above :mod:`langchain_agentmem.text` (a record is embedded with its sentences).
"""
