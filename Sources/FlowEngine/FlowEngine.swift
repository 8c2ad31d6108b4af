// FlowEngine: placeholder.
