"""onnxperf.insights"""
