import sys

from onnxperf.cli import console

sys.exit(console())
