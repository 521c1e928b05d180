"""pysysbench: a sysbench-compatible OLTP benchmark."""
