"""onnxperf.predict"""
