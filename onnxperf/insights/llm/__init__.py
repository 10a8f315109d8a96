"""Decoder LLMs: recognize a decode step with a KV cache in the exported graph, and answer the
deployment questions from it (KV-cache bytes, prefill and decode speed, the context that fits)."""

from onnxperf.insights.llm.recognize import CacheTensor, DecoderStep, NotRecognized, Overrides, recognize

__all__ = ["CacheTensor", "DecoderStep", "NotRecognized", "Overrides", "recognize"]
