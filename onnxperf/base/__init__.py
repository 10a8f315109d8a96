"""onnxperf.base"""
