"""Built-in hardware presets: one ``<id>.toml`` per device (data only; read by ``onnxperf.hardware.files``)."""
