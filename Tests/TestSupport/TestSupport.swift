// TestSupport: placeholder.
