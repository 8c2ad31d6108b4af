print("flowd-bench: not built yet")
