print("flowctl: not built yet")
