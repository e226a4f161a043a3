# type-name stand-in for ray (peers test only)
