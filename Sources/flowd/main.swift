print("flowd: not built yet")
