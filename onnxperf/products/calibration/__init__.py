"""Calibration (``onnxperf hw calibrate``): how much of the roofline each op family attains on
this machine, in one package.

* :mod:`.suite`   — the fixed suite of small single-op models;
* :mod:`.fit`     — measured samples -> the efficiency table of a calibrated spec (pure);
* :mod:`.run`     — measuring the suite and the runtime's overhead through onnxruntime;
* :mod:`.command` — the ``hw calibrate`` action of the command line.

Nothing is imported here: ``onnxperf hw list`` and ``--help`` do not pay for onnx and onnxruntime.
"""
