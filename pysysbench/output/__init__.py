"""Reports of a run as sysbench prints them: the 1.0.20 text byte for byte, the 0.5 text and
JSON, chosen through one registry (``--output-format``); the face decides banner and
defaults, this layer only renders a run's records.
"""
