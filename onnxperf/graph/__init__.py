"""onnxperf.graph"""
