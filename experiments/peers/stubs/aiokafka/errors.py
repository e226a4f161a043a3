class ConsumerStoppedError(Exception):
    pass
