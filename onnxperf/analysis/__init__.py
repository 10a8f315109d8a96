"""onnxperf.analysis"""
