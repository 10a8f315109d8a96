"""onnxperf.patterns"""
