"""onnxperf.cost"""
