"""The runtime models of a decoder's KV cache (:mod:`onnxperf.predict.serving` applies them): here alone,
so that a command's parser lists them (``--kv-runtime``) without loading the cost rules."""

#: as the exported graph moves the cache: the past concatenated with the new token every step
EXPORTED = "exported"
#: as serving runtimes keep it: read once, the new token written
IN_PLACE = "in-place"
KV_RUNTIMES = (EXPORTED, IN_PLACE)
#: how each model is said in the outputs
KV_RUNTIME_TEXT = {
    EXPORTED: "as exported: each step concatenates the past cache with the new token and reads the copies "
              "(as onnxruntime runs the file)",
    IN_PLACE: "in place (serving runtimes: vLLM, TensorRT-LLM, onnxruntime-genai with a shared buffer): "
              "the cache read once, the new token written",
}

#: the KV-cache precisions ``--kv-precision`` takes (names of :data:`onnxperf.predict.precision.PRECISIONS`)
KV_PRECISIONS = ("fp32", "fp16", "bf16", "fp8", "int8", "fp4")

__all__ = ["EXPORTED", "IN_PLACE", "KV_PRECISIONS", "KV_RUNTIMES", "KV_RUNTIME_TEXT"]
