"""onnxperf.products"""
