"""onnxperf.shapes"""
