"""onnxperf.ui"""
